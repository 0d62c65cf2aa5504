#!/usr/bin/env python3
"""How well the memory model's L2 loses the probe's region, against the GPU: the GPU's lost
share (DRAM bytes of `second` over the region, mean of the four filler/second rows) beside
build/l2_probe_replay's for each set size, and the sum of squared differences over the region
sizes and the fillers both measured (what arch/*.json's l2_reuse_set_sectors takes).

    python3 validation/results/h100/2026-11-27-fill-partner-probe/fit_sets.py [h200] [BIN] [SET_SECTORS...]
h200: the H200's run (h200/, arch h200; default the H100's); BIN: default build/l2_probe_replay."""
import collections
import os
import subprocess
import sys

from summarize import trials_with_counters

here = os.path.dirname(os.path.abspath(__file__))
args = sys.argv[1:]
gpu = "h100"
if args and args[0] == "h200":
    gpu = args.pop(0)
d = os.path.join(here, "h200") if gpu == "h200" else here
binary = args.pop(0) if args and not args[0].isdigit() else "build/l2_probe_replay"
sizes = args or ["0", "128", "256", "512", "1024"]


def measured(region_mb):
    """{filler MiB: lost share}, the mean over the trial rows (read/write filler, partner/same)."""
    lost = collections.defaultdict(list)
    for t, m in trials_with_counters(d, region_mb):
        lost[float(t["filler_mb"])].append(m["dram__bytes_read.sum"] / 2**20 / region_mb)
    return {f: sum(v) / len(v) for f, v in lost.items()}


gpu_lost = {r: measured(r) for r in (1, 4)}
out = subprocess.run([binary, gpu] + sizes, capture_output=True, text=True, check=True).stdout.splitlines()
fillers = [float(x) for x in out[1].split()[2:]]
print(out[0])
print("                   " + " ".join(f"{f:>6g}" for f in fillers) + "   sum sq. diff")
for r in (1, 4):
    print(f"GPU      region {r}  " + " ".join(f"{gpu_lost[r].get(f, float('nan')):6.3f}" for f in fillers))
model = collections.defaultdict(dict)
for line in out[2:]:
    w, r, *v = line.split()
    model[w][int(r)] = dict(zip(fillers, map(float, v)))
for w, by_region in model.items():
    sq = sum((by_region[r][f] - gpu_lost[r][f]) ** 2 for r in (1, 4) for f in fillers if f in gpu_lost[r])
    for r in (1, 4):
        tail = f"   {sq:.4f}" if r == 4 else ""
        name = "fully" if w == "0" else w
        print(f"{name:>8s} region {r}  " + " ".join(f"{by_region[r][f]:6.3f}" for f in fillers) + tail)
