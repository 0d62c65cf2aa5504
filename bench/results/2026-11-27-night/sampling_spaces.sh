#!/bin/bash
# usage: bench/results/2026-11-27-night/sampling_spaces.sh BIN (from the repo root; the environment passes through)
E=${EXACT:-bench/results/2026-11-27-exact-late} # EXACT=DIR: other references
B=$1
run() { f=$1; shift; echo "== $f"; python3 bench/sampling_error.py --exact-json $E/$f $B "$@" | grep -v "exact time"; }
run matmul1024_b32_g8448_exact.json.gz bench/results/2026-11-24-exact-8a114de/matmul1024.c --block 32 --gangs 8448
run 2mm_b32_g8448_exact.json.gz examples/2mm.c --block 32 --gangs 8448
run mm446_nvc_exact.json.gz bench/results/2026-11-24-exact/mm446.c --compiler nvc
run himeno128_b32x4x2_g1016_exact.json.gz bench/results/2026-11-24-exact-8a114de/himeno128.c --block 32x4x2 --gangs 1016
run 2mm17_b1024_g132_exact.json.gz examples/2mm.c --block 1024 --gangs 132
run 2mm_b1024_g528_exact.json.gz examples/2mm.c --block 1024 --gangs 528
run conv3d_b256_g1016_exact.json.gz examples/conv3d.c --block 256 --gangs 1016
run laplacian_b32x4x2_g1016_exact.json.gz examples/laplacian.c --block 32x4x2 --gangs 1016 -- -DNX=256 -DNY=256 -DNZ=256
run guarded_stencil_b32x32_g16896_exact.json.gz examples/guarded_stencil.c --block 32x32 --gangs 16896
