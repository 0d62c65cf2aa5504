#!/bin/bash
# usage: bench/results/2026-11-29-sampling-top8/changed.sh A B (from the repo root): every
# space with an --exact reference, run by schedpredict binaries A and B, and the candidates
# whose counters they disagree on, each against --exact (bench/sampling_changes.py).
A=$1 B=$2
L=bench/results/2026-11-28-l2-lines/exact P=bench/results/2026-11-29-pass-overlaps
N=bench/results/2026-11-29-sampling-top8/exact
T=$(mktemp -d)
one() {
  ref=$1; shift
  "$A" --format json --top 100000 -q "$@" > $T/a.json
  "$B" --format json --top 100000 -q "$@" > $T/b.json
  echo "== $ref: $*"
  python3 bench/sampling_changes.py $ref $T/a.json $T/b.json | grep -v "^examples\|^bench" | grep . || true
}
one $L/matmul1024_b32_g8448_exact.json.gz bench/results/2026-11-24-exact-8a114de/matmul1024.c --block 32 --gangs 8448
one $L/2mm_b32_g8448_exact.json.gz examples/2mm.c --block 32 --gangs 8448
one $L/mm446_nvc_exact.json.gz bench/results/2026-11-24-exact/mm446.c --compiler nvc
one $L/himeno128_b32x4x2_g1016_exact.json.gz bench/results/2026-11-24-exact-8a114de/himeno128.c --block 32x4x2 --gangs 1016
one $L/2mm17_b1024_g132_exact.json.gz examples/2mm.c --block 1024 --gangs 132
one $L/2mm_b1024_g528_exact.json.gz examples/2mm.c --block 1024 --gangs 528
one $L/conv3d_b256_g1016_exact.json.gz examples/conv3d.c --block 256 --gangs 1016
one $L/laplacian_b32x4x2_g1016_exact.json.gz examples/laplacian.c --block 32x4x2 --gangs 1016 -- -DNX=256 -DNY=256 -DNZ=256
one $L/guarded_stencil_b32x32_g16896_exact.json.gz examples/guarded_stencil.c --block 32x32 --gangs 16896
one $P/jacobi_exact.json.gz examples/jacobi.c --block 32x16 --gangs 1024
one $P/yreuse_exact.json.gz examples/yreuse.c --block 32x16 --gangs 1024
one $P/guarded_stencil_exact.json.gz examples/guarded_stencil.c --block 32x16 --gangs 1024
one $P/heat3d_exact.json.gz examples/heat3d.c --block 32x4x2 --gangs 1016 -- -DN=256
one $P/gwv_explicit_exact.json.gz examples/gwv_explicit.c --block 32x4x2 --gangs 1016
one $N/laplacian_b32x4x2_g1024.json.gz examples/laplacian.c --block 32x4x2 --gangs 1024 -- -DNX=256 -DNY=256 -DNZ=256
one $N/transpose_b32_g8448.json.gz examples/transpose.c --block 32 --gangs 8448
one $N/gemm_small_b32_g8448.json.gz examples/gemm.c --block 32 --gangs 8448 --param ni=1000 --param nj=1150 --param nk=650
one $N/fdtd2d_b32_g8448.json.gz examples/fdtd2d.c --block 32 --gangs 8448
one $N/conv2d_b32_g8448.json.gz examples/conv2d.c --block 32 --gangs 8448
for f in divergence_b64x4 heat3d_b1024_g528_1056; do
  [ -f $N/$f.json.gz ] || continue
  case $f in
    divergence*) one $N/$f.json.gz examples/divergence.c --block 64x4 ;;
    heat3d*) one $N/$f.json.gz examples/heat3d.c --block 1024 --gangs 528,1056 -- -DN=256 ;;
  esac
done
rm -rf $T
