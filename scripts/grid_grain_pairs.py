#!/usr/bin/env python3
"""Measured pairs of candidates that differ only in which grid dimension the thread-x loop is
dealt over: the same blocks and threads, blockIdx.x and blockIdx.y exchanged, the grid
transposed. Of each pair, "along" deals the thread-x loop over blockIdx.x (consecutive blocks
lie along the contiguous index), "across" over blockIdx.y. Prints every pair and, per GPU, how
the across grid's time compares with the along one's, with the model's prediction of both as
the plan recorded it.

    python3 scripts/grid_grain_pairs.py [--duration] [--results DIR]

Every dataset under validation/results/{h100,h200} with plans/ and measured/ counts (and the
H200 run of run 13's plans); a candidate measured in several runs counts once per run. The
evidence for the plateau's grain rule (include/schedpredict/rank.h, SP_RANK_PLATEAU)."""
import argparse, glob, json, math, os, statistics, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from h200_measured import load  # noqa: E402
from replay_measured import measured_us  # noqa: E402


def datasets(results):
    """(gpu, label, plans dir, measured dir)"""
    for gpu in ("h100", "h200"):
        for d in sorted(glob.glob(os.path.join(results, gpu, "*", "")) +
                        glob.glob(os.path.join(results, gpu, "*", "*", ""))):
            if os.path.isdir(d + "plans") and os.path.isdir(d + "measured"):
                yield gpu, os.path.relpath(d, results).rstrip("/"), d + "plans", d + "measured"
    r13 = os.path.join(results, "h100", "2026-11-27-drift-run13")
    if os.path.isdir(os.path.join(r13, "h200", "measured")):
        yield "h200", "h100/2026-11-27-drift-run13/h200", os.path.join(r13, "plans"), os.path.join(r13, "h200", "measured")


def swap_xy(mapping):
    return mapping.replace("bx", "B_X").replace("by", "bx").replace("B_X", "by")


def along(mapping):
    return any("tx" in part and "bx" in part for part in mapping.split())


def pairs(results, duration):
    out = []
    for gpu, label, pdir, mdir in datasets(results):
        for mf in sorted(glob.glob(os.path.join(mdir, "*.measured.json"))):
            name = os.path.basename(mf)[: -len(".plan.measured.json")]
            plans = sorted(glob.glob(os.path.join(pdir, name + ".plan.json*")))
            if not plans:
                continue
            plan, meas = load(plans[0]), load(mf)
            pk_by_id = {k["id"]: k for k in plan["kernels"]}
            for mk in meas["kernels"]:
                pk = pk_by_id.get(mk["id"])
                if not pk:
                    continue
                ok = {c["id"]: c for c in mk["candidates"] if c.get("status") == "ok"}
                by_key = {}
                for c in pk["candidates"]:
                    if c["id"] in ok:
                        t = measured_us(ok[c["id"]], duration)
                        if t:
                            by_key[(c["cuda_mapping"], tuple(c["block"]), tuple(c["grid"]))] = (c, t)
                for (m, b, g), (c, t) in by_key.items():
                    if not along(m) or "by" not in m:
                        continue
                    twin = by_key.get((swap_xy(m), b, (g[1], g[0], g[2])))
                    if twin:
                        out.append({"gpu": gpu, "dataset": label, "nest": mk["id"], "mapping": m, "block": b,
                                    "grid": g, "along_us": t, "across_us": twin[1],
                                    "pred_along_us": c["predicted"]["time_us"],
                                    "pred_across_us": twin[0]["predicted"]["time_us"]})
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--duration", action="store_true",
                    help="measured time: gpu__time_duration.sum where the run read it, not the CUDA events' median")
    ap.add_argument("--results", default=os.path.join(ROOT, "validation", "results"))
    a = ap.parse_args()
    ps = pairs(a.results, a.duration)
    if not ps:
        sys.exit("grid_grain_pairs: no measured pairs under " + a.results)
    for p in ps:
        print(f"{p['gpu']} {p['dataset'][:34]:34s} {p['nest']:22s} {p['mapping']:28s} "
              f"b{'x'.join(map(str, p['block'])):9s} g{'x'.join(map(str, p['grid'])):14s} "
              f"along {p['along_us']:9.1f} across {p['across_us']:9.1f} ({p['across_us'] / p['along_us']:.3f}) "
              f"predicted {p['pred_along_us']:9.1f} {p['pred_across_us']:9.1f}")
    print()
    for gpu in sorted({p["gpu"] for p in ps}):
        g = [p for p in ps if p["gpu"] == gpu]
        r = [p["across_us"] / p["along_us"] for p in g]
        pr = [p["pred_across_us"] / p["pred_along_us"] for p in g]
        print(f"{gpu}: {len(g)} pairs of {len({p['nest'] for p in g})} nests; across / along measured: "
              f"geometric mean {math.exp(statistics.mean(map(math.log, r))):.3f}, median {statistics.median(r):.3f}, "
              f"across slower by > 5 % in {sum(x > 1.05 for x in r)}, faster by > 5 % in {sum(x < 1 / 1.05 for x in r)}; "
              f"predicted: geometric mean {math.exp(statistics.mean(map(math.log, pr))):.4f}, "
              f"within 1 % in {sum(abs(x - 1) <= 0.01 for x in pr)}")


if __name__ == "__main__":
    main()
