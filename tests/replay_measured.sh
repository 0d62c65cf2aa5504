#!/usr/bin/env bash
# scripts/replay_measured.py on two small examples against the committed H100 measurements:
# the sections are there, measured candidates match the ranking, a binary compared with itself
# changes no pick, and a missing binary is a clear error.
#   tests/replay_measured.sh SCHEDPREDICT
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 SCHEDPREDICT" >&2; exit 2; }
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; [ -f "$tmp/out" ] && cat "$tmp/out" >&2; exit 1; }

rc=0
python3 scripts/replay_measured.py "$bin" --baseline "$bin" --examples gemm,xreuse \
  --json "$tmp/r.json" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ $rc -eq 0 ] || { cat "$tmp/err" >&2; fail "exit $rc"; }

for section in "== run1: " "== run2: " "== run3: " "== run4: " "== run7: " "== run8: " "== run9: " "== run10: " "== run12: " "== run13: " "== run14: " "== merged: " "picks changed (new vs base): 0 of 2 nests"; do
  grep -qF -- "$section" "$tmp/out" || fail "no '$section' in the output"
done
for row in "matched / measured ok" "pick within 10 % of best" "nvc default / pick, gm" \
  "median Spearman rho (n)"; do
  [ "$(grep -cF -- "$row" "$tmp/out")" -eq 12 ] || fail "'$row' is not in all twelve tables"
done
# every "matched / measured ok" cell is M/N with M > 0 (today M = N: a change of the schedule
# space may leave some measured schedules unmatched, which the script lists, but not all)
cells=$(grep -F "matched / measured ok" "$tmp/out" | grep -oE '[0-9]+/[0-9]+')
[ "$(echo "$cells" | wc -l)" -eq 35 ] || fail "expected 35 matched cells, got: $cells"
for c in $cells; do
  [ "${c%/*}" -gt 0 ] || fail "nothing matched: $c"
done
grep -q "^replay: \[  *[0-9]*/4\] new  gemm" "$tmp/err" || fail "no progress on stderr"
# the merged dataset's time error per bound, once per binary, its counts those of the candidates
[ "$(grep -c "^time error by the bound" "$tmp/out")" -eq 2 ] || fail "no time error per bound for both binaries"
python3 - "$tmp/r.json" "$tmp/out" <<'EOF' || fail "time error per bound"
import json, math, re, sys
r = json.load(open(sys.argv[1]))
cands = [c for n in r["datasets"]["merged"]["rankings"]["new"]["nests"] for c in n["candidates"]]
names = {"DRAM bandwidth", "L2 bandwidth", "L1 throughput", "memory latency",
         "partly written store sectors", "reduction atomics", "blocks without work",
         "floating-point throughput", "floating-point latency"}
assert cands and all(c["bound"] in names for c in cands), {c["bound"] for c in cands}
out = open(sys.argv[2]).read().split("time error by the bound new's")[1].split("\n")[1:]
rows = {}
for line in out:
    m = re.match(r"  (\S.*?)\s+n\s+(\d+)\s+([\d.]+)x\s+([\d.]+)\s+(\d+)/(\d+)$", line)
    if not m:
        break
    rows[m[1]] = (int(m[2]), float(m[3]), int(m[5]))
for b in {c["bound"] for c in cands}:
    errs = sorted(math.log(c["time_us"] / c["pred_us"]) for c in cands if c["bound"] == b)
    n = len(errs)
    med = errs[n // 2] if n % 2 else (errs[n // 2 - 1] + errs[n // 2]) / 2
    assert rows[b][0] == n and abs(rows[b][1] - math.exp(med)) < 6e-4, (b, rows[b], n, math.exp(med))
    assert rows[b][2] == sum(abs(e) <= math.log(1.2) for e in errs), (b, rows[b])
assert sum(v[0] for v in rows.values()) == len(cands), rows
EOF

for r in run5 run6; do
  grep -qF "($r: " "$tmp/out" || fail "$r (reduction nests only) not said to be empty here"
done
# runs 5 and 6 re-measured jacobi.c:18 (the reduction) combined once per block: in "merged" their
# times (and runs 7 and 8's, measured with that harness too) replace runs 1-4's, jacobi.c:27 (no
# reduction) keeps theirs
python3 scripts/replay_measured.py "$bin" --examples jacobi --json "$tmp/j.json" >"$tmp/jout" 2>/dev/null ||
  fail "jacobi: exit $?"
python3 - "$tmp/j.json" <<'EOF' || fail "run5 does not replace the reduction nest in merged"
import json, sys
r = json.load(open(sys.argv[1]))
nests = lambda d: {n["nest"]: n for n in r["datasets"][d]["rankings"]["new"]["nests"]}
merged, run5, run6, run4 = nests("merged"), nests("run5"), nests("run6"), nests("run4")
run7, run8, run9 = nests("run7"), nests("run8"), nests("run9")
m = merged["jacobi.c:18"]
assert m["measured"] <= sum(r["jacobi.c:18"]["measured"] for r in (run5, run6, run7, run8, run9)), m
# GCC's default was 590 us in run 4 (combined per warp), 313 in runs 5 and 6 (per block)
assert run4["jacobi.c:18"]["gcc_default_time_us"] > 500 and m["gcc_default_time_us"] < 400, m
assert merged["jacobi.c:27"]["measured"] > run4["jacobi.c:27"]["measured"]
EOF
python3 - "$tmp/r.json" <<'EOF' || fail "--json"
import json, sys
r = json.load(open(sys.argv[1]))
assert set(r["datasets"]) == {"run1", "run2", "run3", "run4", "run7", "run8", "run9", "run10", "run12",
                              "run13", "run14", "merged"}, r["datasets"].keys()
for name, d in r["datasets"].items():
    for ranker, v in d["rankings"].items():
        s = v["summary"]
        # run12 measured gemm, not xreuse; runs 13 and 14 xreuse, not gemm
        assert s["matched"] > 0 and s["nests_with_pick"] == (1 if name in ("run12", "run13", "run14") else 2), (name, ranker, s)
        assert all("pick_time_us" in n and n["nvc_default_time_us"] for n in v["nests"]), (name, ranker)
    assert d["changed_picks"] == [], (name, d["changed_picks"])
# runs 10-14 (the harness without unrolled lane loops) supersede every candidate they measured:
# xreuse's GCC default in merged is the median of run10's, run13's and run14's, not the median
# with runs 7-9's (198.1, 198.1, 217.6)
nest = lambda d: r["datasets"][d]["rankings"]["new"]["nests"]
x10 = [n for n in nest("run10") if n["nest"] == "xreuse.c:16"][0]
x13 = [n for n in nest("run13") if n["nest"] == "xreuse.c:16"][0]
x14 = [n for n in nest("run14") if n["nest"] == "xreuse.c:16"][0]
xm = [n for n in nest("merged") if n["nest"] == "xreuse.c:16"][0]
three = sorted(x["gcc_default_time_us"] for x in (x10, x13, x14))
assert abs(xm["gcc_default_time_us"] - three[1]) < 1e-9, (xm, three)
EOF

# --duration: the same candidates at CUPTI's gpu__time_duration, which the plans' JSON holds
python3 scripts/replay_measured.py "$bin" --examples xreuse --duration --json "$tmp/d.json" \
  >"$tmp/out" 2>"$tmp/err" || fail "--duration: exit $?"
python3 - "$tmp/d.json" <<'EOF' || fail "--duration reads gpu__time_duration"
import glob, json, sys
d = json.load(open(sys.argv[1]))
c = d["datasets"]["run14"]["rankings"]["new"]["nests"][0]["candidates"][0]
m = json.load(open(glob.glob("validation/results/h100/2026-11-27-l1-miss-run14/measured/xreuse.plan.measured.json")[0]))
durs = [mc["metrics"]["gpu__time_duration.sum"] / 1000 for k in m["kernels"] for mc in k["candidates"]
        if mc.get("status") == "ok"]
assert any(abs(c["time_us"] - t) < 1e-9 for t in durs), (c["time_us"], durs[:5])
EOF

# --registers: himeno's kernels held 48-56 registers in many candidates (blocks of 256: 4 or 5 an
# SM, not 8); those are predicted with them: fewer warps wait longer and share the L1 with fewer
# blocks, so most of their times move by more than 5 %; nearly all others keep their times (a
# few move in or out of the refinement rounds). Whether that is closer to what they measured is the replay's figure, not a test: it
# was on himeno until 2026-11-30, when the cap on a body's loads in flight made himeno's
# register-limited candidates 0.208 mean |log| off with registers and 0.165 without (over all 60
# H100 nests 0.232 and 0.237; on the H200's 119, 0.127 and 0.199).
python3 scripts/replay_measured.py "$bin" --examples himeno --registers --json "$tmp/g.json" \
  >"$tmp/out" 2>"$tmp/err" || fail "--registers: exit $?"
grep -q "^new: [0-9]* candidates register-limited" "$tmp/out" || fail "--registers: no register-limited line"
grep -q "himeno --registers 48" "$tmp/err" || fail "--registers: no run with --registers 48"
python3 - "$tmp/g.json" <<'EOF' || fail "--registers"
import json, sys
r = json.load(open(sys.argv[1]))
cands = [c for n in r["datasets"]["merged"]["rankings"]["new"]["nests"] for c in n["candidates"]]
lim = [c for c in cands if c["register_limited"]]
assert lim and len(lim) < len(cands), len(lim)
assert sum(abs(c["pred_us"] / c["pred_us_without_registers"] - 1) > 0.05 for c in lim) > len(lim) // 2
same = [c for c in cands if not c["register_limited"]]
assert sum(c["pred_us"] != c["pred_us_without_registers"] for c in same) <= len(same) // 20
EOF

# a missing binary: exit 2 and a message naming it
set +e
python3 scripts/replay_measured.py "$tmp/nosuch" --examples xreuse >/dev/null 2>"$tmp/err"
rc=$?
set -e
[ $rc -eq 2 ] || fail "missing binary: exit $rc, expected 2"
grep -q "nosuch: no such executable" "$tmp/err" || fail "missing binary: $(cat "$tmp/err")"
echo "replay_measured: ok"
