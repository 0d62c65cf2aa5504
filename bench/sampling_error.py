#!/usr/bin/env python3
"""Error of sampling against full simulation: runs schedpredict with and without --exact on a
kernel and compares the counters of every candidate the sampled run ranks in its top 8 (the
refined ones), and whether the top 3 is the same.

    bench/sampling_error.py [--exact-json FILE] [--save-exact FILE] SCHEDPREDICT FILE.c [ARGS...]

--save-exact FILE keeps the --exact run's JSON; --exact-json FILE reuses one instead of running
--exact again (it takes minutes at realistic sizes), e.g. to compare two builds; a FILE ending
in .gz is read compressed (bench/results/2026-11-22-exact/ keeps some).
"""
import gzip
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
from trace_key import cand_key  # noqa: E402

def run(cmd):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out)

argv = sys.argv[1:]
exact_json = save_exact = None
while argv and argv[0].startswith("--"):
    if argv[0] == "--exact-json":
        exact_json = argv[1]
    elif argv[0] == "--save-exact":
        save_exact = argv[1]
    else:
        sys.exit(f"unknown option {argv[0]}")
    argv = argv[2:]
binary, src, args = argv[0], argv[1], argv[2:]
base = [binary, "--format", "json", "--top", "100000", "-q"]
sampled = run(base + [src] + args)["nests"]
if exact_json:
    exact = json.load((gzip.open if exact_json.endswith(".gz") else open)(exact_json, "rt"))
else:
    exact = run(base + ["--exact", src] + args)  # before the file: ARGS may hold "--"
    if save_exact:
        json.dump(exact, open(save_exact, "w"))
exact = exact["nests"]
fields = ["global_load_requests", "gld_transactions", "ld_l1_hit_sectors",
          "l2_tex_read_transactions", "l2_read_hit_sectors", "dram_read_bytes",
          "dram_write_bytes", "st_sectors"]
for ns, ne in zip(sampled, exact):
    # by trace: an exact run of an older model may hold twins (same trace, another name) and
    # name a class by another of them; they count once
    exact_by = {}
    for c in ne["ranking"]:
        exact_by.setdefault(cand_key(c), c)
    exact_ranking = list(exact_by.values())
    worst = {f: 0.0 for f in fields}
    spurious = {}  # per field: the largest sampled count where the exact one is 0
    worst_time = 0.0
    top8 = ns["ranking"][:8]
    for c in top8:
        e = exact_by[cand_key(c)]
        worst_time = max(worst_time, abs(c["time"]["total_us"] / e["time"]["total_us"] - 1))
        for f in fields:
            a, b = c["counters"][f], e["counters"][f]
            if b:
                worst[f] = max(worst[f], abs(a - b) / b)
            elif a:
                worst[f] = float("inf")
                spurious[f] = max(spurious.get(f, 0), a)
    top_s = [cand_key(c) for c in ns["ranking"][:3]]
    top_e = [cand_key(c) for c in exact_ranking[:3]]
    # Candidates whose exact predictions are equal (mirror-image mappings, grids the same up to
    # a transposition) cannot be told apart, and the tie rule may order them either way: the top
    # 3 is also identical "up to ties" when its exact times are those of the exact run's top 3.
    # Both runs order near-ties by the plateau rule (the widest block first among times within
    # 5 % of the fastest), so the exact run's top 3 is its report's first three, not always the
    # three fastest.
    t = lambda c: round(exact_by[c]["time"]["total_us"], 6)
    best_e = sorted(round(c["time"]["total_us"], 6) for c in exact_ranking[:3])
    nsampled = sum(1 for c in top8 if c["sampled"])
    # how much slower, in the exact model, the sampled pick is than the exact pick
    pick_gap = exact_by[top_s[0]]["time"]["total_us"] / exact_ranking[0]["time"]["total_us"] - 1
    print(f"{ns['location']}: {ns['candidates_evaluated']} candidates, {nsampled} of the top 8 "
          f"sampled; top 3 identical: {top_s == top_e}, up to exact ties: "
          f"{sorted(t(c) for c in top_s) == best_e}; best sampled is exact rank "
          f"{[cand_key(c) for c in exact_ranking].index(top_s[0]) + 1} "
          f"({100 * pick_gap:+.4f} % of the exact pick's time)")
    print("  exact time of the sampled top 3 (us): " +
          ", ".join(f"{t(c):.1f}" for c in top_s) + "; exact top 3: " +
          ", ".join(f"{x:.1f}" for x in best_e))
    print("  worst relative error over the sampled top 8: " +
          ", ".join(f"{f} {100 * worst[f]:.2f}%" +
                    (f" (exact 0, sampled up to {spurious[f]})" if f in spurious else "")
                    for f in fields) +
          f"; predicted time {100 * worst_time:.2f}%")
