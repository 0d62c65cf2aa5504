#!/usr/bin/env python3
"""Capped grids against full grids in a measured H100 run: for every candidate whose grid has
fewer than a quarter of the blocks of the largest grid measured with the same nest, mapping and
block, how much slower (measured) the capped grid was than the full one, over how much slower
the model predicted it (the run's own model, from comparison.csv). 1.0: the model had the ratio
right; above 1: the capped grid was slower than predicted.

    scripts/capped_vs_full.py [RUN_DIR]   (default: the tenth run,
                                           validation/results/h100/2026-11-23-lane-loops-b441b9a)
"""
import collections
import csv
import math
import os
import sys


def pairs(path):
    by = collections.defaultdict(list)
    for r in csv.DictReader(open(path)):
        if r['status'] != 'ok':
            continue
        try:
            measured, predicted = float(r['time_us_measured']), float(r['time_us_modeled'])
        except ValueError:
            continue
        g = [int(x) for x in r['grid'].split('x')]
        by[(r['kernel'], r['cuda_mapping'], r['block'])].append(
            (g[0] * g[1] * g[2], r['grid'], predicted, measured))
    for (kernel, mapping, block), runs in sorted(by.items()):
        runs.sort()
        full = runs[-1]
        for c in runs[:-1]:
            if 4 * c[0] > full[0]:
                continue
            yield (kernel, mapping, block, c[1], full[1], c[2], full[2], c[3], full[3],
                   (c[3] / full[3]) / (c[2] / full[2]))


def main(argv):
    run = argv[0] if argv else 'validation/results/h100/2026-11-23-lane-loops-b441b9a'
    path = os.path.join(run, 'comparison.csv')
    if not os.path.exists(path):
        sys.exit(f'no {path}')
    print(f"{'nest':22} {'ratio':>5} {'mapping':28} {'block':9} {'capped':10} {'full':11}"
          f" {'predicted us':>15} {'measured us':>15}")
    logs = []
    for k, m, b, cg, fg, cp, fp, cm, fm, ratio in pairs(path):
        logs.append(math.log(ratio))
        print(f"{k:22} {ratio:5.2f} {m:28} {b:9} {cg:10} {fg:11} {cp:7.1f} {fp:7.1f} {cm:7.1f} {fm:7.1f}")
    if logs:
        logs.sort()
        print(f"{len(logs)} pairs: median {math.exp(logs[len(logs) // 2]):.3f}, geometric mean "
              f"{math.exp(sum(logs) / len(logs)):.3f}")


if __name__ == '__main__':
    main(sys.argv[1:])
