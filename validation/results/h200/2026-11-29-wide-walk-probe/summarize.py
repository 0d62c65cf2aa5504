#!/usr/bin/env python3
"""(in this directory) each kernel and block width's walks over its along order, fastest of the
two repetitions in wide_walk.csv: python3 summarize.py"""
import collections
import csv
rows = list(csv.DictReader(line for line in open("wide_walk.csv") if not line.startswith("#")))
t = collections.defaultdict(list)
for r in rows:
    t[(r["kernel"], int(r["piece_bytes"]), r["order"], int(r["D"]))].append(float(r["time_us"]))
groups = collections.defaultdict(dict)
for (k, piece, o, d), v in t.items():
    groups[(k, piece)][(o, d)] = min(v)
print("| kernel | piece | along µs | L = 2 | 8 | 32 | whole column (L) |")
print("|---|---|---|---|---|---|---|")
for (k, piece), g in sorted(groups.items()):
    base = g[("along", 1)]
    walks = sorted(d for (o, d) in g if o == "walk")
    cells = [f"{g[('walk', d)] / base:.3f}" for d in walks]
    print(f"| {k} | {piece} B | {base:.1f} | " + " | ".join(cells[:-1]) + f" | {cells[-1]} ({walks[-1]}) |")
