#!/usr/bin/env bash
# The CLI under valgrind on a few examples of different kinds (all of them: add --all): no
# definite, indirect or possible leak from our code and no invalid access.
#   tests/valgrind.sh SCHEDPREDICT [--all]
set -u
bin=$1
cd "$(dirname "$0")/.."
files="examples/transpose.c examples/aos_particles.c examples/spmv_short_rows.c examples/vla_param.c tests/inputs/needs_param.c tests/inputs/syntax_error.c"
[ "${2:-}" = "--all" ] && files=$(ls examples/*.c)
fail=0 n=0
for src in $files; do
  args=$(grep -m1 '^// schedpredict-args:' "$src" | sed 's|^// schedpredict-args:||')
  log=$(mktemp)
  eval "valgrind --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect,possible \
    --show-leak-kinds=definite,indirect,possible --suppressions=tests/valgrind.supp -q \
    \"$bin\" --dump-ir -q \"$src\" $args" >/dev/null 2>"$log"
  rc=$?
  n=$((n + 1))
  if [ $rc -eq 99 ]; then
    echo "FAIL $src"; cat "$log"; fail=$((fail + 1))
  fi
  rm -f "$log"
done
echo "valgrind: $((n - fail)) passed, $fail failed"
[ $fail -eq 0 ]
