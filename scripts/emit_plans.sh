#!/usr/bin/env bash
# Emits a validation plan for every example (or the given ones), each with the arguments on its
# `// schedpredict-args:` line:
#   scripts/emit_plans.sh OUTDIR [SCHEDPREDICT] [EXAMPLE.c...] [-- EXTRA-SCHEDPREDICT-OPTIONS]
# OUTDIR gets NAME.plan.json per example with at least one generated nest, and emit.log.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 1 ] || { sed -n '2,6p' "$0"; exit 2; }
out=$1
shift
bin=$here/build/schedpredict
if [ $# -gt 0 ] && [ "$1" != "--" ] && [ -x "$1" ] && [ "${1%.c}" = "$1" ]; then bin=$1; shift; fi
srcs=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do srcs+=("$1"); shift; done
[ "${1:-}" = "--" ] && shift
extra=("$@")
[ ${#srcs[@]} -gt 0 ] || srcs=("$here"/examples/*.c)
mkdir -p "$out"
: > "$out/emit.log"
ok=0 failed=0
for src in "${srcs[@]}"; do
  name=$(basename "$src" .c)
  args=$(grep -m1 '^// schedpredict-args:' "$src" | sed 's|^// schedpredict-args:||')
  if eval "\"$bin\" -q --force --emit-plan \"$out/$name.plan.json\" \"$src\" ${extra[*]:-} $args" \
      >/dev/null 2>>"$out/emit.log"; then
    ok=$((ok + 1))
  else
    echo "emit_plans: $name: exit $? (see $out/emit.log)" >&2
    failed=$((failed + 1))
  fi
done
echo "emit_plans: $ok plans in $out, $failed examples failed"
[ $failed -eq 0 ]
