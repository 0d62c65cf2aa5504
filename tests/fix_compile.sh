#!/usr/bin/env bash
# --fix on every example, then GCC's OpenACC compiler on the result:
#   tests/fix_compile.sh SCHEDPREDICT
# Each example is fixed into a temporary copy (-o), compiled and linked for the GPU with
# `gcc -fopenacc -foffload=nvptx-none` (a shared object: the examples have no main), and GCC must
# not replace any of the recommended sizes ("using 'vector_length (32)', ignoring 8"); where the
# fix marks a kernels region's loops independent, GCC must partition them (built with
# --param=openacc-kernels=decompose, without which GCC 12 runs the region on one thread). Skips
# visibly when GCC's nvptx offloading (Debian gcc-12-offload-nvptx) is not installed.
set -u
bin=$1
cd "$(dirname "$0")/.."
cc=${SP_OFFLOAD_CC:-gcc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf 'void f(double *a) {\n#pragma acc parallel loop\nfor (int i = 0; i < 8; i++) a[i] = i;\n}\n' > "$tmp/probe.c"
# ptxas (when a CUDA toolkit is on PATH) checks the PTX; GCC 12's default sm_35 is gone from new ones
offload=(-fopenacc -foffload=nvptx-none "-foffload-options=nvptx-none=-misa=sm_80 -lm" -O2 -shared
         -fPIC)
if ! "$cc" "${offload[@]}" "$tmp/probe.c" -o "$tmp/probe.so" >/dev/null 2>&1; then
  echo "SKIP: $cc cannot offload OpenACC to nvptx (apt-get install gcc-12-offload-nvptx)"
  echo "fix-compile: 0 passed, 0 failed, 1 skipped"
  exit 0
fi
pass=0 fail=0 kernels=0
for src in examples/*.c; do
  name=$(basename "$src" .c)
  args=$(grep -m1 '^// schedpredict-args:' "$src" | sed 's|^// schedpredict-args:||')
  cp "$src" "$tmp/$name.c"
  # the arguments after `--` are the compiler's (-D sizes)
  cargs=$(sed -n 's/^\(.* \)\{0,1\}-- //p' <<<"$args")
  sargs=$(sed 's/\(^\| \)-- .*//' <<<"$args")
  if ! eval "\"$bin\" -q --fix --no-backup \"$tmp/$name.c\" $sargs ${cargs:+-- $cargs}" 2>"$tmp/$name.fix.err"; then
    echo "FAIL $name: --fix failed"; cat "$tmp/$name.fix.err"; fail=$((fail + 1)); continue
  fi
  if ! eval "\"$cc\" \"\${offload[@]}\" $cargs \"$tmp/$name.c\" -o \"$tmp/$name.so\" -lm" >"$tmp/$name.cc.err" 2>&1 ||
     grep -E "ignoring|insufficient|error" "$tmp/$name.cc.err" >/dev/null; then
    echo "FAIL $name: the fixed file does not compile cleanly with $cc -fopenacc:"
    grep -v "relocation against\|DT_TEXTREL" "$tmp/$name.cc.err" | head -20
    diff -u "$src" "$tmp/$name.c" | head -40
    fail=$((fail + 1)); continue
  fi
  # a kernels region: GCC 12 runs it on one thread unless --param=openacc-kernels=decompose, and
  # then partitions the loops the fix marked independent
  if [ "$(grep -c "independent" "$tmp/$name.c")" -gt "$(grep -c "independent" "$src")" ]; then
    kernels=$((kernels + 1))
    "$cc" "${offload[@]}" --param=openacc-kernels=decompose -fopt-info-all-omp $cargs \
      "$tmp/$name.c" -o "$tmp/$name.so" -lm >"$tmp/$name.cc.err" 2>&1
    if ! grep -q "parallelized loop nest in OpenACC" "$tmp/$name.cc.err"; then
      echo "FAIL $name: with --param=openacc-kernels=decompose GCC partitions no loop of the fix:"
      grep -v "relocation against\|DT_TEXTREL\|addressable" "$tmp/$name.cc.err" | head -20
      fail=$((fail + 1)); continue
    fi
  fi
  pass=$((pass + 1))
done
echo "fix-compile: $pass passed, $fail failed; $kernels kernels region(s) partitioned by GCC"
# kernels_region.c's region is one GCC runs on one thread until the fix marks its loops
[ $fail -eq 0 ] && [ $pass -gt 0 ] && [ $kernels -gt 0 ]
