#!/usr/bin/env bash
# `schedpredict compare` on the command line: exit codes, messages, formats, -o.
#   tests/compare_cli.sh SCHEDPREDICT
set -u
bin=$1
cd "$(dirname "$0")/.."
d=tests/inputs/compare
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

. tests/expect.sh

expect 0 "usage: schedpredict compare" -- compare --help
expect 0 "measured registers" -- compare --help
expect 2 "give a plan and at least one measurement" -- compare $d/plan.json
expect 2 "unknown option --bogus" -- compare --bogus $d/plan.json $d/measured.json
expect 2 "--format takes text, json or csv, not xml" -- compare --format xml $d/plan.json $d/measured.json
expect 2 "-o needs a value" -- compare $d/plan.json $d/measured.json -o
expect 3 "nosuch.json: cannot read" -- compare $d/nosuch.json $d/measured.json
expect 3 "measured.json: schema: is 'schedpredict-measurements', expected 'schedpredict-plan'" -- compare \
  $d/measured.json $d/plan.json
expect 3 "shard_dup.json: kernels\[0\]\.candidates\[0\]: candidate 2 .* measured twice: here and in .*shard1.json" -- compare \
  $d/plan.json $d/shard1.json $d/shard_dup.json
printf '{"schema": "schedpredict-plan",\n "kernels": [}' >"$tmp/bad.json"
expect 3 "bad.json:2:.*not valid JSON" -- compare "$tmp/bad.json" $d/measured.json
# a wrong result: the report is written, the bug is on stderr, exit 6
expect 6 "candidate 3 .* computed a different result than the reference" -- compare $d/plan.json $d/measured.json
expect 6 "BUG: candidate 3" -- compare $d/plan.json $d/shard1.json $d/shard2.json
# everything measured is ok: exit 0, and a note for the kernels no file measured
expect 0 "R\^2 0.928 \(log-log [0-9.]+\), Spearman rho 0.900" -- compare $d/plan.json $d/measured_matmul.json
expect 0 "note: 5 candidate\(s\) of the plan have no measurement" -- compare $d/plan.json $d/measured_matmul.json
expect 0 "^kernel,candidate,model_rank" -- compare --format csv $d/plan.json $d/measured_matmul.json
expect 0 "\"schema\": \"schedpredict-comparison\"" -- compare --format json $d/plan.json $d/measured_matmul.json
# measured candidates only: nothing ok -> exit 5
python3 - "$d/measured.json" "$tmp/none_ok.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m["kernels"] = [k for k in m["kernels"] if k["id"] == "transpose.c:20"]
m["kernels"][0]["candidates"] = [c for c in m["kernels"][0]["candidates"] if c["status"] == "compile_error"]
json.dump(m, open(sys.argv[2], "w"))
PY
expect 5 "no candidate was measured with status ok" -- compare $d/plan.json "$tmp/none_ok.json"

# --duration: the times from gpu__time_duration.sum (here 1 us less than the events for
# candidate 1, the best, and 20 us more for candidate 3, the pick), or an error where one lacks it
python3 - $d/measured_matmul.json "$tmp/dur.json" "$tmp/nodur.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
for c in m["kernels"][0]["candidates"]:
    if c["id"] == 1:
        c["metrics"]["gpu__time_duration.sum"] = 9000
    if c["id"] == 3:
        c["metrics"]["gpu__time_duration.sum"] = 32000
json.dump(m, open(sys.argv[2], "w"))
del m["kernels"][0]["candidates"][1]["metrics"]["gpu__time_duration.sum"]
json.dump(m, open(sys.argv[3], "w"))
PY
expect 0 "model's pick: candidate 3 \(model rank 1\) 12.00 us, 2nd fastest of 5" -- compare $d/plan.json "$tmp/dur.json"
expect 0 "model's pick: candidate 3 \(model rank 1\) 32.00 us, 3rd fastest of 5 .* candidate 1 \(model rank 2\) 9.00 us" -- \
  compare --duration $d/plan.json "$tmp/dur.json"
expect 0 "gpu__time_duration.sum time" -- compare --duration $d/plan.json "$tmp/dur.json"
expect 3 "nodur.json: kernel 'matmul.c:10' candidate 1: --duration: no gpu__time_duration.sum" -- \
  compare --duration $d/plan.json "$tmp/nodur.json"

# measured from another version of the plan: a warning naming the file
{ cat $d/plan.json; echo; } >"$tmp/plan_v2.json"
expect 0 "measured_matmul.json: warning: plan.sha256: it was measured from another plan than .*plan_v2.json" -- \
  compare "$tmp/plan_v2.json" $d/measured_matmul.json
out=$("$bin" compare $d/plan.json $d/measured_matmul.json 2>&1 >/dev/null)
if grep -q "sha256" <<<"$out"; then fail=$((fail + 1)); echo "FAIL: sha256 warning for the right plan"; else pass=$((pass + 1)); fi

# -o: atomic, an existing file is kept unless --force
expect 0 "" -- compare -o "$tmp/cmp.json" --format json $d/plan.json $d/measured_matmul.json
if python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$tmp/cmp.json"; then
  pass=$((pass + 1))
else
  fail=$((fail + 1)); echo "FAIL: -o wrote no valid JSON"
fi
expect 2 "cmp.json exists; pass --force" -- compare -o "$tmp/cmp.json" $d/plan.json $d/measured_matmul.json
expect 0 "" -- compare --force -o "$tmp/cmp.json" --format csv $d/plan.json $d/measured_matmul.json
if head -1 "$tmp/cmp.json" | grep -q "^kernel,candidate" && [ -z "$(ls "$tmp" | grep tmp)" ]; then
  pass=$((pass + 1))
else
  fail=$((fail + 1)); echo "FAIL: --force did not replace the file, or a temporary file is left"
fi

echo "compare_cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
