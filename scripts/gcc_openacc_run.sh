#!/usr/bin/env bash
# The GCC OpenACC proof, part 2 (GPU machine: needs the driver only, no GCC): runs what
# scripts/gcc_openacc_build.sh OUTDIR built, with the libgomp + nvptx plugin carried in OUTDIR.
#   scripts/gcc_openacc_run.sh OUTDIR RESULTS [REPS]
# Per example and variant (orig = as written, fixed = after --fix):
#   1. the timing run: REPS timed calls per function (default 5) after one checked call;
#   2. GOMP_DEBUG=1 with no timed call: the launch dimensions libgomp chose per kernel
#      (kept apart so that the debug output does not slow the timed calls; SP_RUN_DIMS=0 skips);
#   3. if ncu is on PATH (and SP_NCU is not 0): one timed call under
#      `ncu --clock-control none --metrics gpu__time_duration.sum --csv`, per-kernel device times
#      at the clock the GPU runs (ncu's default locks the base clock: a one-thread kernel took
#      4.765 s that way on the H200 and 4.015 s at its boost clock, 2026-12-02), as long as the
#      whole run stays within SP_RUN_BUDGET_S seconds (default 220).
# RESULTS gets times.jsonl (the harness's JSON lines with "example" and "variant" added),
# dims/NAME.VARIANT.txt, ncu/NAME.VARIANT.csv, logs/ and env.txt. Read them with
# scripts/gcc_openacc_table.py RESULTS.
set -u
if [ $# -lt 2 ]; then
  echo "usage: $0 OUTDIR RESULTS [REPS]" >&2
  exit 2
fi
out=$(cd "$1" && pwd) || exit 2
res=$2
reps=${3:-5}
budget=${SP_RUN_BUDGET_S:-220}
mkdir -p "$res/dims" "$res/ncu" "$res/logs"
res=$(cd "$res" && pwd)
export LD_LIBRARY_PATH="$out${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
[ -n "${ACC_DEVICE_TYPE:-}" ] || export ACC_DEVICE_TYPE=nvidia
{
  date -u
  echo "reps=$reps ACC_DEVICE_TYPE=$ACC_DEVICE_TYPE"
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv 2>&1
  command -v ncu && ncu --version 2>&1 | tail -1
} >"$res/env.txt"
: >"$res/times.jsonl"
[ -e "$out/manifest.json" ] && cp "$out/manifest.json" "$res/manifest.json"
shopt -s nullglob
bins=("$out"/bin/*.orig)
if [ ${#bins[@]} -eq 0 ]; then
  echo "error: no binaries in $out/bin (run scripts/gcc_openacc_build.sh $1 first)" >&2
  exit 2
fi
failed=0
for b in "${bins[@]}"; do
  name=$(basename "$b" .orig)
  for v in orig fixed; do
    exe=$out/bin/$name.$v
    [ -x "$exe" ] || continue
    log=$res/logs/$name.$v.log
    if timeout 120 "$exe" "$reps" >"$res/logs/$name.$v.out" 2>"$log"; then
      sed "s/^{/{\"example\":\"$name\",\"variant\":\"$v\",/" "$res/logs/$name.$v.out" >>"$res/times.jsonl"
    else
      rc=$?
      echo "FAIL $name.$v (exit $rc), see $log"
      printf '{"example":"%s","variant":"%s","failed":"exit %d"}\n' "$name" "$v" "$rc" \
        >>"$res/times.jsonl"
      failed=$((failed + 1))
    fi
    [ "${SP_RUN_DIMS:-1}" = 0 ] && continue
    GOMP_DEBUG=1 timeout 60 "$exe" 0 >/dev/null 2>"$res/dims/$name.$v.full"
    # the launch lines ("... kernel F: launch gangs=G, workers=W, vectors=V") and the defaults
    grep -E 'launch|default dim|dims' "$res/dims/$name.$v.full" >"$res/dims/$name.$v.txt"
    rm -f "$res/dims/$name.$v.full"
  done
  echo "ran $name ($SECONDS s)"
done

if command -v ncu >/dev/null && [ "${SP_NCU:-1}" != 0 ]; then
  for b in "${bins[@]}"; do
    name=$(basename "$b" .orig)
    for v in orig fixed; do
      left=$((budget - SECONDS))
      if [ "$left" -le 5 ]; then
        echo "ncu: the budget of $budget s is spent; no ncu times from $name.$v on"
        break 2
      fi
      timeout "$left" ncu --clock-control none --metrics gpu__time_duration.sum --csv \
        --log-file "$res/ncu/$name.$v.csv" \
        "$out/bin/$name.$v" 1 >/dev/null 2>"$res/logs/$name.$v.ncu.log" ||
        echo "ncu failed or timed out on $name.$v, see $res/logs/$name.$v.ncu.log"
    done
  done
fi
echo "done in $SECONDS s; $failed run(s) failed; results in $res"
[ "$failed" -eq 0 ]
