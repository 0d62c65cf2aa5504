#!/usr/bin/env bash
# scripts/plot_validation.py on the comparison of the fixtures: every PNG is written and is a PNG.
# Skips (exit 77) where no python3 has matplotlib.
#   tests/plot_validation.sh SCHEDPREDICT
set -u
bin=$1
cd "$(dirname "$0")/.."
if ! python3 -c "import matplotlib" 2>/dev/null && ! /usr/bin/python3 -c "import matplotlib" 2>/dev/null; then
  echo "SKIP: no python3 with matplotlib (apt-get install python3-matplotlib)"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
d=tests/inputs/compare
"$bin" compare --format json -o "$tmp/cmp.json" $d/plan.json $d/measured.json 2>/dev/null
[ -s "$tmp/cmp.json" ] || { echo "FAIL: no comparison written"; exit 1; }
python3 scripts/plot_validation.py "$tmp/cmp.json" -o "$tmp/png" >"$tmp/list" || { echo "FAIL: the script failed"; exit 1; }
want="cost_vs_time-01.png l1_hit-01.png l2_hit-01.png loads-01.png summary.png"
for f in $want; do
  if [ "$(head -c 4 "$tmp/png/$f" 2>/dev/null | tail -c 3)" != "PNG" ] || [ "$(stat -c %s "$tmp/png/$f")" -lt 20000 ]; then
    echo "FAIL: $f is missing or not a PNG"; exit 1
  fi
done
n=$(ls "$tmp/png" | wc -l)
[ "$n" -eq 5 ] || { echo "FAIL: $n files, want 5 ($want)"; exit 1; }
# bad input: a clear message, non-zero exit
if python3 scripts/plot_validation.py $d/plan.json -o "$tmp/x" 2>"$tmp/err" || ! grep -q "schema: not a 'schedpredict-comparison'" "$tmp/err"; then
  echo "FAIL: a plan given as the comparison was not refused clearly"; exit 1
fi
echo "plot_validation: 5 PNGs written, bad input refused"
