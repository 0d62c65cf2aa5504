#!/usr/bin/env bash
# scripts/counters_measured.py on gesummv and heat3d against the committed H100 counters: the
# table is there, a binary against itself moves nothing, the model's load requests equal the
# GPU's on every candidate it simulated past the screening (--simulated; x[j] twice and
# A[i][j][k] four times are loaded once, analyzer/repeat.c), and bad command lines exit 2.
# gesummv's measured candidates run its inner loop sequentially, which rank below those that
# map it (analyzer/imperfect.c) and are only screened: they are simulated in full (--exact).
#   tests/counters_measured.sh SCHEDPREDICT
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 SCHEDPREDICT" >&2; exit 2; }
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; [ -f "$tmp/out" ] && cat "$tmp/out" >&2; exit 1; }

python3 scripts/counters_measured.py "$bin" --baseline "$bin" --examples heat3d --simulated \
  >"$tmp/out" 2>"$tmp/err" || { cat "$tmp/err" >&2; fail "exit $?"; }
python3 scripts/counters_measured.py "$bin" --baseline "$bin" --examples gesummv --exact \
  >>"$tmp/out" 2>"$tmp/err" || { cat "$tmp/err" >&2; fail "--exact: exit $?"; }
for nest in gesummv.c:11 heat3d.c:16 heat3d.c:24; do
  row=$(grep "^$nest " "$tmp/out") || fail "no row for $nest"
  case "$row" in *'*') fail "$nest moved against itself: $row" ;; esac
  # requests: median |error| 0.00 % (of the measured candidates it simulated)
  echo "$row" | grep -qE '\|    0\.00 ->    0\.00 \|' || fail "$nest: requests not exact: $row"
done
[ "$(grep -cE '^all [0-9]+ candidates, requests: median    0\.00 ->    0\.00, mean    0\.00 ->    0\.00' "$tmp/out")" -eq 2 ] ||
  fail "summary"

rc=0; python3 scripts/counters_measured.py /nonexistent/bin >/dev/null 2>&1 || rc=$?
[ $rc -eq 2 ] || fail "a missing binary gave exit $rc, not 2"
rc=0; python3 scripts/counters_measured.py "$bin" --examples nosuch >/dev/null 2>"$tmp/err" || rc=$?
[ $rc -eq 2 ] && grep -q "not measured in" "$tmp/err" || fail "an unknown example gave exit $rc"
echo "counters_measured: ok"
