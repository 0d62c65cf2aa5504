#!/usr/bin/env python3
"""DRAM reads of every candidate of every example under two builds, matched by mapping, block
and grid; prints how many changed and the 25 largest changes (|log ratio|). Where the GPU
measured a changed candidate (validation/results/h100/*/comparison.csv, the latest run that has
it), the line ends with its measured DRAM reads, and a last line gives the mean |log| error of
both builds over those candidates.

    bench/dram_between_builds.py NEW_BIN OLD_BIN   (from the repo root; each example with its
                                                   `// schedpredict-args:` line)

An example that fails under either build is named on stderr and left out; the exit status is
then 1.
"""
import csv
import glob
import json
import math
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
from counters_measured import example_args  # noqa: E402


def key(c):
    return (c["cuda_mapping"], tuple(c["block"]), tuple(c["grid"]))


def dims(text):
    """[x, y, z] of a comparison.csv's "XxYxZ"."""
    return [int(v) for v in text.split("x")]


def measured_dram():
    """{(nest "file.c:line", mapping, [block], [grid]): measured DRAM read bytes}, the latest run's."""
    out = {}
    for path in sorted(glob.glob("validation/results/h100/*/comparison.csv")):
        with open(path, newline="") as f:
            for r in csv.DictReader(f):
                if r.get("status") != "ok" or not r.get("dram_read_bytes_measured"):
                    continue
                nest = ":".join(r["kernel"].split(":")[:2])
                try:
                    k = (nest, r["cuda_mapping"], tuple(dims(r["block"])), tuple(dims(r["grid"])))
                    out[k] = float(r["dram_read_bytes_measured"])
                except ValueError:
                    continue
    return out


def nests(binary, src):
    r = subprocess.run([binary, "--format", "json", "--top", "100000", "-q", src] + example_args(src),
                       capture_output=True, text=True)
    if r.returncode != 0:
        print(f"{src}: {binary} failed: {r.stderr.strip()}", file=sys.stderr)
        return None
    return json.loads(r.stdout)["nests"]


def main():
    new, base = sys.argv[1], sys.argv[2]
    total = changed = failed = 0
    big = []
    for src in sorted(glob.glob("examples/*.c")):
        a, b = nests(new, src), nests(base, src)
        if a is None or b is None:
            failed += 1
            continue
        for na, nb in zip(a, b):
            old = {key(c): c for c in nb["ranking"]}
            for c in na["ranking"]:
                o = old.get(key(c))
                if not o:
                    continue
                total += 1
                x, y = c["counters"]["dram_read_bytes"], o["counters"]["dram_read_bytes"]
                if x != y:
                    changed += 1
                    big.append((abs(math.log((x + 1) / (y + 1))), na["location"], c["cuda_mapping"],
                                c["block"], c["grid"], c["screened_only"], y / 1e6, x / 1e6))
    big.sort(reverse=True)
    print(f"{total} candidates, {changed} with other DRAM reads")
    measured = measured_dram()
    err_old, err_new = [], []
    for i, b in enumerate(big):
        nest = ":".join(os.path.basename(b[1]).split(":")[:2])
        m = measured.get((nest, b[2], tuple(b[3]), tuple(b[4])))
        if m and b[6] > 0 and b[7] > 0:
            err_old.append(abs(math.log(b[6] * 1e6 / m)))
            err_new.append(abs(math.log(b[7] * 1e6 / m)))
        if i < 25:
            print("  %.2f %s %s %s %s screened_only=%s %.1f -> %.1f MB" % b +
                  (f", measured {m / 1e6:.1f} MB" if m else ""))
    if err_old:
        print(f"measured on the H100: {len(err_old)} of them, mean |log error| "
              f"{sum(err_old) / len(err_old):.2f} -> {sum(err_new) / len(err_new):.2f}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
