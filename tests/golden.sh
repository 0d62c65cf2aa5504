#!/usr/bin/env bash
# Golden tests on every example, with the arguments on its `// schedpredict-args:` line:
#   tests/golden.sh SCHEDPREDICT [--update] [--report]
# default: `schedpredict --dump-ir` against tests/golden/NAME.ir.json;
# --report: the ranking report (`--top 3`, H100 model) against tests/golden/NAME.report.txt,
#   every figure of which comes from simulating the candidates, and whose table rows must line
#   up under their header.
# --update rewrites the expected files (review the diff before committing it).
set -u
bin=$1
shift
update= mode=ir
for a in "$@"; do
  case $a in
    --update) update=--update ;;
    --report) mode=report ;;
  esac
done
cd "$(dirname "$0")/.."
fail=0 n=0
for src in examples/*.c; do
  name=$(basename "$src" .c)
  args=$(grep -m1 '^// schedpredict-args:' "$src" | sed 's|^// schedpredict-args:||')
  if [ $mode = ir ]; then
    expected=tests/golden/$name.ir.json
    actual=$(eval "\"$bin\" --dump-ir -q \"$src\" $args" 2>/tmp/golden.$$.err)
  else
    expected=tests/golden/$name.report.txt
    actual=$(eval "\"$bin\" --top 3 -q \"$src\" $args" 2>/tmp/golden.$$.err)
  fi
  rc=$?
  n=$((n + 1))
  if [ $rc -ne 0 ]; then
    echo "FAIL $name: exit $rc"; cat /tmp/golden.$$.err; fail=$((fail + 1)); continue
  fi
  # a table's rows line up under its header: each row's speedup ends ("x") where the header does
  if [ $mode = report ] && ! printf '%s\n' "$actual" | awk '
      /^  rank / { h = length($0); next }
      h && /^$/ { h = 0 }
      h && substr($0, h, 1) != "x" { print "  misaligned: " $0; bad = 1 }
      END { exit bad }'; then
    echo "FAIL $name: a table row does not line up with its header"; fail=$((fail + 1)); continue
  fi
  if [ "$update" = "--update" ]; then
    printf '%s\n' "$actual" > "$expected"
  elif ! diff -u "$expected" <(printf '%s\n' "$actual") > /tmp/golden.$$.diff; then
    echo "FAIL $name: the $mode differs from $expected"; head -40 /tmp/golden.$$.diff; fail=$((fail + 1))
  fi
done
rm -f /tmp/golden.$$.err /tmp/golden.$$.diff
echo "golden $mode: $((n - fail)) passed, $fail failed"
[ $fail -eq 0 ] && [ $n -gt 0 ]
