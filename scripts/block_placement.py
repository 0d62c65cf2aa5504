#!/usr/bin/env python3
"""Which blocks share an SM on the GPU, against the model's round-robin (block b on SM b mod S):
reads a CSV of validation/probes/block_sm_map.cu (block, smid, start_ns, end_ns; .gz too).

    scripts/block_placement.py FILE.csv[.gz] [--sms S] [--period P]

Prints how many of the first S blocks went to distinct SMs, how many blocks run with block
b - S on one SM, and of the pairs of blocks resident on one SM at the same time, how many have
equal b mod P and equal b div P (blocks that read the same columns or the same rows of a
P-block-wide grid-stride nest: matmul's GCC default, 32-lane blocks over 4096 columns, P = 128),
on the GPU and under the model's placement with the same blocks resident per SM."""
import argparse
import collections

from placement_csv import read_placement

ap = argparse.ArgumentParser()
ap.add_argument("file")
ap.add_argument("--sms", type=int, default=132)
ap.add_argument("--period", type=int, default=128)
a = ap.parse_args()
sm, start, end = read_placement(a.file)
n, S, P = len(sm), a.sms, a.period


def pairs(assign, overlap):
    by = collections.defaultdict(list)
    for b, s in enumerate(assign):
        by[s].append(b)
    tot = col = row = 0
    for bl in by.values():
        for x in range(len(bl)):
            for y in range(x + 1, len(bl)):
                if overlap(bl[x], bl[y]):
                    tot += 1
                    col += bl[x] % P == bl[y] % P
                    row += bl[x] // P == bl[y] // P
    return tot, col, row


resident = collections.Counter(sm)
per_sm = max(1, min(max(resident.values()), -(-n // S)))
most = 0
for s in resident:
    ev = sorted([(start[b], 1) for b in range(n) if sm[b] == s] + [(end[b], -1) for b in range(n) if sm[b] == s],
                key=lambda e: (e[0], e[1]))
    cur = 0
    for _, d in ev:
        cur += d
        most = max(most, cur)
gpu = pairs(sm, lambda x, y: start[x] < end[y] and start[y] < end[x])
# the model: SM b mod S, its blocks in waves of `most` resident at once
model = pairs([b % S for b in range(n)], lambda x, y: (x // S) // most == (y // S) // most)
print(f"{a.file}: {n} blocks; the first {min(n, S)} on {len(set(sm[:S]))} SMs; "
      f"{sum(1 for b in range(S, n) if sm[b] == sm[b - S])} on the SM of block b-{S}; at most {most} resident on one SM")
print(f"  co-resident pairs: GPU {gpu[0]}, {gpu[1]} with equal b mod {P}, {gpu[2]} with equal b div {P}; "
      f"model {model[0]}, {model[1]}, {model[2]}")
