#!/usr/bin/env python3
"""DRAM read bytes of every candidate of the himeno 128^3 space (block 32x4x2, grids up to 1016),
as the H100 measured them (himeno128.plan.measured.json.gz) and as three exact models give them:
the L2 in hashed sets of 512 sectors (this plan's predictions, cf4d8e0 --exact), one fully
associative LRU of 33.9 MiB (bench/results/2026-11-27-exact-reuse/) and of 50 MiB
(bench/results/2026-11-27-exact-late/). Per model: mean |log(model/measured)|, the candidates
within 10 %, and the same for the candidates with k on blockIdx.z alone; then those candidates.

    python3 validation/results/h100/2026-11-28-himeno128-l2-sets/dram_by_model.py"""
import gzip
import json
import math
import os

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.join(here, "..", "..", "..", "..")
plan = json.load(gzip.open(os.path.join(here, "himeno128.plan.json.gz"), "rt"))["kernels"][0]["candidates"]
meas = json.load(gzip.open(os.path.join(here, "himeno128.plan.measured.json.gz"), "rt"))["kernels"][0]["candidates"]
measured = {c["id"]: c["metrics"]["dram__bytes_read.sum"] for c in meas if c["status"] == "ok"}


def key(mapping, block, grid):
    return (mapping, tuple(block), tuple(grid))


models = {"sets 512 (33.9 MiB)": {key(c["cuda_mapping"], c["block"], c["grid"]): c["predicted"]["dram_read_bytes"] for c in plan}}
for name, path in (("one LRU 33.9 MiB", "bench/results/2026-11-27-exact-reuse/himeno128_b32x4x2_g1016_exact.json.gz"),
                   ("one LRU 50 MiB", "bench/results/2026-11-27-exact-late/himeno128_b32x4x2_g1016_exact.json.gz")):
    rep = json.load(gzip.open(os.path.join(root, path), "rt"))["nests"][0]["ranking"]
    models[name] = {key(c["cuda_mapping"], c["block"], c["grid"]): c["counters"]["dram_read_bytes"] for c in rep}
cands = [(c["id"], key(c["cuda_mapping"], c["block"], c["grid"])) for c in plan if c["id"] in measured]
kz = [(i, k) for i, k in cands if "k->tx+bz" in k[0] or "k->ty+bz" in k[0] or "k->tz+bz" in k[0]]
print(f"{len(cands)} candidates measured; {len(kz)} with k on blockIdx.z")
for name, mod in models.items():
    for label, group in (("all", cands), ("k on bz", kz)):
        errs = [abs(math.log(mod[k] / measured[i])) for i, k in group if k in mod]
        print(f"{name:20s} {label:8s} n {len(errs):3d}  mean |log| {sum(errs) / len(errs):.3f}  "
              f"within 10 % {sum(e < math.log(1.1) for e in errs)}")
print("\nk on blockIdx.z, DRAM MB read: measured | " + " | ".join(models))
for i, k in kz:
    print(f"  {k[0]:28s} {'x'.join(map(str, k[2])):9s} {measured[i] / 1e6:7.1f} | " +
          " | ".join(f"{m[k] / 1e6:7.1f}" if k in m else "    -" for m in models.values()))
