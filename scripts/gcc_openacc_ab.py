#!/usr/bin/env python3
"""Alternating (ABAB) timing of the GCC OpenACC proof: the noise floor from identical binaries.

    scripts/gcc_openacc_ab.py AB.jsonl MANIFEST.json

AB.jsonl: JSON lines of the harness (`bin/NAME.VARIANT REPS`) with "example", "variant" and "pass"
added, the variants run in alternating order pass by pass (fixed first on odd passes), so that a
drift of the GPU's clock or of the host does not favour one variant. Each process's first timed
call is dropped (it pays the first-launch costs the checked call did not absorb). MANIFEST.json
(scripts/gcc_openacc_build.sh) says which examples --fix left unchanged: their two binaries
compile the same source, so their ratio is the noise floor."""
import json, os, statistics, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gcc_openacc_table import geomean, load_manifest  # noqa: E402


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    times = {}
    for line in open(sys.argv[1]):
        r = json.loads(line)
        if "times_us" in r:
            times.setdefault((r["example"], r["function"]), {}).setdefault(r["variant"], []).extend(
                r["times_us"][1:])
    manifest = load_manifest(sys.argv[2])
    same, changed = [], []
    for key, v in sorted(times.items()):
        if "orig" in v and "fixed" in v:
            o, f = statistics.median(v["orig"]), statistics.median(v["fixed"])
            unchanged = not manifest.get(key[0], {}).get("fixed", True)
            (same if unchanged else changed).append((key, o, f, o / f, len(v["orig"])))
    print("| example | function | as written µs | fixed µs | speedup | timed calls each |")
    print("|---|---|---|---|---|---|")
    for (ex, fn), o, f, r, n in changed:
        print(f"| {ex} | {fn} | {o:.1f} | {f:.1f} | {r:.2f} | {n} |")
    ratios = [r for *_, r, _ in changed]
    print(f"\nGeometric mean over the {len(changed)} functions --fix changed: {geomean(ratios):.2f}x "
          f"(faster by more than 15 % in {sum(r > 1.15 for r in ratios)}, "
          f"slower by more than 15 % in {sum(r < 1 / 1.15 for r in ratios)}).")
    rs = sorted(r for *_, r, _ in same)
    print(f"\nNoise floor: the {len(same)} functions --fix left unchanged (identical code in both "
          f"binaries) give ratios {rs[0]:.2f} to {rs[-1]:.2f}, median {statistics.median(rs):.2f}: "
          + ", ".join(f"{fn} {r:.2f}" for (ex, fn), _, _, r, _ in same) + ".")


if __name__ == "__main__":
    main()
