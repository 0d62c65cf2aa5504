#!/usr/bin/env python3
"""Writes a synthetic block placement CSV (block,smid,start_ns,end_ns) for placement_replay, to
test a rule for the GPU's placement against a recorded one
(validation/results/h100/2026-11-23-placement-replay/README.md).

    scripts/synth_placement.py --blocks 8448 --per-sm 32 --first RECORDED.csv[.gz] --refill random -o OUT.csv

The first wave (SMs x --per-sm blocks) goes where --first says: `rr` (block b on SM b mod S)
or a recorded CSV (each block's SM as recorded). The blocks after it (--refill):
  fifo    block b on the SM of block b - W (W = the first wave): each SM's blocks finish in the
          order they started and take the next block in turn
  random  the free slots of the first wave's SMs in a random order (seeded): each SM runs
          --per-sm more blocks, which ones is left to chance
start_ns is the block index (each SM starts its blocks in block order). Exit 2 on bad input."""
import argparse
import random
import sys

from placement_csv import read_placement


def recorded_sms(path, nblocks):
    sm = read_placement(path)[0][:nblocks]
    if len(sm) < nblocks or None in sm:
        print("synth_placement: %s does not list all %d blocks" % (path, nblocks), file=sys.stderr)
        sys.exit(2)
    return sm


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--blocks", type=int, required=True, help="blocks in the grid")
    ap.add_argument("--per-sm", type=int, required=True, help="blocks an SM holds at once")
    ap.add_argument("--sms", type=int, default=132, help="SMs (default 132)")
    ap.add_argument("--first", default="rr", help="rr, or a recorded placement CSV")
    ap.add_argument("--refill", choices=["fifo", "random"], default="random")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("-o", "--output", required=True)
    a = ap.parse_args()
    if a.blocks < 1 or a.per_sm < 1 or a.sms < 1:
        ap.error("--blocks, --per-sm and --sms must be positive")
    wave = min(a.blocks, a.sms * a.per_sm)
    first = [b % a.sms for b in range(a.blocks)] if a.first == "rr" else recorded_sms(a.first, a.blocks)
    sm = first[:wave]
    rng = random.Random(a.seed)
    slots = []
    for b in range(wave, a.blocks):
        if a.refill == "fifo":
            sm.append(sm[b - wave])
            continue
        if not slots:
            slots = [s for s in range(a.sms) for _ in range(a.per_sm)]
            rng.shuffle(slots)
        sm.append(slots.pop())
    try:
        f = open(a.output, "x")
    except FileExistsError:
        print("synth_placement: %s exists; it is not replaced (remove it, or name another -o)" % a.output,
              file=sys.stderr)
        sys.exit(2)
    with f:
        f.write("block,smid,start_ns,end_ns\n")
        for b, s in enumerate(sm):
            f.write("%d,%d,%d,0\n" % (b, s, b))


if __name__ == "__main__":
    main()
