#!/usr/bin/env python3
"""The model's pick against both compiler baselines of a merged validation run.

    scripts/pick_vs_defaults.py all.plan.json all.measured.json   (scripts/merge_validation.py)

Per kernel the pick is the measured candidate of lowest model_rank, overall and among those an
OpenACC compiler can express; the baselines are the plan's "defaults" (gcc: GCC's schedule of the
nest as written; nvc: outer gang, vector(128)). Prints the geometric mean of baseline time / pick
time and in how many kernels the pick is more than 2 % faster or slower."""
import json, math, sys


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def summary(ratios):
    return (f"gm {geomean(ratios):.3f} (faster {sum(x > 1.02 for x in ratios)}, "
            f"slower {sum(x < 0.98 for x in ratios)})")


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    plan, meas = (json.load(open(p)) for p in sys.argv[1:3])
    time = {(k["id"], c["id"]): c["time_us"]["median"]
            for k in meas["kernels"] for c in k["candidates"] if c.get("status") == "ok"}
    ratios = {"nvc": ([], []), "gcc": ([], [])}  # (overall pick, expressible pick)
    for k in plan["kernels"]:
        kid = k["id"]
        cands = [c for c in k["candidates"] if (kid, c["id"]) in time]
        if not cands:
            continue
        pick = min(cands, key=lambda c: c["model_rank"])
        expressible = [c for c in cands if not c["openacc"].startswith("not expressible")]
        pick_ex = min(expressible, key=lambda c: c["model_rank"]) if expressible else None
        for name, (overall, ex) in ratios.items():
            base = time.get((kid, k.get("defaults", {}).get(name)))
            if base is None:
                continue
            overall.append(base / time[(kid, pick["id"])])
            if pick_ex:
                ex.append(base / time[(kid, pick_ex["id"])])
    for name, (overall, ex) in ratios.items():
        print(f"vs {name} default: n={len(overall)}  overall pick {summary(overall)}  "
              f"expressible pick {summary(ex)}")


if __name__ == "__main__":
    main()
