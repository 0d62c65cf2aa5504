#!/usr/bin/env python3
"""Fits the time model's two figures for blocks without iterations (arch files:
block_dispatch_ns, empty_block_ns) to a run of validation/probes/empty_block_probe.cu, and
prints how well the model (rank/time.c, sp_empty_seconds) then predicts each launch.

    scripts/fit_empty_blocks.py PROBE.csv [--sms N] [--ncu NCU.csv]

PROBE.csv: the probe's output (rows_copy: W working blocks of T threads, the rest of the grid
returning at once). For each launch with idle blocks, the working blocks' time is the same
kernel's time with grid = W, and the model adds what the idle blocks cost after it:
  slots = resident blocks per SM (2048 / T, at most 32) x SMs; free = max(0, slots - W);
  during the work, idle blocks pass at min(1 / dispatch, free / empty) a ns;
  those left pass at min(1 / dispatch, slots / empty).
Grid search of the root mean square of log(predicted / measured): dispatch 0.50-0.80 ns in
steps of 0.01, empty 10-400 ns in steps of 5.
Also the launch's fixed time: the least-squares line of the empty kernels (`nothing`) of 64-512
threads, time = launch + per-block x grid; its intercept. (1024-thread blocks deal slower,
0.68 ns a block, and are left out.) Once as the probe's CUDA events see it, and with --ncu from
`gpu__time_duration` (`ncu --csv --print-units base -k regex:nothing --metrics
gpu__time_duration.sum,launch__grid_size,launch__block_size` of the probe, the minimum of each
grid and block), the time the model predicts (arch files: launch_us). Exit 0; 2 on a bad command
line or file."""
import argparse
import csv
import math
import sys


def load(path, kernel="rows_copy"):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    return [(int(r["threads"]), int(r["grid"]), int(r["working_blocks"]), float(r["time_us"]) * 1e3)
            for r in rows if r["kernel"] == kernel]


def load_ncu(path):
    """The empty kernels of an ncu CSV as load() gives them: the minimum duration of each grid and
    block size."""
    def num(v):
        return float(v.replace(",", ""))
    with open(path, newline="") as f:  # ncu's quoted rows, among the probe's own output
        rows = list(csv.DictReader(line for line in f if line.startswith('"')))
    by_id = {}
    for r in rows:
        if r.get("Kernel Name", "").startswith("nothing"):
            by_id.setdefault(r["ID"], {})[r["Metric Name"]] = num(r["Metric Value"])
    best = {}
    for m in by_id.values():
        key = (int(m["launch__block_size"]), int(m["launch__grid_size"]))
        best[key] = min(best.get(key, math.inf), m["gpu__time_duration.sum"])
    return [(t, g, 0, ns) for (t, g), ns in sorted(best.items())]


def fit_launch(empty):
    """(intercept ns, ns a block, launches, worst |residual| ns) of the empty kernels of 64-512
    threads, or None without two grid sizes."""
    pts = [(g, ns) for t, g, w, ns in empty if t <= 512]
    n = len(pts)
    sx, sy = sum(g for g, _ in pts), sum(ns for _, ns in pts)
    sxx, sxy = sum(g * g for g, _ in pts), sum(g * ns for g, ns in pts)
    if n < 2 or n * sxx == sx * sx:
        return None
    slope = (n * sxy - sx * sy) / (n * sxx - sx * sx)
    icpt = (sy - slope * sx) / n
    return icpt, slope, n, max(abs(ns - icpt - slope * g) for g, ns in pts)


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
    ap.add_argument("--ncu", help="an ncu CSV of the probe's empty kernels: their gpu__time_duration")
    a = ap.parse_args()
    try:
        data = load(a.csv)
        empty = load(a.csv, "nothing")
        empty_ncu = load_ncu(a.ncu) if a.ncu else None
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
    for label, kernels in (("CUDA events", empty), ("gpu__time_duration", empty_ncu)):
        line = fit_launch(kernels) if kernels else None
        if line:
            icpt, slope, n, worst = line
            print(f"launch {icpt / 1e3:.2f} us by {label}: empty kernels of 64-512 threads take "
                  f"{icpt / 1e3:.2f} us + {slope:.3f} ns a block ({n} launches, worst residual "
                  f"{worst / 1e3:.2f} us)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
