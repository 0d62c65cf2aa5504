#!/usr/bin/env python3
"""Heat maps of a kernel's time over num_gangs x vector_length, from the reference grid of a
`schedvalidate tune --table` output (the surfaces of OptACC's Fig. 2, seen from above).

    scripts/plot_search_surface.py SEARCH.json [-k REGEX] [-o DIR]

One PNG per kernel (DIR/surface-<kernel>.png): colour = median time (log scale), failed points
hatched grey; the grid's best (star) and the answers of the searches that ran on the grid's
schedule (Nelder-Mead, Coordinate Search from OptACC's start) are marked where they lie on it.
"""
import argparse
import json
import math
import os
import re
import sys

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.colors import LogNorm
except ImportError:
    # Debian's python3-matplotlib lives with /usr/bin/python3, which need not be the python3 on PATH
    if os.path.exists("/usr/bin/python3") and os.path.realpath(sys.executable) != "/usr/bin/python3":
        os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
    sys.exit("plot_search_surface.py: error: matplotlib is missing (apt-get install python3-matplotlib)")

MARKS = {"nelder-mead": dict(marker="o", c="white", edgecolors="black", s=70, label="Nelder-Mead (256,128)"),
         "coordinate": dict(marker="D", c="tab:cyan", edgecolors="black", s=55, label="Coordinate (256,128)")}


def surface(k, path):
    g = k["grid"]
    pts = g["points"]
    gs = sorted({p[0] for p in pts})
    vs = sorted({p[1] for p in pts})
    gi = {x: i for i, x in enumerate(gs)}
    vi = {x: i for i, x in enumerate(vs)}
    z = [[math.nan] * len(vs) for _ in gs]
    for gg, vv, ms in pts:
        z[gi[gg]][vi[vv]] = ms if ms is not None else math.nan
    finite = [x for row in z for x in row if not math.isnan(x)]
    if not finite:
        return False
    fig, ax = plt.subplots(figsize=(max(5, len(vs) * 0.28 + 2), max(4, len(gs) * 0.2 + 1.5)))
    ax.set_facecolor("0.85")
    im = ax.imshow(z, origin="lower", aspect="auto", cmap="viridis_r",
                   norm=LogNorm(vmin=min(finite), vmax=max(finite)), interpolation="nearest")
    fig.colorbar(im, ax=ax, label="median time (ms)")
    step_v = max(1, len(vs) // 16)
    step_g = max(1, len(gs) // 16)
    ax.set_xticks(range(0, len(vs), step_v), [str(v) for v in vs][::step_v], rotation=90)
    ax.set_yticks(range(0, len(gs), step_g), [str(x) for x in gs][::step_g])
    ax.set_xlabel("vector_length")
    ax.set_ylabel("num_gangs")
    best = g.get("answer")
    if best and best["g"] in gi and best["v"] in vi:
        ax.scatter([vi[best["v"]]], [gi[best["g"]]], marker="*", s=220, c="tab:red", edgecolors="black",
                   label=f"grid best ({best['g']},{best['v']}) {best['ms']:.4g} ms", zorder=5)
    for m in k.get("methods", []):
        a = m.get("answer")
        if m["method"] in MARKS and a and a["g"] in gi and a["v"] in vi and a.get("w", 1) == 1:
            ax.scatter([vi[a["v"]]], [gi[a["g"]]], zorder=6, **MARKS[m["method"]])
    d = k.get("default") or {}
    ax.set_title(f"{k['id']}: {g['grid']} on candidate {g['candidate']}"
                 + (f"; default {d['ms']:.4g} ms" if d.get("ms") else ""), fontsize=9)
    ax.legend(fontsize=7, loc="upper right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    ap.add_argument("search")
    ap.add_argument("-k", "--kernels", default="", help="regex on kernel ids")
    ap.add_argument("-o", "--out", default=".")
    a = ap.parse_args()
    with open(a.search) as f:
        s = json.load(f)
    if s.get("schema") != "schedpredict-search":
        sys.exit(f"plot_search_surface.py: error: {a.search} is not a schedvalidate tune output")
    os.makedirs(a.out, exist_ok=True)
    n = 0
    for k in s["kernels"]:
        if not k.get("grid") or not re.search(a.kernels, k["id"]):
            continue
        path = os.path.join(a.out, "surface-" + re.sub(r"[^A-Za-z0-9_.-]", "_", k["id"]) + ".png")
        if surface(k, path):
            print(path)
            n += 1
    if not n:
        sys.exit("plot_search_surface.py: error: no kernel with grid points matched")


if __name__ == "__main__":
    main()
