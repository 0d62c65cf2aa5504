#!/usr/bin/env bash
# The kernels scripts/gcc_reduction_sweep.sh writes for the H200 compute what they should: built
# for libgomp's host fallback (ACC_DEVICE_TYPE=host, the checked call only), every variant of a
# family must return the same result whatever its num_gangs / num_workers / vector_length:
# rowsum's b and jacobi's u and unew bitwise equal, the sums within 1e-12 relative (a reduction
# folds in another order per schedule), and the sum of squares must be that of the input.
#   tests/gcc_reduction_sweep.sh SCHEDPREDICT
set -u
. "$(dirname "$0")/gcc_openacc_setup.sh"
if ! SCHEDPREDICT=$bin SP_HARNESS_HOST=1 scripts/gcc_reduction_sweep.sh build "$tmp/out" >"$tmp/build.log" 2>&1; then
  echo "FAIL: scripts/gcc_reduction_sweep.sh build failed:"
  tail -20 "$tmp/build.log"
  exit 1
fi
: >"$tmp/runs.txt"
for exe in "$tmp"/out/bin/*; do
  if ! line=$(ACC_DEVICE_TYPE=host timeout 120 "$exe" 0 2>&1); then
    echo "FAIL: $(basename "$exe") exited non-zero: $line"
    exit 1
  fi
  echo "$(basename "$exe") $line" >>"$tmp/runs.txt"
done
python3 - "$tmp/runs.txt" <<'EOF'
import json, sys
runs = {}
for line in open(sys.argv[1]):
    name, js = line.split(" ", 1)
    runs[name] = json.loads(js)
fail = 0
def family(prefix):
    return {n: r for n, r in runs.items() if n.startswith(prefix)}
def same(fam, what, get, exact):
    global fail
    names = sorted(fam)
    ref = get(fam[names[0]])
    for n in names[1:]:
        v = get(fam[n])
        ok = v == ref if exact else abs(v - ref) <= 1e-12 * abs(ref)
        if not ok:
            print(f"FAIL: {n}'s {what} is {v}, {names[0]}'s {ref}")
            fail = 1
rowsum, frob, jac = family("rowsum_"), family("frob"), family("jac_")
if len(rowsum) != 4 or len(frob) != 19 or len(jac) != 6:
    print(f"FAIL: expected 4 rowsum, 19 frob and 6 jac variants, built {len(rowsum)}, {len(frob)}, {len(jac)}")
    sys.exit(1)
same(rowsum, "b (fnv)", lambda r: r["checksum"]["b"]["fnv"], True)
same(frob, "sum", lambda r: r["checksum"]["return"]["sum"], False)
same(jac, "u (fnv)", lambda r: r["checksum"]["u"]["fnv"], True)
same(jac, "unew (fnv)", lambda r: r["checksum"]["unew"]["fnv"], True)
same(jac, "max error", lambda r: r["checksum"]["return"]["sum"], True)
# frob's sum of squares is rowsum's b summed: the same input, the same values
b_sum = rowsum["rowsum_v32"]["checksum"]["b"]["sum"]
f_sum = frob["frob_g528_v32"]["checksum"]["return"]["sum"]
if abs(b_sum - f_sum) > 1e-12 * abs(b_sum):
    print(f"FAIL: frob's sum {f_sum} is not rowsum's rows summed, {b_sum}")
    fail = 1
if not fail:
    print(f"ok: {len(runs)} variants, each family computes the same result")
sys.exit(fail)
EOF
