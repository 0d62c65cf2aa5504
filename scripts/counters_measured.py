#!/usr/bin/env python3
"""Holds a schedpredict binary's modeled counters against the H100 counters committed in the
repo, without a GPU: how far its load requests, load sectors, L1 hit rate, L2 read sectors and
DRAM read bytes are from what Nsight Compute counted (scripts/replay_measured.py does the same for the ranking).

    scripts/counters_measured.py BIN [--baseline BIN2] [--examples a,b] [--run DIR] [--simulated]
                                 [--exact]

Runs `BIN --format json --top 100000 -q examples/NAME.c ARGS` (ARGS: the example's
`// schedpredict-args:` line) for every example measured in --run (default: the eighth run,
validation/results/h100/2026-11-23-model-d7c4d47, whose comparison.csv holds each candidate's
measured counters), and matches candidates by (nest, mapping as its trace runs, block, grid;
scripts/trace_key.py). Per nest: the median over its matched candidates of |modeled/measured - 1|
(requests, sectors, L2 read sectors and the same against the L1's misses, DRAM read bytes, in %) and of |modeled - measured| L1 hit rate (points);
then over all candidates the median and mean. With --baseline, each cell is "BASE -> BIN" and
only candidates both binaries rank are counted; with --simulated, only those each binary simulated
past the screening (not `screened_only`: a screened candidate's counts are a short sample's
estimates); with --exact, the binaries simulate every candidate in full (schedpredict --exact);
rows where a cell moves by 0.05 or more end in
'*'. Exit 0; 1 when an example failed under a binary (reported; its candidates are left out);
2 on a bad command line or a missing binary or run."""
import argparse
import concurrent.futures
import csv
import json
import os
import shlex
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from trace_key import trace_mapping  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUN8 = os.path.join("validation", "results", "h100", "2026-11-23-model-d7c4d47")
# (label, JSON counter, comparison.csv column stem, relative error in % (else points))
METRICS = [("requests", "global_load_requests", "global_load_requests", True),
           ("sectors", "gld_transactions", "gld_transactions", True),
           ("L1 hit (pts)", "global_hit_rate", "global_hit_rate", False),
           ("L2 reads", "l2_tex_read_transactions", "l2_tex_read_transactions", True),
           # the model's L2 reads are the L1's misses; the GPU's L2 counts them after its request
           # coalescer merged some (validation/FORMATS.md)
           ("L1 misses", "l2_tex_read_transactions", "ld_l1_miss_sectors", True),
           ("DRAM reads", "dram_read_bytes", "dram_read_bytes", True)]


def key_of(file, line, mapping, block, grid):
    return (os.path.basename(file), int(line), trace_mapping(mapping, block, grid), tuple(block),
            tuple(grid))


def load_measured(run_dir):
    path = os.path.join(ROOT, run_dir, "comparison.csv")
    if not os.path.isfile(path):
        sys.exit(f"counters_measured: {path}: no comparison.csv (is --run a validation run?)")
    meas = {}
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            if r["status"] != "ok" or not r["global_load_requests_measured"]:
                continue
            file, line = r["kernel"].rsplit(":", 1)
            block = [int(x) for x in r["block"].split("x")]
            grid = [int(x) for x in r["grid"].split("x")]
            if not r.get("ld_l1_miss_sectors_measured"):  # runs compared before 2026-11-24
                r["ld_l1_miss_sectors_measured"] = max(
                    0.0, float(r["gld_transactions_measured"]) - float(r["ld_l1_hit_sectors_measured"]))
            meas[key_of(file, line, r["cuda_mapping"], block, grid)] = {
                m[2]: float(r[m[2] + "_measured"]) for m in METRICS}
    return meas


def example_args(src):
    with open(src, encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.startswith("// schedpredict-args:"):
                return shlex.split(line[len("// schedpredict-args:"):])
    return []


def run_example(binary, name, simulated=False, exact=False):
    """{key: counters} of the example's whole ranking (simulated: of its candidates simulated past
    the screening; exact: with every candidate simulated in full), or an error string."""
    src = os.path.join("examples", name + ".c")
    p = subprocess.run([binary, "--format", "json", "--top", "100000", "-q", src] +
                       (["--exact"] if exact else []) + example_args(os.path.join(ROOT, src)),
                       cwd=ROOT, capture_output=True, text=True)
    if p.returncode != 0:
        err = p.stderr.strip().splitlines()
        return f"exit {p.returncode}: {err[-1] if err else '(no message)'}"
    out = {}
    for n in json.loads(p.stdout).get("nests", []):
        file, line, _col = n["location"].rsplit(":", 2)
        for c in n.get("ranking", []):
            if simulated and c.get("screened_only"):
                continue
            out.setdefault(key_of(file, line, c["cuda_mapping"], c["block"], c["grid"]), c["counters"])
    return out


def error(modeled, measured, relative):
    if not relative:
        return modeled - measured
    return (modeled / measured - 1) * 100 if measured else 0.0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("binary")
    ap.add_argument("--baseline")
    ap.add_argument("--examples", help="comma-separated example names (default: all measured)")
    ap.add_argument("--run", default=RUN8, help="validation run directory (default: the eighth run)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--simulated", action="store_true",
                    help="only candidates simulated past the screening (their counts are not a sample's)")
    ap.add_argument("--exact", action="store_true", help="every candidate simulated in full")
    a = ap.parse_args()
    bins = [b for b in (a.baseline, a.binary) if b]
    for b in bins:
        if not os.access(b, os.X_OK):
            ap.error(f"{b}: not an executable")
    bins = [os.path.abspath(b) for b in bins]
    meas = load_measured(a.run)
    names = sorted({k[0][:-2] for k in meas})
    if a.examples:
        want = a.examples.split(",")
        missing = [w for w in want if w not in names]
        if missing:
            ap.error(f"not measured in {a.run}: {', '.join(missing)}")
        names = want
    jobs = [(b, n) for b in bins for n in names]
    with concurrent.futures.ThreadPoolExecutor(max(1, a.jobs)) as ex:
        results = list(ex.map(lambda j: run_example(*j, simulated=a.simulated, exact=a.exact), jobs))
    failed = 0
    model = {b: {} for b in bins}
    for (b, n), r in zip(jobs, results):
        if isinstance(r, str):
            print(f"counters_measured: {n} under {b}: {r}", file=sys.stderr)
            failed = 1
        else:
            model[b].update(r)
    rows = {}
    for key, m in meas.items():
        if key[0][:-2] not in names or any(key not in model[b] for b in bins):
            continue
        errs = [[abs(error(model[b][key][c], m[col], rel)) for (_, c, col, rel) in METRICS] for b in bins]
        rows.setdefault(f"{key[0]}:{key[1]}", []).append(errs)
    if not rows:
        print("counters_measured: no measured candidate matched", file=sys.stderr)
        return 1
    nb = len(bins)
    head = " | ".join(f"{label:>{16 if nb == 2 else 8}}" for label, *_ in METRICS)
    print(f"modeled vs measured counters ({a.run}); cells: median |error| per nest"
          + (f", {os.path.relpath(bins[0])} -> {os.path.relpath(bins[1])}" if nb == 2 else ""))
    print(f"{'nest':<24} {'n':>4} | {head}")

    def cell(vals):
        return " -> ".join(f"{v:7.2f}" for v in vals)

    everything = []
    for nest in sorted(rows):
        rs = rows[nest]
        everything += rs
        med = [[statistics.median(r[b][i] for r in rs) for b in range(nb)] for i in range(len(METRICS))]
        moved = nb == 2 and any(abs(x[0] - x[1]) >= 0.05 for x in med)
        print(f"{nest:<24} {len(rs):>4} | " + " | ".join(cell(x) for x in med) + (" *" if moved else ""))
    for i, (label, *_r) in enumerate(METRICS):
        md = [statistics.median(r[b][i] for r in everything) for b in range(nb)]
        mn = [sum(r[b][i] for r in everything) / len(everything) for b in range(nb)]
        print(f"all {len(everything)} candidates, {label}: median {cell(md)}, mean {cell(mn)}")
    return failed


if __name__ == "__main__":
    sys.exit(main())
