# Sourced by the tests that build OpenACC kernels with GCC (gcc_openacc_host.sh,
# gcc_reduction_sweep.sh), with the schedpredict binary as $1: sets bin (its absolute path), cc
# (SP_OFFLOAD_CC, default gcc) and tmp (a directory removed on exit), moves to the repository root,
# and skips the test (exit 0 with SKIP) where cc cannot build OpenACC for libgomp's host fallback.
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
cd "$(dirname "${BASH_SOURCE[0]}")/.."
cc=${SP_OFFLOAD_CC:-gcc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf 'int main(void) {\n#pragma acc parallel\n;\nreturn 0;\n}\n' >"$tmp/probe.c"
if ! "$cc" -fopenacc -foffload=disable "$tmp/probe.c" -o "$tmp/probe" >/dev/null 2>&1; then
  echo "SKIP: $cc -fopenacc does not build (libgomp missing)"
  exit 0
fi
