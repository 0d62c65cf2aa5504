#!/usr/bin/env python3
"""usage (from the repo root): python3 validation/results/h200/2026-11-29-guards/h200_picks.py BIN
Ranks continue_stencil.c and guarded_stencil.c with BIN --arch h200 and prints, for the candidates
this run measured (matched by mapping, block and grid: scripts/trace_key.py), the H200 model's
rank and predicted time beside the measured time, best ranked first."""
import gzip, json, os, subprocess, sys
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, "scripts")
from trace_key import cand_key
for f in ["continue_stencil", "guarded_stencil"]:
    plan = json.load(gzip.open(os.path.join(here, "plans", f + ".plan.json.gz"), "rt"))
    meas = json.load(open(os.path.join(here, "measured", f + ".plan.measured.json")))
    out = subprocess.run([sys.argv[1], "--arch", "h200", "--format", "json", "--top", "100000", "-q",
                          "examples/%s.c" % f], capture_output=True, text=True, check=True).stdout
    ranking = json.loads(out)["nests"][0]["ranking"]
    rank = {cand_key(c): (i + 1, c["time"]["total_us"]) for i, c in enumerate(ranking)}
    byid = {c["id"]: c for k in plan["kernels"] for c in k["candidates"]}
    rows = []
    for k in meas["kernels"]:
        for mc in k["candidates"]:
            c = byid[mc["id"]]
            r, p = rank[cand_key(c)]
            rows.append((r, p, mc["time_us"]["median"], c["cuda_mapping"], c["block"], c["grid"]))
    rows.sort()
    best = min(r[2] for r in rows)
    print("%s: the H200 model's pick measured %.1f us, the measured best %.1f us" % (f, rows[0][2], best))
    print("  rank  pred_us  meas_us  mapping, block, grid")
    for r in rows:
        print("  %4d %8.1f %8.1f  %s %s %s" % r)
