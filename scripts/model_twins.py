#!/usr/bin/env python3
"""How far apart the GPU ran candidates that the model could not tell apart: in a validation
run's comparison.csv, the candidates of one nest and block shape whose modeled counters and
modeled time are all equal form a group; the measured time's max/min within each group is a
spread no ranking by this model can recover, a floor for its regret and time error on that run.

    scripts/model_twins.py COMPARISON.csv... [--show N]

Prints, per file: the groups and their candidates, the median, 75th and 90th percentile and
largest spread, how many groups spread more than 10 %, and the N (default 10) widest groups
with their mappings, grids and measured times. Counters compared: those of the file among load
requests, load sectors, L1 hit sectors, L2 read sectors and hits, DRAM read and write bytes.
Exit 0; 2 on a bad command line or an unreadable file."""
import csv
import statistics
import sys

COUNTERS = ["global_load_requests", "gld_transactions", "ld_l1_hit_sectors",
            "l2_tex_read_transactions", "l2_read_hit_sectors", "dram_read_bytes",
            "dram_write_bytes"]


def groups_of(path):
    """{key: [rows]} of a comparison.csv's measured candidates with equal modeled figures."""
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        fields = [c + "_modeled" for c in COUNTERS if c + "_modeled" in (reader.fieldnames or [])]
        fields.append("time_us_modeled")
        groups = {}
        for r in reader:
            if r.get("status") != "ok" or not r.get("time_us_measured"):
                continue
            try:
                key = (r["kernel"], r["block"]) + tuple(round(float(r[c]), 6) for c in fields)
                float(r["time_us_measured"])
            except (KeyError, ValueError):
                continue
            groups.setdefault(key, []).append(r)
    return {k: v for k, v in groups.items() if len(v) >= 2}


def percentile(sorted_values, p):
    return sorted_values[min(len(sorted_values) - 1, int(p * len(sorted_values)))]


def main(argv):
    show = 10
    paths = []
    i = 0
    while i < len(argv):
        if argv[i] == "--show" and i + 1 < len(argv):
            try:
                show = int(argv[i + 1])
            except ValueError:
                sys.exit(f"model_twins.py: --show wants a number, not '{argv[i + 1]}'")
            i += 2
        elif argv[i].startswith("-"):
            print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
            return 2
        else:
            paths.append(argv[i])
            i += 1
    if not paths:
        print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
        return 2
    for path in paths:
        try:
            groups = groups_of(path)
        except OSError as e:
            print(f"model_twins.py: {path}: {e.strerror}", file=sys.stderr)
            return 2
        spread = []
        for rows in groups.values():
            t = [float(r["time_us_measured"]) for r in rows]
            spread.append((max(t) / min(t), rows))
        print(f"{path}: {len(groups)} groups the model predicts alike "
              f"({sum(len(r) for r in groups.values())} candidates)")
        if not spread:
            continue
        ratios = sorted(s for s, _ in spread)
        print(f"  measured max/min in a group: median {statistics.median(ratios):.3f}, "
              f"75th {percentile(ratios, 0.75):.3f}, 90th {percentile(ratios, 0.9):.3f}, "
              f"largest {ratios[-1]:.3f}; {sum(r > 1.1 for r in ratios)} groups over 1.10")
        for s, rows in sorted(spread, key=lambda x: -x[0])[:show]:
            members = ", ".join(f"{r['cuda_mapping']} {r['grid']} {float(r['time_us_measured']):.1f}"
                                for r in rows)
            print(f"  {s:.2f}x {rows[0]['kernel']} block {rows[0]['block']}, modeled "
                  f"{float(rows[0]['time_us_modeled']):.1f} us: {members}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
