#!/usr/bin/env bash
# --fix keeps the semantics: every example's timing harness (schedpredict --emit-harness) is
# built as written and after --fix, and both run in libgomp's host fallback
# (ACC_DEVICE_TYPE=host, only the checked call); each function's arrays must be bitwise equal
# between the two builds, and its return value too, or within 1e-12 where --fix reordered a
# reduction.
#   tests/gcc_openacc_host.sh SCHEDPREDICT
# Two examples are made smaller, because on the host their full size takes minutes:
# gemm runs with --param ni=200 nj=230 nk=260 (its loop bounds; the arrays keep their extents)
# and matmul with N=512 instead of 4096 (a #define without an #ifndef guard, edited in the copy).
set -u
. "$(dirname "$0")/gcc_openacc_setup.sh"
mkdir "$tmp/examples"
cp examples/*.c "$tmp/examples/"
sed -i 's|^// schedpredict-args:.*|// schedpredict-args: --param ni=200 --param nj=230 --param nk=260|' \
  "$tmp/examples/gemm.c"
sed -i 's|^#define N 4096$|#define N 512|' "$tmp/examples/matmul.c"
grep -q '^#define N 512$' "$tmp/examples/matmul.c" || { echo "FAIL: matmul.c no longer has '#define N 4096'"; exit 1; }
if ! SCHEDPREDICT=$bin SP_EXAMPLES_DIR=$tmp/examples SP_HARNESS_HOST=1 \
     scripts/gcc_openacc_build.sh "$tmp/out" >"$tmp/build.log" 2>&1; then
  echo "FAIL: scripts/gcc_openacc_build.sh failed:"; tail -30 "$tmp/build.log"; exit 1
fi
if grep -q FAIL "$tmp/build.log"; then
  grep FAIL "$tmp/build.log"
  for f in "$tmp"/out/logs/*.log; do grep -l "error" "$f" >/dev/null && { echo "== $f"; grep -m5 error "$f"; }; done
  exit 1
fi
ACC_DEVICE_TYPE=host SP_RUN_DIMS=0 SP_NCU=0 scripts/gcc_openacc_run.sh "$tmp/out" "$tmp/res" 0 \
  >"$tmp/run.log" 2>&1 || { echo "FAIL: a harness run failed:"; grep FAIL "$tmp/run.log"; exit 1; }
# A reduction returned by the function may change in its last bits when --fix interchanges its
# loops (frobenius_colmajor: 6e-14 relative); every array must still be bitwise equal.
python3 scripts/gcc_openacc_table.py "$tmp/res" --check --return-tolerance 1e-12
