#!/usr/bin/env bash
# Every example's --format json output against the documented schema doc/report.schema.json:
#   tests/json_schema.sh SCHEDPREDICT
# The schedule space is cut to two block shapes and one capped grid so the whole set runs in
# seconds; the output's shape does not depend on the space. Needs python3-jsonschema.
set -u
bin=$1
cd "$(dirname "$0")/.."
py=
for p in /usr/bin/python3 python3; do "$p" -c 'import jsonschema' 2>/dev/null && { py=$p; break; }; done
if [ -z "$py" ]; then
  echo "SKIP: python3-jsonschema is not installed"
  echo "json-schema: 0 passed, 0 failed, 1 skipped"
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
for src in examples/*.c; do
  name=$(basename "$src" .c)
  args=$(grep -m1 '^// schedpredict-args:' "$src" | sed 's|^// schedpredict-args:||')
  if ! eval "\"$bin\" -q --format json --top 3 --block 128,32x8 --gangs 264 \"$src\" $args" > "$tmp/$name.json"; then
    echo "FAIL $name: exit $?"; fail=$((fail + 1))
  fi
done
# the nvc advice goes through the same schema
eval "\"$bin\" -q --format json --compiler nvc --top 1 examples/transpose.c" > "$tmp/transpose-nvc.json" || fail=$((fail + 1))
# and a ranking under --registers (registers_per_thread a number, not null)
eval "\"$bin\" -q --format json --top 1 --block 128,32x8 --registers 40 examples/transpose.c" > "$tmp/transpose-regs.json" || fail=$((fail + 1))
grep -q '"registers_per_thread": 40' "$tmp/transpose-regs.json" || { echo "FAIL: --registers 40 is not in the report"; fail=$((fail + 1)); }
"$py" tests/validate_json.py doc/report.schema.json "$tmp"/*.json || fail=$((fail + 1))
# the schema is not vacuous: a report with vector_length(8) advice or a missing field fails it
python3 - "$tmp/transpose-nvc.json" <<'PY' > "$tmp/broken.json"
import json, sys
d = json.load(open(sys.argv[1]))
d["nests"][0]["advice"]["recommended"]["vector_length"] = 8
print(json.dumps(d))
PY
python3 - "$tmp/transpose-nvc.json" <<'PY' > "$tmp/broken2.json"
import json, sys
d = json.load(open(sys.argv[1]))
del d["nests"][0]["ranking"][0]["counters"]["gld_transactions"]
print(json.dumps(d))
PY
for b in broken broken2; do
  if "$py" tests/validate_json.py doc/report.schema.json "$tmp/$b.json" > /dev/null; then
    echo "FAIL: the schema accepts $b.json"; fail=$((fail + 1))
  fi
done
n=$(ls examples/*.c | wc -l)
echo "json-schema: $((n - fail)) passed, $fail failed"
[ $fail -eq 0 ]
