#!/usr/bin/env bash
# The empirical-search table on the GPU machine: builds schedvalidate and runs its tests there
# (scripts/gpu_validate.sh with no plan: its build, tests and nvidia-smi), then runs
# `schedvalidate tune --table` on each plan within one time budget, then the table.
#
#   scripts/gpu_search.sh OUT PLAN.json... [-- TUNE-OPTIONS...]
#   e.g. scripts/gpu_search.sh search-out validation/results/h100/2026-11-22/plans/*.plan.json
#
# Everything goes under OUT: build/ (build.log, ctest.log, nvidia-smi.txt), per plan
# NAME.search.json, NAME.search.points.jsonl (every measured point) and NAME.log, then
# search_table.md (scripts/search_table.py) and progress.log.
# SEARCH_BUDGET_S (default 400) bounds the searches in total: a plan gets at most 3x its even
# share of what is left (--stop-after-s); plans not reached are listed. Run the same command again to go on: each plan
# resumes from its points file (nothing is measured twice) and finished plans cost nothing.
# Defaults given to tune (TUNE-OPTIONS come after and win): --grid-budget-s 3 --time-budget-s 20
# --timeout-s 20 (a point without a result in 20 s is a timeout).
# Exit status: 0 when every plan was searched to the end, 1 otherwise (see progress.log).
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 1 ] || { sed -n '2,17p' "$0"; exit 2; }
out=$1
shift
plans=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do plans+=("$(realpath "$1")"); shift; done
[ "${1:-}" = "--" ] && shift
opts=(--grid-budget-s 3 --time-budget-s 20 --timeout-s 20 "$@")
mkdir -p "$out"
out=$(cd "$out" && pwd)
budget=${SEARCH_BUDGET_S:-400}
say() { echo "gpu_search: $*" | tee -a "$out/progress.log" >&2; }

say "$(date -u +%FT%TZ) building and testing the runner (scripts/gpu_validate.sh, logs in $out/build)"
"$here/scripts/gpu_validate.sh" "$out/build" || { say "the build failed: see $out/build/build.log"; exit 1; }
bin="$here/build-gpu/schedvalidate"
[ -x "$bin" ] || { say "no $bin after the build"; exit 1; }

start=$(date +%s)
status=0
n=0
for plan in "${plans[@]}"; do
  n=$((n + 1))
  name=$(basename "$plan" .json)
  name=${name%.plan}
  res="$out/$name.search.json" pts="$out/$name.search.points.jsonl" log="$out/$name.log"
  left=$((budget - ($(date +%s) - start)))
  if [ "$left" -lt 15 ]; then
    say "[$n/${#plans[@]}] $name: not run, the ${budget} s budget is spent (run the command again to go on)"
    status=1
    continue
  fi
  # a fair share (3x the even split of what is left, at least 30 s): one slow plan cannot take it all
  share=$(( left * 3 / (${#plans[@]} - n + 1) ))
  [ "$share" -lt 30 ] && share=30
  [ "$share" -gt "$left" ] && share=$left
  resume=()
  [ -s "$pts" ] && resume=(--resume "$pts")
  say "[$n/${#plans[@]}] $name: searching (${left} s left, at most ${share} s for it${resume:+, resuming from its points})"
  "$bin" tune "$plan" --table -o "$res" --force --points "$pts" "${resume[@]}" --stop-after-s "$share" \
    "${opts[@]}" >"$log" 2>&1
  rc=$?
  grep -E '^schedvalidate tune: \[[0-9]+/[0-9]+\]' "$log" | sed 's/^schedvalidate tune: /    /' | tee -a "$out/progress.log" >&2
  if [ $rc -ne 0 ]; then
    say "$name: exit $rc: $(tail -1 "$log")"
    status=1
    [ $rc -eq 4 ] && { say "no GPU: stopping"; break; }
  fi
done
say "$(date -u +%FT%TZ) searches done in $(( $(date +%s) - start )) s"
if ls "$out"/*.search.json >/dev/null 2>&1 && command -v python3 >/dev/null 2>&1; then
  python3 "$here/scripts/search_table.py" "$out"/*.search.json >"$out/search_table.md" 2>>"$out/progress.log" &&
    say "table: $out/search_table.md" || say "search_table.py failed (see progress.log)"
  sed -n '/^## Summary/,$p' "$out/search_table.md" >&2
fi
exit $status
