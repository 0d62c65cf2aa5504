#!/usr/bin/env python3
"""Error of sampling against full simulation: runs schedpredict with and without --exact on a
kernel and compares the counters of every candidate both runs rank in their top N, and whether
the top 3 is the same.

    bench/sampling_error.py SCHEDPREDICT FILE.c [ARGS...]
"""
import json
import subprocess
import sys

def run(cmd):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out)["nests"]

binary, src, args = sys.argv[1], sys.argv[2], sys.argv[3:]
base = [binary, "--format", "json", "--top", "100000", "-q", src] + args
sampled, exact = run(base), run(base + ["--exact"])
fields = ["global_load_requests", "gld_transactions", "ld_l1_hit_sectors",
          "l2_tex_read_transactions", "dram_read_bytes"]
for ns, ne in zip(sampled, exact):
    key = lambda c: (c["cuda_mapping"], tuple(c["block"]), tuple(c["grid"]))
    exact_by = {key(c): c for c in ne["ranking"]}
    worst = {f: 0.0 for f in fields}
    refined = [c for c in ns["ranking"][:8]]
    for c in refined:
        e = exact_by[key(c)]
        for f in fields:
            a, b = c["counters"][f], e["counters"][f]
            if b:
                worst[f] = max(worst[f], abs(a - b) / b)
    top_s = [key(c) for c in ns["ranking"][:3]]
    top_e = [key(c) for c in ne["ranking"][:3]]
    print(f"{ns['location']}: {ns['candidates_evaluated']} candidates; top 3 identical: "
          f"{top_s == top_e}; best sampled is exact rank "
          f"{[key(c) for c in ne['ranking']].index(top_s[0]) + 1}")
    print("  worst relative error over the sampled top 8: " +
          ", ".join(f"{f} {100 * worst[f]:.2f}%" for f in fields))
