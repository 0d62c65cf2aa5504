#!/usr/bin/env python3
"""The empirical-search table (issue 6) from `schedvalidate tune --table` outputs.

    scripts/search_table.py OUT/*.search.json > search_table.md

Per kernel: the reference grid and its best time, the compiler default's time, then per method
(model, model+top3, nelder-mead and coordinate from OptACC's (256,128), nelder-mead from the
model's best) the speedup over the compiler default, OptACC's Pct (the percentage of the grid's
successful points strictly faster than the method's point; 0 = as good as the best) and the runs.
Then a summary beside OptACC's (top 5 % in 29 of 36 kernels; 7 to 11 runs on average) and the
kernels where the model's point is worse than a search's.
"""
import json
import math
import sys

METHODS = ["model", "model+top3", "nelder-mead", "coordinate", "nelder-mead-model"]
LABEL = {"model": "model", "model+top3": "model+top3", "nelder-mead": "NM (256,128)",
         "coordinate": "CS (256,128)", "nelder-mead-model": "NM from model"}


def load(paths):
    kernels = []
    meta = []
    for p in paths:
        with open(p) as f:
            s = json.load(f)
        if s.get("schema") != "schedpredict-search":
            sys.exit(f"search_table: {p}: not a schedvalidate tune output (schema {s.get('schema')!r})")
        meta.append(s)
        for k in s["kernels"]:
            k["_file"] = p
            kernels.append(k)
    return meta, kernels


def fmt(x, spec):
    return "–" if x is None else format(x, spec)


def point(a):
    if not a:
        return "failed"
    w = f"×{a['w']}" if a.get("w", 1) != 1 else ""
    return f"({a['g']},{a['v']}{w})"


def geomean(xs):
    xs = [x for x in xs if x and x > 0 and math.isfinite(x)]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(argv) >= 2 else 2
    meta, kernels = load(argv[1:])
    devs = sorted({(m.get("device") or {}).get("name", "?") for m in meta})
    out = []
    out.append("# Empirical search: OptACC's methods beside the model\n")
    out.append(f"Device: {', '.join(devs)}. {len(meta)} plan(s), {len(kernels)} kernels. "
               f"Times are medians of {meta[0]['settings']['repeats']} runs (L2 flushed); speedups are "
               "over the compiler default (the nvc default at its plan launch); Pct is OptACC's: the "
               "percentage of the grid's successful points strictly faster than the method's point.\n")
    head = "| kernel | grid | grid best (G,V) ms | default ms | grid speedup |"
    sep = "|---|---|---|---|---|"
    for m in METHODS:
        head += f" {LABEL[m]} speedup / Pct / runs |"
        sep += "---|"
    out += [head, sep]
    done = [k for k in kernels if k.get("status") in ("done", "interrupted") and k.get("grid")]
    for k in done:
        g = k["grid"]
        ga = g.get("answer")
        d = k.get("default") or {}
        dms = d.get("ms")
        gsp = dms / ga["ms"] if ga and dms and ga.get("ms") else None
        row = (f"| {k['id']}{' (interrupted)' if k['status'] != 'done' else ''} | {g['grid']} | "
               f"{point(ga)} {fmt(ga and ga.get('ms'), '.4f')} | {fmt(dms, '.4f')} | {fmt(gsp, '.2f')} |")
        ms = {m["method"]: m for m in k.get("methods", [])}
        for name in METHODS:
            m = ms.get(name)
            if not m:
                row += " – |"
                continue
            stop = "*" if m.get("stopped") else ""
            row += (f" {fmt(m.get('speedup'), '.2f')} / {fmt(m.get('pct'), '.1f')} / "
                    f"{m['runs']}{stop} |")
        out.append(row)
    other = [k for k in kernels if k not in done]
    if other:
        out.append("")
        out.append("Not in the table: " + "; ".join(f"{k['id']} ({k.get('status')}: {k.get('message', '')})"
                                                    for k in other))
    out.append("\n`*`: the search hit its run or time budget. (G,V×W): num_gangs, vector_length, "
               "num_workers when not 1. Grids: grid32 when its estimated time fitted the per-kernel "
               "budget, else grid64 or grid128 (the `why` of each kernel in its search.json).\n")

    out.append("## Summary\n")
    done = [k for k in done if k["status"] == "done"]   # a partial grid gives no Pct to sum up
    if len(done) < len(kernels):
        out.append(f"Over the {len(done)} of {len(kernels)} kernels searched to the end.\n")
    out.append("| method | kernels in the top 5 % | mean runs | geomean speedup over the default |")
    out.append("|---|---|---|---|")
    n = len(done)
    for name in METHODS:
        ms = [m for k in done for m in k.get("methods", []) if m["method"] == name]
        top = sum(1 for m in ms if m.get("pct") is not None and m["pct"] <= 5)
        runs = sum(m["runs"] for m in ms) / len(ms) if ms else None
        out.append(f"| {LABEL[name]} | {top} of {n} | {fmt(runs, '.1f')} | "
                   f"{fmt(geomean([m.get('speedup') for m in ms]), '.3f')} |")
    gs = []
    for k in done:
        ga, d = k["grid"].get("answer"), k.get("default") or {}
        if ga and ga.get("ms") and d.get("ms"):
            gs.append(d["ms"] / ga["ms"])
    out.append(f"| grid (reference) | {n} of {n} | "
               f"{fmt(sum(k['grid']['runs'] for k in done) / n if n else None, '.0f')} | "
               f"{fmt(geomean(gs), '.3f')} |")
    out.append("\nOptACC (PGI on a K20, 36 kernels): Nelder-Mead and Coordinate Search land in the top 5 % "
               "in 29 of 36 kernels, with 7 and 11 runs on average.\n")

    worse = []
    for k in done:
        ms = {m["method"]: m for m in k.get("methods", [])}
        mod = ms.get("model", {}).get("answer")
        if not mod or not mod.get("ms"):
            worse.append(f"- {k['id']}: the model's point failed ({(mod or {}).get('status', 'not measured')})")
            continue
        for name in ("nelder-mead", "coordinate", "nelder-mead-model"):
            a = (ms.get(name) or {}).get("answer")
            if a and a.get("ms") and a["ms"] < mod["ms"]:
                worse.append(f"- {k['id']}: model {point(mod)} {mod['ms']:.4f} ms (Pct "
                             f"{fmt(ms['model'].get('pct'), '.1f')}) is slower than {LABEL[name]} "
                             f"{point(a)} {a['ms']:.4f} ms ({mod['ms'] / a['ms']:.2f}x)")
                break
    out.append("## Where the model's point is worse than a search's\n")
    out += worse if worse else ["None."]
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
