#!/usr/bin/env python3
"""DRAM reads of every candidate of every example under two builds, matched by mapping, block
and grid; prints how many changed and the 25 largest changes (|log ratio|).

    bench/dram_between_builds.py NEW_BIN OLD_BIN   (from the repo root; each example with its
                                                   `// schedpredict-args:` line)

An example that fails under either build is named on stderr and left out; the exit status is
then 1.
"""
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
    for b in big[:25]:
        print("  %.2f %s %s %s %s screened_only=%s %.1f -> %.1f MB" % b)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
