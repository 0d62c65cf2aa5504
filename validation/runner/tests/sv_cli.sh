#!/usr/bin/env bash
# schedvalidate's command line: usage errors, bad plans, the selection, dumped sources compiled
# by nvcc for sm_90, and a real run: on a machine without a driver it must exit 4 ("no GPU");
# where a GPU is usable it must measure both candidates of the hand-made plan.
#   validation/runner/tests/sv_cli.sh SCHEDVALIDATE     (run from the repository root)
set -u
bin=$1
cd "$(dirname "$0")/../../.."
plan=tests/inputs/plans/transpose.json
pass=0 fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

. tests/expect.sh

expect 0 "Exit status: 0 done" -- --help
expect 0 "schedvalidate [0-9]+\.[0-9]+" -- --version
expect 2 "expected exactly one plan file" -- -o "$tmp/m.json"
expect 2 "unknown or incomplete option '--frobnicate'" -- --frobnicate "$plan"
expect 2 "no output file" -- "$plan"
expect 2 "--repeats '3': expected an integer from 5" -- --repeats 3 -o "$tmp/m.json" "$plan"
expect 2 "--shard '0/2': expected K/N" -- --shard 0/2 -o "$tmp/m.json" "$plan"
expect 2 "--backend 'nvprof': expected cupti or ncu" -- --backend nvprof -o "$tmp/m.json" "$plan"
expect 2 "--write-arch needs --arch-template" -- --write-arch "$tmp/a.json" -o "$tmp/m.json" "$plan"
expect 2 "--kernel 'nosuch.c:1': the plan has no kernel" -- --kernel nosuch.c:1 -o "$tmp/m.json" "$plan"
expect 3 "nosuch.json: cannot open the plan" -- -o "$tmp/m.json" tests/inputs/plans/nosuch.json
head -c 700 "$plan" >"$tmp/cut.json"
expect 3 "cut.json:[0-9]+:[0-9]+: not valid JSON" -- -o "$tmp/m.json" "$tmp/cut.json"
sed 's/"reference": 0/"reference": 5/' "$plan" >"$tmp/ref.json"
expect 3 'ref.json: \$.kernels\[0\].reference: 5 is the id of none' -- -o "$tmp/m.json" "$tmp/ref.json"
echo '{}' >"$tmp/exists.json"
expect 2 "exists.json exists; use --force" -- -o "$tmp/exists.json" "$plan"
expect 0 "transpose.c:9	0	sp_transpose_9_c0" -- --dry-run "$plan"
expect 0 "^transpose.c:9	1	sp_transpose_9_c1$" -- --dry-run --shard 2/2 "$plan"

# A shard or filter that selects nothing still leaves a (valid, empty) file, without a GPU.
expect 0 "wrote $tmp/empty.json" -- --candidates 999 -o "$tmp/empty.json" "$plan"
if python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); assert m["kernels"] == [] and m["schema"] == "schedpredict-measurements"' "$tmp/empty.json"; then
  pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: empty selection output"; fi

# The dumped sources compile with nvcc for sm_90 (as NVRTC compiles them in test_sv_nvrtc).
expect 0 "sp_transpose_9_c1.cu" -- --dump-sources "$tmp/src" "$plan"
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
if [ -x "$nvcc" ]; then
  for f in "$tmp"/src/*.cu; do
    if "$nvcc" -arch=sm_90 -c "$f" -o "$tmp/$(basename "$f" .cu).o"; then pass=$((pass + 1))
    else fail=$((fail + 1)); echo "FAIL: nvcc -arch=sm_90 -c $f"; fi
  done
else
  echo "SKIP: no nvcc: the dumped sources were not compiled with nvcc"
fi

# A real run.
out=$("$bin" -o "$tmp/m.json" --repeats 5 --timeout-s 120 "$plan" 2>&1)
rc=$?
metrics=1
if [ "$rc" -eq 5 ]; then
  echo "SKIP: counters not permitted here (exit 5 checked): the GPU run is repeated with --no-metrics"
  metrics=0
  out=$("$bin" -o "$tmp/m.json" --force --no-metrics --repeats 5 --timeout-s 120 "$plan" 2>&1)
  rc=$?
fi
if [ "$rc" -eq 4 ]; then
  # No driver (this machine) or no usable GPU: the "no GPU" exit code, its message, no output.
  if grep -Eq "no NVIDIA driver|no usable GPU|no GPU with ordinal" <<<"$out" && [ ! -e "$tmp/m.json" ]; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1)); echo "FAIL: exit 4 without its message, or with an output file:"; head -5 <<<"$out"
  fi
  echo "SKIP: no usable GPU here, the GPU run was not exercised (exit 4 checked): $(tail -1 <<<"$out")"
else
  # GPU run: both candidates measured, outputs equal, times recorded; with counters, the load
  # requests and sectors of a 256x256 double transpose by hand: 65536 loads by 2048 warps, one
  # request each; 8 sectors a request when a warp reads a row (c0), 32 when it reads a column (c1).
  if ! command -v python3 >/dev/null; then
    echo "SKIP: no python3: the GPU run's measured.json is checked by its statuses only"
    [ "$rc" -eq 0 ] && [ "$(grep -c '"status": "ok"' "$tmp/m.json")" -eq 2 ] && pass=$((pass + 1)) ||
      { fail=$((fail + 1)); echo "FAIL: GPU run exit $rc:"; tail -20 <<<"$out"; }
  elif [ "$rc" -eq 0 ] && python3 - "$tmp/m.json" "$metrics" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
c = m["kernels"][0]["candidates"]
assert [x["id"] for x in c] == [0, 1], c
for x in c:
    assert x["status"] == "ok", x
    assert x["result"]["equal"] == "bitwise", x
    assert len(x["time_us"]["runs"]) == 5 and x["time_us"]["median"] > 0, x
assert m["device"]["sm_count"] > 0 and m["timing"]["l2_flushed"] is True
if sys.argv[2] == "1":
    for x, sectors in zip(c, (16384, 65536)):
        mt = x["metrics"]
        assert mt["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"] == 2048, (x["id"], mt)
        assert mt["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] == sectors, (x["id"], mt)
        assert mt["gpu__time_duration.sum"] > 0, mt
    print("GPU metrics:", json.dumps(c[1]["metrics"]))
PY
  then pass=$((pass + 1)); echo "GPU run: $(grep -c 'candidate' <<<"$out") progress lines, measured.json checked"
  else fail=$((fail + 1)); echo "FAIL: GPU run exit $rc:"; tail -20 <<<"$out"; fi
fi

echo "sv_cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
