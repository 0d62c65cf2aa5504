#!/usr/bin/env python3
"""Fits the time model's two figures for blocks without iterations (arch files:
block_dispatch_ns, empty_block_ns) to a run of validation/probes/empty_block_probe.cu, and
prints how well the model (rank/time.c, sp_empty_seconds) then predicts each launch.

    scripts/fit_empty_blocks.py PROBE.csv [--sms N]

PROBE.csv: the probe's output (rows_copy: W working blocks of T threads, the rest of the grid
returning at once). For each launch with idle blocks, the working blocks' time is the same
kernel's time with grid = W, and the model adds what the idle blocks cost after it:
  slots = resident blocks per SM (2048 / T, at most 32) x SMs; free = max(0, slots - W);
  during the work, idle blocks pass at min(1 / dispatch, free / empty) a ns;
  those left pass at min(1 / dispatch, slots / empty).
Grid search of the root mean square of log(predicted / measured): dispatch 0.50-0.80 ns in
steps of 0.01, empty 10-400 ns in steps of 5. Exit 0; 2 on a bad command line or file."""
import argparse
import csv
import math
import sys


def load(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    return [(int(r["threads"]), int(r["grid"]), int(r["working_blocks"]), float(r["time_us"]) * 1e3)
            for r in rows if r["kernel"] == "rows_copy"]


def predict(threads, grid, working, work_ns, sms, dispatch, empty):
    slots = min(32, 2048 // threads) * sms
    idle = grid - working
    free = max(0, slots - working)
    passed = min(idle, min(1 / dispatch, free / empty) * work_ns)
    return work_ns + (idle - passed) / min(1 / dispatch, slots / empty)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv")
    ap.add_argument("--sms", type=int, default=132)
    a = ap.parse_args()
    try:
        data = load(a.csv)
    except (OSError, KeyError, ValueError) as e:
        print(f"fit_empty_blocks: {a.csv}: {e}", file=sys.stderr)
        return 2
    base = {(t, w): ns for t, g, w, ns in data if g == w}
    runs = [(t, g, w, ns, base[(t, w)]) for t, g, w, ns in data if g > w and (t, w) in base]
    if not runs:
        print(f"fit_empty_blocks: {a.csv}: no launch with idle blocks and its baseline", file=sys.stderr)
        return 2

    def rms(d, e):
        return math.sqrt(sum(math.log(predict(t, g, w, b, a.sms, d, e) / ns) ** 2
                             for t, g, w, ns, b in runs) / len(runs))

    best = min((rms(d / 100, e), d / 100, e) for d in range(50, 81) for e in range(10, 401, 5))
    _, d, e = best
    print(f"block_dispatch_ns {d:.2f}, empty_block_ns {e}: {len(runs)} launches with idle blocks")
    errs, free = [], []
    for t, g, w, ns, b in runs:
        p = predict(t, g, w, b, a.sms, d, e)
        errs.append(abs(math.log(p / ns)))
        free.append(abs(math.log(b / ns)))
        print(f"  {t:5d} threads, grid {g:6d}, {w:5d} working: measured {ns / 1e3:7.2f} us, "
              f"predicted {p / 1e3:7.2f}, idle blocks free {b / 1e3:7.2f}")
    print(f"mean |log(predicted / measured)|: {sum(errs) / len(errs):.3f} (worst {max(errs):.3f}); "
          f"with idle blocks free: {sum(free) / len(free):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
