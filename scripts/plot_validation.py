#!/usr/bin/env python3
"""Plots of `schedpredict compare --format json` as PNG files, after the dissertation's figures:

  cost_vs_time-NN.png  modeled cost (Eq. 7.3) vs measured time per kernel, log axes (Fig. 7.14);
                       the model's pick, the compiler default and the measured best are marked
  l1_hit-NN.png        modeled vs measured L1 hit rate of global loads per schedule (Fig. 7.11)
  l2_hit-NN.png        modeled vs measured L2 read hit rate per schedule, measured from sectors,
                       Hopper's raw lts__t_sector_op_read_hit_rate dotted beside it (Fig. 7.12)
  loads-NN.png         global load sectors (gld_transactions) and requests, modeled vs measured,
                       per schedule (Fig. 7.13)
  summary.png          all kernels at once: every counter and the time, modeled vs measured

Schedules are the candidates measured ok, in the model's rank order (1 = its pick) on the x axis.

usage: scripts/plot_validation.py COMPARISON.json [-o DIR] [--per-page N] [--kernels REGEX]
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
except ImportError:
    # Debian's python3-matplotlib (scripts/setup.sh) belongs to /usr/bin/python3, which need not be
    # the python3 on PATH (pyenv, a venv): use it when this interpreter lacks matplotlib.
    if os.path.realpath(sys.executable) != os.path.realpath("/usr/bin/python3") and \
            os.path.exists("/usr/bin/python3"):
        os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
    sys.exit("plot_validation.py: error: matplotlib is missing (Debian: apt-get install "
             "python3-matplotlib; scripts/setup.sh installs it)")

PICK = dict(marker="*", s=180, c="tab:red", edgecolors="black", linewidths=0.6, zorder=5)
DEFAULT = dict(marker="s", s=70, facecolors="none", edgecolors="tab:green", linewidths=1.8, zorder=6)
BEST = dict(marker="o", s=110, facecolors="none", edgecolors="tab:blue", linewidths=1.4, zorder=4)


def fail(msg):
    sys.exit("plot_validation.py: error: " + msg)


def load(path):
    try:
        with open(path) as f:
            doc = json.load(f)
    except OSError as e:
        fail("%s: cannot read: %s" % (path, e.strerror))
    except ValueError as e:
        fail("%s: not valid JSON: %s" % (path, e))
    if not isinstance(doc, dict) or doc.get("schema") != "schedpredict-comparison":
        fail("%s: schema: not a 'schedpredict-comparison' file (write one with "
             "'schedpredict compare --format json ...')" % path)
    if doc.get("schema_version", 0) > 1:
        fail("%s: schema_version: %s is newer than this script reads (1)" % (path, doc.get("schema_version")))
    return doc


def value(cand, key, side):
    v = cand.get("counters", {}).get(key, {}).get(side)
    return float(v) if isinstance(v, (int, float)) else math.nan


def ok_candidates(kernel):
    """Candidates in the statistics, by model rank."""
    cands = [c for c in kernel.get("candidates", []) if c.get("in_statistics")]
    return sorted(cands, key=lambda c: c.get("model_rank", 0))


def fmt(x, spec=".3f"):
    return "n/a" if x is None else format(x, spec)


def pages(kernels, per_page):
    for i in range(0, len(kernels), per_page):
        yield i // per_page + 1, kernels[i:i + per_page]


def grid(n):
    cols = min(n, 3)
    rows = (n + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(5.4 * cols, 4.0 * rows), squeeze=False)
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    return fig, list(axes.flat[:n])


def title(kernel):
    t = kernel["id"]
    d = kernel.get("dissertation")
    if d:
        t += "  [%s]" % d["benchmark"]
    return t


def save(fig, outdir, name, suptitle):
    """One legend for the figure, below the plots."""
    seen = {}
    for ax in fig.axes:
        for h, l in zip(*ax.get_legend_handles_labels()):
            seen.setdefault(l, h)
    fig.legend(seen.values(), seen.keys(), loc="lower center", ncol=min(7, len(seen)), fontsize=9)
    fig.suptitle(suptitle, fontsize=12)
    fig.tight_layout(rect=(0, 0.05, 1, 0.96))
    path = os.path.join(outdir, name)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print(path)


def mark_special(ax, cands, xs, ys):
    """Pick, default and measured best at their (x, y)."""
    for c, x, y in zip(cands, xs, ys):
        if math.isnan(x) or math.isnan(y):
            continue
        if c.get("measured_best"):
            ax.scatter([x], [y], label="measured best", **BEST)
        if c.get("chosen"):
            ax.scatter([x], [y], label="model's pick", **PICK)
        if c.get("compiler_default"):
            ax.scatter([x], [y], label="compiler default", **DEFAULT)


def plot_cost_vs_time(kernels, outdir, per_page):
    for page, ks in pages(kernels, per_page):
        fig, axes = grid(len(ks))
        for ax, k in zip(axes, ks):
            cands = ok_candidates(k)
            xs = [float(c.get("cost_xu") or math.nan) for c in cands]
            ys = [value(c, "time_us", "measured") for c in cands]
            ax.scatter(xs, ys, s=18, c="0.35", label="schedule")
            mark_special(ax, cands, xs, ys)
            if any(x > 0 for x in xs) and any(y > 0 for y in ys):
                ax.set_xscale("log")
                ax.set_yscale("log")
            st = k.get("stats", {})
            ax.set_title("%s\nR² %s (log-log %s)  ρ %s  speedup %s" % (
                title(k), fmt(st.get("r2_cost_vs_time")), fmt(st.get("r2_log_cost_vs_log_time")),
                fmt(st.get("spearman_cost_vs_time")), fmt(st.get("speedup_over_default"), ".2f")),
                fontsize=9)
            ax.set_xlabel("modeled memory access cost (Eq. 7.3)")
            ax.set_ylabel("measured time (µs)")
            ax.grid(True, which="both", alpha=0.3)
        save(fig, outdir, "cost_vs_time-%02d.png" % page,
             "Measured time vs modeled cost per schedule (after Fig. 7.14)")


def plot_per_schedule(kernels, outdir, per_page, name, what, series, ylabel, logy=False):
    """series: (label, function of a candidate, matplotlib style) drawn over the schedules."""
    for page, ks in pages(kernels, per_page):
        fig, axes = grid(len(ks))
        for ax, k in zip(axes, ks):
            cands = ok_candidates(k)
            xs = list(range(1, len(cands) + 1))
            for label, fn, style in series:
                ys = [fn(c) for c in cands]
                if style.get("bar") is not None:
                    off, w = style["bar"]
                    ax.bar([x + off for x in xs], ys, width=w, label=label, color=style["color"])
                else:
                    ax.plot(xs, ys, label=label, **{k2: v for k2, v in style.items() if k2 != "bar"})
            pick = [x for x, c in zip(xs, cands) if c.get("chosen")]
            dflt = [x for x, c in zip(xs, cands) if c.get("compiler_default")]
            for x in pick:
                ax.axvline(x, color="tab:red", alpha=0.35, lw=3, label="model's pick")
            for x in dflt:
                ax.axvline(x, color="tab:green", alpha=0.5, lw=1.5, ls="--", label="compiler default")
            if logy:
                ax.set_yscale("log")
            elif name != "loads":
                ax.set_ylim(-3, 103)
            ax.set_title(title(k) + "\n" + what(k), fontsize=9)
            ax.set_xlabel("schedule (by model rank)")
            ax.set_ylabel(ylabel)
            ax.grid(True, axis="y", alpha=0.3)
        save(fig, outdir, "%s-%02d.png" % (name, page), {
            "l1_hit": "L1 hit rate of global loads per schedule (after Fig. 7.11)",
            "l2_hit": "L2 read hit rate per schedule (after Fig. 7.12)",
            "loads": "Global memory loads per schedule (after Fig. 7.13)"}[name])


def plot_summary(kernels, outdir):
    panels = [
        ("global_hit_rate", "L1 hit rate (%)", False),
        ("l2_tex_read_hit_rate", "L2 read hit rate (%), from sectors", False),
        ("gld_transactions", "global load sectors", True),
        ("dram_read_bytes", "DRAM bytes read", True),
        ("global_load_requests", "global load requests", True),
        ("time_us", "time (µs)", True),
    ]
    fig, axes = grid(len(panels))
    cmap = plt.get_cmap("tab20")
    for ax, (key, label, logs) in zip(axes, panels):
        lo, hi = math.inf, -math.inf
        for i, k in enumerate(kernels):
            cands = ok_candidates(k)
            xs = [value(c, key, "modeled") for c in cands]
            ys = [value(c, key, "measured") for c in cands]
            pts = [(x, y) for x, y in zip(xs, ys) if not (math.isnan(x) or math.isnan(y))
                   and (not logs or (x > 0 and y > 0))]
            if not pts:
                continue
            ax.scatter([p[0] for p in pts], [p[1] for p in pts], s=10, color=cmap(i % 20),
                       label=k["id"] if i < 20 else None)
            lo = min(lo, *(min(p) for p in pts))
            hi = max(hi, *(max(p) for p in pts))
        if lo < hi:
            ax.plot([lo, hi], [lo, hi], color="black", lw=0.8, ls="--", label="modeled = measured")
        if logs and lo < hi:
            ax.set_xscale("log")
            ax.set_yscale("log")
        ax.set_xlabel("modeled " + label)
        ax.set_ylabel("measured " + label)
        ax.grid(True, which="both", alpha=0.3)
    handles, labels = axes[0].get_legend_handles_labels()
    if handles:
        fig.legend(handles, labels, fontsize=7, loc="lower center", ncol=min(6, len(labels)),
                   bbox_to_anchor=(0.5, -0.02))
    fig.suptitle("Modeled vs measured, every schedule measured ok, all kernels", fontsize=12)
    fig.tight_layout(rect=(0, 0.06, 1, 0.96))
    path = os.path.join(outdir, "summary.png")
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    print(path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("comparison", help="output of schedpredict compare --format json")
    ap.add_argument("-o", "--outdir", default=".", help="folder for the PNG files (default .)")
    ap.add_argument("--per-page", type=int, default=6, help="kernels per PNG (default 6)")
    ap.add_argument("--kernels", default=None, help="only kernels whose id matches this regex")
    a = ap.parse_args()
    if a.per_page < 1:
        fail("--per-page takes a positive number")
    doc = load(a.comparison)
    kernels = doc.get("kernels")
    if not isinstance(kernels, list):
        fail("%s: kernels: expected an array" % a.comparison)
    if a.kernels:
        try:
            rx = re.compile(a.kernels)
        except re.error as e:
            fail("--kernels: not a regular expression: %s" % e)
        kernels = [k for k in kernels if rx.search(k.get("id", ""))]
    kernels = [k for k in kernels if ok_candidates(k)]
    if not kernels:
        fail("no kernel has a candidate measured ok: nothing to plot")
    os.makedirs(a.outdir, exist_ok=True)

    plot_cost_vs_time(kernels, a.outdir, a.per_page)
    mae = lambda key: lambda k: "mean |error| %s points" % fmt(k.get("stats", {}).get(key), ".1f")
    plot_per_schedule(kernels, a.outdir, a.per_page, "l1_hit", mae("l1_hit_mae_points"), [
        ("modeled", lambda c: value(c, "global_hit_rate", "modeled"),
         dict(marker="o", ms=3, lw=1.2, color="tab:orange")),
        ("measured", lambda c: value(c, "global_hit_rate", "measured"),
         dict(marker="s", ms=3, lw=1.2, color="tab:blue")),
    ], "L1 hit rate (%)")
    plot_per_schedule(kernels, a.outdir, a.per_page, "l2_hit", mae("l2_hit_mae_points"), [
        ("modeled", lambda c: value(c, "l2_tex_read_hit_rate", "modeled"),
         dict(marker="o", ms=3, lw=1.2, color="tab:orange")),
        ("measured (hit sectors / sectors)", lambda c: value(c, "l2_tex_read_hit_rate", "measured"),
         dict(marker="s", ms=3, lw=1.2, color="tab:blue")),
        ("raw lts__t_sector_op_read_hit_rate", lambda c: value(c, "l2_tex_read_hit_rate", "measured_raw"),
         dict(lw=1, ls=":", color="0.5")),
    ], "L2 read hit rate (%)")

    def exact(k):
        s = k.get("stats", {}).get("load_sectors", {})
        return "sectors exact in %s of %s" % (s.get("exact"), s.get("n"))
    plot_per_schedule(kernels, a.outdir, a.per_page, "loads", exact, [
        ("sectors modeled", lambda c: value(c, "gld_transactions", "modeled"),
         dict(bar=(-0.2, 0.4), color="tab:orange")),
        ("sectors measured", lambda c: value(c, "gld_transactions", "measured"),
         dict(bar=(0.2, 0.4), color="tab:blue")),
        ("requests modeled", lambda c: value(c, "global_load_requests", "modeled"),
         dict(marker="x", ms=5, lw=0, color="tab:red")),
        ("requests measured", lambda c: value(c, "global_load_requests", "measured"),
         dict(marker="+", ms=7, lw=0, color="black")),
    ], "global loads (sectors, requests)", logy=True)
    plot_summary(kernels, a.outdir)


if __name__ == "__main__":
    main()
