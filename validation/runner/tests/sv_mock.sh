#!/usr/bin/env bash
# schedvalidate's process handling end to end, without a GPU: the driver is tests/mock_libcuda.c
# (host memory, kernels that do nothing or fail on purpose by name), NVRTC is real. Checks every
# status (ok, compile_error, launch_error, wrong_result, fault after a signal and after an illegal
# address, timeout, too_large), the restart after a fault (the reference runs again, later
# candidates still compare), a reference that kills its child, --max-kernel-ms, shards,
# --write-arch, the ncu backend (tests/fake_ncu.sh) and "profiling not permitted" being absent.
#   validation/runner/tests/sv_mock.sh SCHEDVALIDATE MOCK_LIBRARY [SCHEDPREDICT]
set -u
bin=$(realpath "$1") mock=$(realpath "$2") sp=${3:+$(realpath "$3")}
cd "$(dirname "$0")/../../.."
plan=tests/inputs/plans/mock_faults.json
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# schedvalidate with the mock driver (its children, ncu included, inherit the environment)
sv() { SCHEDVALIDATE_LIBCUDA=$mock LD_PRELOAD=$mock "$bin" "$@"; }
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

# check FILE PYTHON-ASSERTIONS: m is the measured.json, st(kernel, id) a candidate's status
check() {
  local file=$1 what=$2
  if python3 - "$file" <<PY
import json, sys
m = json.load(open(sys.argv[1]))
K = {k["id"]: {c["id"]: c for c in k["candidates"]} for k in m["kernels"]}
def st(k, i): return K[k][i]["status"]
def msg(k, i): return K[k][i].get("message", "")
$what
PY
  then ok; else bad "assertions on $file"; fi
}

sv "$plan" -o "$tmp/m.json" --no-metrics --repeats 5 --timeout-s 8 --max-kernel-ms 20 \
  --write-arch "$tmp/arch.json" --arch-template arch/h100.json >"$tmp/log" 2>&1
rc=$?
[ $rc -eq 0 ] && ok || { bad "run exit $rc"; tail -20 "$tmp/log"; }
check "$tmp/m.json" '
f = "faults.c:1"
assert [st(f, i) for i in range(10)] == ["ok", "ok", "compile_error", "launch_error", "wrong_result",
    "fault", "ok", "fault", "timeout", "ok"], [st(f, i) for i in range(10)]
assert K[f][1]["result"]["equal"] == "bitwise" and len(K[f][1]["time_us"]["runs"]) == 5
assert "undefined_thing" in msg(f, 2) and "NVRTC (sm_90)" in msg(f, 2)
assert "CUDA_ERROR_INVALID_VALUE" in msg(f, 3) and "grid 4,1,1 block 256,1,1" in msg(f, 3)
assert K[f][4]["result"]["equal"] == "differs" and "array b differs from the reference: first at element 0" in msg(f, 4)
assert "CUDA_ERROR_ILLEGAL_ADDRESS" in msg(f, 5)
assert K[f][6]["result"]["equal"] == "bitwise"          # after the restart the reference ran again
assert "signal 6" in msg(f, 7)
assert "--timeout-s 8" in msg(f, 8)
assert len(K[f][9]["time_us"]["runs"]) == 1 and "timed once" in msg(f, 9)
b = "badref.c:1"
assert [st(b, i) for i in range(3)] == ["fault", "ok", "ok"]
assert "outputs not compared: the reference candidate 0 failed" in msg(b, 1) and "result" not in K[b][1]
h = "huge.c:1"
assert [st(h, i) for i in range(2)] == ["too_large", "too_large"] and "the arrays need 8589934848 bytes of device memory" in msg(h, 0)
assert m["device"]["chip"] == "GH100" and m["timing"]["l2_flushed"] is True
assert m["runner"]["backend"] == "cupti" and m["plan"]["sha256"] and len(m["plan"]["sha256"]) == 64
'
grep -q "\[15/15\] huge.c:1 candidate 1: too_large" "$tmp/log" && ok || bad "progress lines"

# The reference alone kills its child while the runner prepares other candidates' comparison.
sv "$plan" -o "$tmp/r.json" --no-metrics --repeats 5 --kernel badref.c:1 --candidates 1,2 >"$tmp/log2" 2>&1 || bad "badref run"
check "$tmp/r.json" '
b = "badref.c:1"
assert sorted(K[b]) == [1, 2] and st(b, 1) == "ok" and st(b, 2) == "ok"
assert "signal 6" in msg(b, 2) and "while it ran the reference" in msg(b, 2)
'

# Shards: 1/2 and 2/2 together measure every candidate once.
sv "$plan" -o "$tmp/s1.json" --no-metrics --repeats 5 --timeout-s 8 --shard 1/2 >/dev/null 2>&1 || bad "shard 1/2"
sv "$plan" -o "$tmp/s2.json" --no-metrics --repeats 5 --timeout-s 8 --shard 2/2 >/dev/null 2>&1 || bad "shard 2/2"
if python3 - "$tmp/s1.json" "$tmp/s2.json" <<'PY'
import json, sys
seen = []
for f in sys.argv[1:]:
    m = json.load(open(f))
    seen += [(k["id"], c["id"]) for k in m["kernels"] for c in k["candidates"]]
assert len(seen) == 15 and len(set(seen)) == 15, seen
assert json.load(open(sys.argv[2]))["runner"]["shard"] == "2/2"
PY
then ok; else bad "shards"; fi

# The architecture description: measured figures from the device, the rest from the template.
if python3 - "$tmp/arch.json" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))
assert a["sm_count"]["value"] == 132 and a["sm_count"]["source"].startswith("measured: on the device by schedvalidate")
assert a["l1_hit_latency_cycles"]["source"].startswith("measured: this project")
PY
then ok; else bad "arch file"; fi
if [ -n "$sp" ]; then
  if "$sp" --arch "$tmp/arch.json" examples/transpose.c --top 1 >/dev/null 2>"$tmp/sp.err"; then ok
  else bad "schedpredict refuses the written arch: $(head -3 "$tmp/sp.err")"; fi
fi

# The ncu backend: metrics from (fake) ncu's CSV for every candidate that ran.
sv "$plan" -o "$tmp/n.json" --backend ncu --ncu validation/runner/tests/fake_ncu.sh \
  --kernel faults.c:1 --candidates 0,1,2 --repeats 5 >"$tmp/log3" 2>&1 || { bad "ncu run"; tail "$tmp/log3"; }
check "$tmp/n.json" '
f = "faults.c:1"
assert m["runner"]["backend"] == "ncu"
for i in (0, 1):
    mt = K[f][i]["metrics"]
    assert mt["dram__bytes_read.sum"] == 524288 and mt["gpu__time_duration.sum"] == 4510, mt
    assert "lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum" not in mt
assert "metrics" not in K[f][2]
'

# SIGTERM (as Slurm sends at its time limit) while candidate 8 hangs: what was measured is
# written, the rest is skipped, exit 1.
SCHEDVALIDATE_LIBCUDA=$mock LD_PRELOAD=$mock "$bin" "$plan" -o "$tmp/t.json" --no-metrics --repeats 5 --timeout-s 60 --kernel faults.c:1 >"$tmp/log4" 2>&1 &
pid=$!
for _ in $(seq 100); do grep -q "candidate 7:" "$tmp/log4" && break; sleep 0.2; done
sleep 0.5
kill -TERM $pid
wait $pid
rc=$?
[ $rc -eq 1 ] && ok || bad "interrupted run: exit $rc, want 1"
check "$tmp/t.json" '
f = "faults.c:1"
assert [st(f, i) for i in range(8)] == ["ok", "ok", "compile_error", "launch_error", "wrong_result", "fault", "ok", "fault"]
assert st(f, 8) == "skipped" and st(f, 9) == "skipped" and "interrupted" in msg(f, 9)
'

# An existing output is kept without --force.
sv "$plan" -o "$tmp/m.json" --no-metrics >/dev/null 2>&1
[ $? -eq 2 ] && ok || bad "existing output replaced without --force"

echo "sv_mock: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
