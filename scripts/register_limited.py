#!/usr/bin/env python3
"""Which measured candidates ran fewer blocks an SM than the model of their plan assumed, because
of the registers their kernels held, and how far their times were from the plan's predictions.

    python3 scripts/register_limited.py [RESULTS_DIR...]   (default: validation/results/h100
                                                            and validation/results/h200)

Every `*/measured/NAME.plan.measured.json` under a directory with its `plans/NAME.plan.json[.gz]`:
a candidate (status ok, `registers` recorded) is register-limited when the blocks of its size
that fit an SM with its registers (allocated register_alloc_unit a warp, warps rounded down to
warp_alloc_granularity: the arch file of the plan's model_arch) are fewer than without, and its
grid has more blocks than the SMs hold with them. The plans' predictions assumed no register
limit (schedpredict before --registers). Measured time: the CUDA events' median, which every run
has. Prints, per directory, the counts and the median measured / predicted of both groups. (A
directory holds what any GPU measured under it: the H200's measurements of run 13's plans lie
under validation/results/h100/2026-11-27-drift-run13/h200/.)
"""
import glob
import gzip
import json
import math
import os
import statistics
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def load(path):
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        return json.load(f)


ARCHS = {}


def arch_limits(name):
    cache = ARCHS
    if name not in cache:
        a = load(os.path.join(ROOT, "arch", name + ".json"))
        cache[name] = {k: a[k]["value"] for k in ("sm_count", "warp_size", "max_threads_per_sm",
                                                  "max_blocks_per_sm", "max_warps_per_sm",
                                                  "registers_per_sm", "register_alloc_unit",
                                                  "warp_alloc_granularity")}
    return cache[name]


def blocks_per_sm(a, threads, regs):
    """Eq. 7.2 with the register limit (traces/arch.c, sp_arch_occupancy); regs 0: none"""
    warps = -(-threads // a["warp_size"])
    lim = [a["max_threads_per_sm"] // threads, a["max_blocks_per_sm"], a["max_warps_per_sm"] // warps]
    if regs:
        per_warp = -(-regs * a["warp_size"] // a["register_alloc_unit"]) * a["register_alloc_unit"]
        w = a["registers_per_sm"] // per_warp
        w -= w % a["warp_alloc_granularity"]
        lim.append(w // warps)
    return max(0, min(lim))


def candidates(results_dir):
    for mf in sorted(glob.glob(os.path.join(results_dir, "**", "measured", "*.plan.measured.json"),
                               recursive=True)):
        run = os.path.dirname(os.path.dirname(mf))
        name = os.path.basename(mf)[: -len(".plan.measured.json")]
        plans = [p for p in (f"{run}/plans/{name}.plan.json", f"{run}/plans/{name}.plan.json.gz")
                 if os.path.exists(p)]
        if not plans:
            continue
        plan, meas = load(plans[0]), load(mf)
        a = arch_limits(plan.get("model_arch") or "h100")
        kernels = {k["id"]: k for k in plan["kernels"]}
        for mk in meas["kernels"]:
            if mk["id"] not in kernels:
                continue
            byid = {c["id"]: c for c in kernels[mk["id"]]["candidates"]}
            for mc in mk["candidates"]:
                c = byid.get(mc["id"])
                if mc.get("status") != "ok" or c is None or not mc.get("registers"):
                    continue
                threads = c["block"][0] * c["block"][1] * c["block"][2]
                nblocks = c["grid"][0] * c["grid"][1] * c["grid"][2]
                with_regs = blocks_per_sm(a, threads, mc["registers"])
                limited = with_regs < blocks_per_sm(a, threads, 0) and nblocks > with_regs * a["sm_count"]
                yield limited, mc["time_us"]["median"] / c["predicted"]["time_us"]


def main():
    dirs = sys.argv[1:] or [os.path.join(ROOT, "validation/results/h100"),
                            os.path.join(ROOT, "validation/results/h200")]
    for d in dirs:
        if not os.path.isdir(d):
            sys.exit(f"register_limited: {d}: no such directory")
        groups = {True: [], False: []}
        for limited, ratio in candidates(d):
            groups[limited].append(math.log(ratio))
        n = len(groups[True]) + len(groups[False])
        if not n:
            print(f"{d}: no measured candidate with registers")
            continue
        med = {k: math.exp(statistics.median(v)) if v else float("nan") for k, v in groups.items()}
        print(f"{os.path.relpath(d, ROOT)}: {n} measured candidates, {len(groups[True])} register-limited: "
              f"median measured/predicted {med[True]:.3f}, the others {med[False]:.3f}")


if __name__ == "__main__":
    main()
