#!/usr/bin/env bash
# Golden IR test: runs `schedpredict --dump-ir` on every example with the arguments on its
# `// schedpredict-args:` line and compares with tests/golden/NAME.ir.json.
#   tests/golden.sh SCHEDPREDICT [--update]
# --update rewrites the expected files (review the diff before committing it).
set -u
bin=$1
update=${2:-}
cd "$(dirname "$0")/.."
fail=0 n=0
for src in examples/*.c; do
  name=$(basename "$src" .c)
  args=$(grep -m1 '^// schedpredict-args:' "$src" | sed 's|^// schedpredict-args:||')
  expected=tests/golden/$name.ir.json
  actual=$(eval "\"$bin\" --dump-ir -q \"$src\" $args" 2>/tmp/golden.$$.err)
  rc=$?
  n=$((n + 1))
  if [ $rc -ne 0 ]; then
    echo "FAIL $name: exit $rc"; cat /tmp/golden.$$.err; fail=$((fail + 1)); continue
  fi
  if [ "$update" = "--update" ]; then
    printf '%s\n' "$actual" > "$expected"
  elif ! diff -u "$expected" <(printf '%s\n' "$actual") > /tmp/golden.$$.diff; then
    echo "FAIL $name: IR differs from $expected"; head -40 /tmp/golden.$$.diff; fail=$((fail + 1))
  fi
done
rm -f /tmp/golden.$$.err /tmp/golden.$$.diff
echo "golden IR: $((n - fail)) passed, $fail failed"
[ $fail -eq 0 ] && [ $n -gt 0 ]
