#!/usr/bin/env bash
# scripts/model_twins.py on a hand-made comparison: two groups of candidates the model predicts
# alike (measured 100, 110, 125 us: 1.25x; 200 and 200: 1.00x), one candidate alone and one that
# failed (neither counts), then on the tenth H100 run; bad command lines exit 2.
#   tests/model_twins.sh
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; [ -f "$tmp/out" ] && cat "$tmp/out" >&2; exit 1; }

cat >"$tmp/c.csv" <<'CSV'
kernel,cuda_mapping,block,grid,status,dram_read_bytes_modeled,time_us_modeled,time_us_measured
k.c:1,a,32x1x1,10x1x1,ok,1000,50,100
k.c:1,b,32x1x1,20x1x1,ok,1000,50,110
k.c:1,c,32x1x1,30x1x1,ok,1000,50,125
k.c:1,d,32x1x1,40x1x1,ok,2000,50,90
k.c:1,e,32x1x1,50x1x1,failed,1000,50,
k.c:9,f,64x1x1,10x1x1,ok,5,7,200
k.c:9,g,64x1x1,20x1x1,ok,5,7,200
CSV
python3 scripts/model_twins.py "$tmp/c.csv" >"$tmp/out" || fail "exit $?"
grep -q ": 2 groups the model predicts alike (5 candidates)" "$tmp/out" || fail "groups"
grep -q "median 1.125, 75th 1.250, 90th 1.250, largest 1.250; 1 groups over 1.10" "$tmp/out" || fail "spread"
grep -q "1.25x k.c:1 block 32x1x1, modeled 50.0 us: a 10x1x1 100.0, b 20x1x1 110.0, c 30x1x1 125.0" "$tmp/out" ||
  fail "widest group"

python3 scripts/model_twins.py validation/results/h100/2026-11-23-lane-loops-b441b9a/comparison.csv \
  >"$tmp/out" || fail "tenth run: exit $?"
grep -q "33 groups the model predicts alike (72 candidates)" "$tmp/out" || fail "tenth run"

rc=0; python3 scripts/model_twins.py >/dev/null 2>&1 || rc=$?
[ $rc -eq 2 ] || fail "no file gave exit $rc, not 2"
rc=0; python3 scripts/model_twins.py "$tmp/nosuch.csv" >/dev/null 2>&1 || rc=$?
[ $rc -eq 2 ] || fail "a missing file gave exit $rc, not 2"
echo "model_twins: ok"
