#!/usr/bin/env bash
# The one command to run on the GPU machine: builds schedvalidate there (CUDA toolkit + the
# jansson carried in .deps/jansson from scripts/fetch_gpu_deps.sh; cmake when present, else the C
# compiler directly, also when SV_BUILD=cc), runs its tests, prints nvidia-smi, then measures
# the given plans.
#
#   scripts/gpu_validate.sh OUTDIR PLAN.json... [-- SCHEDVALIDATE-OPTIONS...]
#   e.g. scripts/gpu_validate.sh gpu-out plans/*.json -- --repeats 7 --timeout-s 60
#
# Before, on the networked machine: scripts/fetch_gpu_deps.sh, and carry .deps/ (git-ignored)
# with the working tree to the GPU machine.
# OUTDIR gets: build.log, ctest.log, nvidia-smi.txt, device-arch.json (the device's arch
# description, template arch/h100.json), and per plan NAME.measured.json and NAME.log.
# When counters are not permitted (exit 5) a plan is rerun with --no-metrics (said in its log).
# Exit status: 0 when every plan was measured, else the last failing schedvalidate status
# (1 run failed, 2 usage, 3 bad plan, 4 no GPU), or 1 when the build failed.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 1 ] || { sed -n '2,16p' "$0"; exit 2; }
out=$1
shift
plans=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do plans+=("$1"); shift; done
[ "${1:-}" = "--" ] && shift
opts=("$@")
mkdir -p "$out"
out=$(cd "$out" && pwd)
cuda=${CUDA_HOME:-/usr/local/cuda}
build="$here/build-gpu"
jroot="$here/.deps/jansson/usr"

say() { echo "gpu_validate: $*" >&2; }

# --- build -------------------------------------------------------------------------------------
build_runner() {
  local jopt=()
  [ -f "$jroot/include/jansson.h" ] && jopt=(-DJANSSON_ROOT="$jroot")
  if [ "${SV_BUILD:-}" != cc ] && command -v cmake >/dev/null 2>&1; then
    if cmake -S "$here/validation/runner" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DSV_SANITIZE_TESTS=OFF -DCUDAToolkit_ROOT="$cuda" "${jopt[@]}" &&
      cmake --build "$build" -j "$(nproc)"; then
      return 0
    fi
    echo "gpu_validate: the cmake build failed; trying the compiler alone" >&2
    rm -rf "$build"
  fi
  # No cmake: one compiler call. The shim holds an empty <string> for cupti_profiler_host.h.
  local inc=(-I"$here/validation/runner" -I"$here/validation/runner/shim" -I"$cuda/include"
             -I"$cuda/extras/CUPTI/include") libs=()
  if [ -f "$jroot/include/jansson.h" ]; then
    inc+=(-I"$jroot/include"); libs+=("$jroot/lib/x86_64-linux-gnu/libjansson.a")
  else
    libs+=(-ljansson)
  fi
  local ver
  ver=$(sed -n 's/^project(schedvalidate VERSION \([0-9.]*\).*/\1/p' "$here/validation/runner/CMakeLists.txt")
  mkdir -p "$build"
  local srcs=()
  for f in "$here"/validation/runner/sv_*.c; do srcs+=("$f"); done
  ${CC:-cc} -std=c11 -O2 -g -D_GNU_SOURCE -DSV_VERSION="\"$ver\"" -Wall -Wextra "${inc[@]}" "${srcs[@]}" \
    -o "$build/schedvalidate" "${libs[@]}" \
    -L"$cuda/lib64" -L"$cuda/lib" -L"$cuda/extras/CUPTI/lib64" -lnvrtc -lcupti -ldl -lm -pthread \
    -Wl,-rpath,"$cuda/lib64:$cuda/lib:$cuda/extras/CUPTI/lib64"
}
if [ ! -f "$jroot/include/jansson.h" ] && [ ! -f /usr/include/jansson.h ]; then
  say "no jansson: run scripts/fetch_gpu_deps.sh on a networked machine and carry .deps/ here"
  exit 1
fi
say "building schedvalidate in $build (log: $out/build.log)"
if ! build_runner >"$out/build.log" 2>&1; then
  tail -30 "$out/build.log" >&2
  say "the build failed; see $out/build.log"
  exit 1
fi
bin="$build/schedvalidate"
"$bin" --version >&2

if [ -f "$build/CTestTestfile.cmake" ]; then
  say "running the runner's tests (log: $out/ctest.log)"
  # The cli test verbose: it says whether it measured the hand-made plan on the GPU.
  # runner.mock (a mock driver, ~25 s) proves nothing more on a GPU: left out to save device time.
  (cd "$build" && ctest --output-on-failure -E 'runner.cli|runner.mock' && ctest -V -R runner.cli) >"$out/ctest.log" 2>&1 &&
    say "tests passed" || say "SOME TESTS FAILED: see $out/ctest.log"
  grep -E "SKIP|GPU run|GPU metrics|FAIL|tests passed|tests failed" "$out/ctest.log" >&2 || true
fi

# --- the machine -------------------------------------------------------------------------------
if command -v nvidia-smi >/dev/null 2>&1; then
  nvidia-smi >"$out/nvidia-smi.txt" 2>&1
  nvidia-smi -q -d CLOCK,PERFORMANCE >>"$out/nvidia-smi.txt" 2>&1
  head -20 "$out/nvidia-smi.txt" >&2
else
  say "nvidia-smi not found"
fi
grep -H RmProfilingAdminOnly /proc/driver/nvidia/params >&2 2>/dev/null || true

# --- the plans ---------------------------------------------------------------------------------
status=0
arch_done=0
for plan in "${plans[@]}"; do
  name=$(basename "$plan" .json)
  dest="$out/$name.measured.json"
  log="$out/$name.log"
  extra=()
  if [ $arch_done -eq 0 ] && [ -f "$here/arch/h100.json" ]; then
    extra=(--write-arch "$out/device-arch.json" --arch-template "$here/arch/h100.json")
  fi
  say "measuring $plan -> $dest (log: $log)"
  "$bin" "$plan" -o "$dest" --force "${extra[@]}" "${opts[@]}" 2>&1 | tee "$log" >&2
  rc=${PIPESTATUS[0]}
  if [ "$rc" -eq 5 ]; then
    say "profiling is not permitted here: rerunning $plan with --no-metrics (times only)" | tee -a "$log"
    "$bin" "$plan" -o "$dest" --force --no-metrics "${extra[@]}" "${opts[@]}" 2>&1 | tee -a "$log" >&2
    rc=${PIPESTATUS[0]}
  fi
  if [ "$rc" -eq 0 ]; then
    arch_done=1
    say "$name: $(grep -o '"status": "[a-z_]*"' "$dest" | sort | uniq -c | tr -s ' \n' ' ')"
  else
    say "$name: schedvalidate exited with $rc"
    status=$rc
  fi
done
ls -l "$out" >&2
exit $status
