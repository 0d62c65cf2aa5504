#!/usr/bin/env python3
"""The sampled ranking of himeno 128^3 (--block 32x4x2 --gangs 1016, 134 candidates) against the
H100's counters and times of every candidate (validation/results/h100/2026-11-28-himeno128-l2-sets/):
per binary, mean |log(model/measured)| of DRAM read bytes and of time over all candidates and
over those with k on blockIdx.z, and those candidates' figures.

    python3 bench/results/2026-11-29-slab-rereads/himeno128_h100.py BIN [BIN...]"""
import gzip
import json
import math
import os
import subprocess
import sys

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..")
run = os.path.join(root, "validation/results/h100/2026-11-28-himeno128-l2-sets")
plan = json.load(gzip.open(os.path.join(run, "himeno128.plan.json.gz"), "rt"))["kernels"][0]["candidates"]
meas = {c["id"]: c for c in json.load(gzip.open(os.path.join(run, "himeno128.plan.measured.json.gz"), "rt"))["kernels"][0]["candidates"] if c["status"] == "ok"}
key = lambda c: (c["cuda_mapping"], tuple(c["block"]), tuple(c["grid"]))
measured = {key(p): (meas[p["id"]]["metrics"]["dram__bytes_read.sum"], meas[p["id"]]["time_us"]["median"]) for p in plan if p["id"] in meas}
src = os.path.join(root, "bench/results/2026-11-24-exact-8a114de/himeno128.c")
for binary in sys.argv[1:]:
    out = subprocess.run([binary, "--format", "json", "--top", "100000", "-q", src, "--block", "32x4x2", "--gangs", "1016"],
                         check=True, capture_output=True, text=True).stdout
    ranking = json.loads(out)["nests"][0]["ranking"]
    rows = [(c, measured[key(c)]) for c in ranking if key(c) in measured]
    def err(sel, f):
        e = [abs(math.log(f(c) / m)) for c, m in sel]
        return sum(e) / len(e) if e else float("nan")
    kz = [(c, m) for c, m in rows if "k->tx+bz" in c["cuda_mapping"]]
    dram = lambda c: c["counters"]["dram_read_bytes"]
    print(f"{binary}: {len(rows)} candidates matched; mean |log| DRAM reads {err([(c, m[0]) for c, m in rows], dram):.3f}, "
          f"time {err([(c, m[1]) for c, m in rows], lambda c: c['time']['total_us']):.3f}; "
          f"k->tx+bz ({len(kz)}): DRAM {err([(c, m[0]) for c, m in kz], dram):.3f}, time {err([(c, m[1]) for c, m in kz], lambda c: c['time']['total_us']):.3f}")
    for c, m in kz:
        print(f"  {c['cuda_mapping']:28s} grid {'x'.join(map(str, c['grid'])):9s} DRAM reads {dram(c) / 1e6:6.1f} MB (H100 {m[0] / 1e6:6.1f}), "
              f"time {c['time']['total_us']:6.1f} us (H100 {m[1]:6.1f})")
