#!/usr/bin/env python3
"""How a tie rule among near-equal predictions would have picked on a measured validation run.

    scripts/plateau_pick.py all.plan.json all.measured.json [FACTOR...]

(merged files: scripts/merge_validation.py). For each factor (default 1.0 1.02 1.05), per kernel:
the plateau is the measured candidates whose predicted time is within FACTOR of the fastest
measured prediction; the pick is the plateau's widest block x (then the lowest model rank), the
rule rank.h's SP_RANK_PLATEAU applies. FACTOR 1.0 is the plain model pick (the lowest predicted
time). Prints per factor: picks that are the measured best, within 10 % of it, and the geometric
mean of baseline time / pick time against the plan's nvc and gcc baselines (with the kernels
where the pick is more than 2 % faster / slower).
Only measured candidates can be picked here: a plan of the model's top N holds the head of the
plateau, not necessarily all of it."""
import json
import math
import sys


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    plan, meas = (json.load(open(p)) for p in sys.argv[1:3])
    factors = [float(x) for x in sys.argv[3:]] or [1.0, 1.02, 1.05]
    time = {(k["id"], c["id"]): c["time_us"]["median"]
            for k in meas["kernels"] for c in k["candidates"] if c.get("status") == "ok"}
    for tie in factors:
        within = best = n = 0
        ratios = {"nvc": [], "gcc": []}
        for k in plan["kernels"]:
            kid = k["id"]
            cands = [c for c in k["candidates"] if (kid, c["id"]) in time]
            if not cands:
                continue
            n += 1
            fastest = min(c["predicted"]["time_us"] for c in cands)
            plateau = [c for c in cands if c["predicted"]["time_us"] <= tie * fastest]
            pick = min(plateau, key=lambda c: (-c["block"][0], c["model_rank"]))
            t = time[(kid, pick["id"])]
            t_best = min(time[(kid, c["id"])] for c in cands)
            within += t <= 1.10 * t_best
            best += t <= t_best
            for name, lst in ratios.items():
                d = k.get("defaults", {}).get(name)
                if (kid, d) in time:
                    lst.append(time[(kid, d)] / t)
        cells = "; ".join(f"vs {name} gm {geomean(r):.3f} (faster {sum(x > 1.02 for x in r)}, "
                          f"slower {sum(x < 0.98 for x in r)})" for name, r in ratios.items())
        print(f"factor {tie}: pick is the best in {best}, within 10 % in {within} of {n}; {cells}")


if __name__ == "__main__":
    main()
