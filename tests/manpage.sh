#!/usr/bin/env bash
# The man page renders without groff warnings, and names every option and help topic the CLI
# offers (so the two cannot drift apart).
set -euo pipefail
exe=$1
here=$(cd "$(dirname "$0")/.." && pwd)
page=$here/doc/schedpredict.1
warnings=$(LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -z "$page" 2>&1)
if [ -n "$warnings" ]; then
  echo "groff warnings in $page:"; echo "$warnings"; exit 1
fi
text=$(LC_ALL=C.UTF-8 groff -man -Tascii -P-cbou "$page" 2>/dev/null)
help=$("$exe" --help; for t in formats fix compilers validation space analyzer exit-codes; do "$exe" help "$t"; done)
topics=$("$exe" --help | sed -n 's/.*help \[TOPIC\] *(\(.*\)).*/\1/p')
[ -n "$topics" ] || { echo "no help topics found in --help"; exit 1; }
missing=0
for opt in $(grep -o -- '--[a-z][a-z0-9-]*' <<<"$help" | sort -u); do
  if ! grep -qw -- "$opt" <<<"$text"; then echo "man page lacks $opt"; missing=1; fi
done
for t in $topics; do
  if ! grep -q -- "$t" <<<"$text"; then echo "man page lacks help topic $t"; missing=1; fi
done
for code in 0 1 2 3 4 5; do
  grep -q "^ *$code  *[A-Z]" <<<"$text" || { echo "man page lacks exit code $code"; missing=1; }
done
[ $missing = 0 ] && echo "man page: renders cleanly, covers $(grep -o -- '--[a-z][a-z0-9-]*' <<<"$help" | sort -u | wc -l) options and all help topics"
exit $missing
