#!/usr/bin/env python3
"""The fill-partner probe's table: per trial, the share of `second`'s L2 read sectors that hit
and its DRAM reads, from the plain run's trial list and the ncu run's rows (same order); then
the footprint at which half of `second`'s sectors come from DRAM again, per row and on average
(what arch/*.json's l2_reuse_bytes takes).

    python3 validation/results/h100/2026-11-27-fill-partner-probe/summarize.py [DIR]
DIR: this directory (H100) or its h200/ (default: this directory)."""
import collections
import csv
import gzip
import os
import sys

def trials_with_counters(d, region_mb):
    """[(trial row, {metric: value})] of the region's run, in trial order."""
    trials = list(csv.DictReader(open(os.path.join(d, f"fill_partner_r{region_mb}.csv"))))
    hdr, data = None, collections.OrderedDict()
    for row in csv.reader(gzip.open(os.path.join(d, f"fill_partner_r{region_mb}_ncu.csv.gz"), "rt")):
        if "ID" in row and "Metric Name" in row:
            hdr = row
        elif hdr and len(row) == len(hdr):
            x = dict(zip(hdr, row))
            data.setdefault(int(x["ID"]), {})[x["Metric Name"]] = float(x["Metric Value"].replace(",", ""))
    if len(data) != len(trials):
        sys.exit(f"{d}: {len(trials)} trials but {len(data)} ncu rows")
    return list(zip(trials, data.values()))


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    halves = []
    for r in (1, 4):
        runs = trials_with_counters(d, r)
        print(f"region {r} MB ({runs[0][0]['gpu']}): L2 hit share of second's reads / DRAM MB read")
        table = collections.defaultdict(dict)
        for t, m in runs:
            hit = m["lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum"] / m["lts__t_sectors_srcunit_tex_op_read.sum"]
            table[(t["filler"], t["second"])][float(t["filler_mb"])] = (hit, m["dram__bytes_read.sum"] / 2**20)
        fills = sorted({f for v in table.values() for f in v})
        print("filler second  " + " ".join(f"{f:>11g}" for f in fills))
        for (filler, second), v in table.items():
            print(f"{filler:6s} {second:7s} " + " ".join(f"{v[f][0]:5.2f}/{v[f][1]:5.2f}" for f in fills))
        # the region plus the filler where the lost share crosses 1/2, interpolated linearly
        for (filler, second), v in table.items():
            pts = [(f, v[f][1] / r) for f in fills]
            for (f0, l0), (f1, l1) in zip(pts, pts[1:]):
                if l0 < 0.5 <= l1:
                    halves.append(r + f0 + (0.5 - l0) / (l1 - l0) * (f1 - f0))
                    print(f"  {filler} filler, {second}: half lost at a footprint of {halves[-1]:.1f} MB")
                    break
        print()
    print(f"mean {sum(halves) / len(halves):.1f} MB (from {min(halves):.1f} to {max(halves):.1f})")


if __name__ == "__main__":
    main()
