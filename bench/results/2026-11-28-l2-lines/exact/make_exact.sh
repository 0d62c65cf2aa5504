#!/bin/bash
# usage: bench/results/2026-11-28-l2-lines/exact/make_exact.sh BIN (from the repo root): the --exact
# references of ../../2026-11-27-exact-sets/ again, for a model whose L2 keeps lines; two at a time,
# each file's wall seconds in times.txt.
B=$1
D=bench/results/2026-11-28-l2-lines/exact
one() {
  f=$1; shift
  s=$(date +%s)
  "$B" --format json --top 100000 -q --exact "$@" | gzip -9 > "$D/$f.tmp" && mv "$D/$f.tmp" "$D/$f"
  echo "$f $(( $(date +%s) - s ))" >> "$D/times.txt"
}
export -f one
export B D
cat <<'LIST' | xargs -P 2 -L 1 bash -c 'one "$@"' _
conv3d_b256_g1016_exact.json.gz examples/conv3d.c --block 256 --gangs 1016
laplacian_b32x4x2_g1016_exact.json.gz examples/laplacian.c --block 32x4x2 --gangs 1016 -- -DNX=256 -DNY=256 -DNZ=256
2mm_b32_g8448_exact.json.gz examples/2mm.c --block 32 --gangs 8448
mm446_nvc_exact.json.gz bench/results/2026-11-24-exact/mm446.c --compiler nvc
himeno128_b32x4x2_g1016_exact.json.gz bench/results/2026-11-24-exact-8a114de/himeno128.c --block 32x4x2 --gangs 1016
2mm17_b1024_g132_exact.json.gz examples/2mm.c --block 1024 --gangs 132
2mm_b1024_g528_exact.json.gz examples/2mm.c --block 1024 --gangs 528
matmul1024_b32_g8448_exact.json.gz bench/results/2026-11-24-exact-8a114de/matmul1024.c --block 32 --gangs 8448
guarded_stencil_b32x32_g16896_exact.json.gz examples/guarded_stencil.c --block 32x32 --gangs 16896
LIST
