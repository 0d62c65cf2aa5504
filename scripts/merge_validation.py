#!/usr/bin/env python3
"""Merges per-example validation files into one plan and one measurement file, so that one
`schedpredict compare` run (and one set of plots) covers every example:

    scripts/merge_validation.py OUTDIR PLANDIR MEASUREDDIR

PLANDIR holds NAME.plan.json (scripts/emit_plans.sh), MEASUREDDIR NAME.plan.measured.json
(scripts/gpu_validate.sh). OUTDIR gets all.plan.json and all.measured.json. Kernel ids are
file:line, unique across examples. Each measurement file must record the sha256 of the plan file
it ran; the merged measurement file records the merged plan's, after checking every part."""
import hashlib
import json
import os
import sys


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    out, plandir, measdir = sys.argv[1:]
    os.makedirs(out, exist_ok=True)
    plan = None
    meas = None
    names = sorted(f[: -len(".plan.json")] for f in os.listdir(plandir) if f.endswith(".plan.json"))
    for name in names:
        ppath = os.path.join(plandir, name + ".plan.json")
        mpath = os.path.join(measdir, name + ".plan.measured.json")
        p = json.load(open(ppath))
        if plan is None:
            plan = dict(p, kernels=[], skipped=[])
        plan["kernels"] += p.get("kernels", [])
        plan["skipped"] += p.get("skipped", [])
        if not os.path.exists(mpath):
            print(f"merge_validation: {name}: no measurements ({mpath})", file=sys.stderr)
            continue
        m = json.load(open(mpath))
        if m.get("plan", {}).get("sha256") != sha256(ppath):
            sys.exit(f"merge_validation: {mpath} was measured from another version of {ppath}")
        if meas is None:
            meas = dict(m, kernels=[])
        meas["kernels"] += m.get("kernels", [])
    if plan is None or meas is None:
        sys.exit("merge_validation: no plans or no measurements found")
    ids = [k["id"] for k in plan["kernels"]]
    if len(ids) != len(set(ids)):
        sys.exit("merge_validation: kernel ids repeat across plans")
    all_plan = os.path.join(out, "all.plan.json")
    with open(all_plan, "w") as f:
        json.dump(plan, f, indent=1)
    meas["plan"] = {"path": "all.plan.json", "sha256": sha256(all_plan)}
    with open(os.path.join(out, "all.measured.json"), "w") as f:
        json.dump(meas, f, indent=1)
    print(f"merge_validation: {len(plan['kernels'])} kernels from {len(names)} plans in {out}")


if __name__ == "__main__":
    main()
