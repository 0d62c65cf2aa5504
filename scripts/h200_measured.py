#!/usr/bin/env python3
"""Every H200 measurement of planned candidates in the repo against a binary's `--arch h200`
model: its predicted times and its picks, without a GPU.

    python3 scripts/h200_measured.py BIN [--baseline BIN2] [--json FILE] [--duration] [--registers]

Datasets (plans and what the H200 measured for them):
  run13   validation/results/h100/2026-11-27-drift-run13/ (plans made for the H100 model,
          measured on an H200 under h200/), 13 examples
  guards  validation/results/h200/2026-11-29-guards/, continue_stencil and guarded_stencil
  redblack validation/results/h200/2026-11-29-redblack/, the plans of both models
          (--param color=1, the harness's value)
  fp      validation/results/h200/2026-11-29-fp-op-probe/, aos_particles, correlation, himeno
  model   validation/results/h200/2026-11-29-model-run/, 14 examples, the plans of the --arch
          h200 model with the floating-point terms and the H200's bandwidth curves
  grain   validation/results/h200/2026-11-30-grain-run/, the 10 examples whose pick the
          plateau's grain rule changed, the plans of the model with it (--param color=1 for
          redblack)
  rest    validation/results/h200/2026-11-30-rest-run/, the 6 examples no other H200 run
          measured, the plans of the model with the grain rule
  levels  validation/results/h200/2026-11-30-l2-levels-run/, the 19 examples whose pick the
          measured L2 bandwidth and the 3-norm of the levels changed, the plans of the model
          with them (--param color=1 for redblack)
  mlp     validation/results/h200/2026-11-30-mlp-run/, fdtd2d and himeno, whose pick the
          screening of whole bodies and the cap on a body's loads in flight changed, and
          conv2d, the plans of the model with them
  threads validation/results/h200/2026-11-30-threads-run/, the 16 examples whose pick the
          plateau's order by threads (blocks of at most 256 first) changed, the plans of the
          model with it
  uneven  validation/results/h200/2026-11-30-uneven-run/new/, the 5 examples whose pick the
          unequal-blocks charge for triangular nests only (also on exactly one wave) changed,
          the plans of the model with it
  uneven0 validation/results/h200/2026-11-30-uneven-run/base/, the same examples, the plans of
          the model before it (490624d), measured in the same device call

Each example runs as `BIN --arch h200 --format json --top 100000 -q examples/NAME.c ARGS` (ARGS:
its `// schedpredict-args:` line, and the dataset's own). A measured candidate (status ok) is
matched to the ranking by nest, mapping as its trace runs, block and grid (scripts/trace_key.py);
one measured in several datasets counts in each. Per nest: the pick is the matched candidate the
binary ranks first, the best the fastest measured; regret = pick / best - 1. Over candidates:
the time error, mean |log(measured / predicted)|, and how many are within 20 %.

The measured time is the CUDA events' median (time_us, as everywhere in this repo); with
--duration, CUPTI's gpu__time_duration.sum where the run read it. The two differ for kernels
of a few microseconds: the events also hold the launch's host side (fdtd2d.c:15's candidates,
1.7-2.5 us by duration, read 6-9 us by events, in no stable order)."""
import argparse, gzip, json, math, os, statistics, subprocess, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from counters_measured import example_args  # noqa: E402
from replay_measured import measured_us, print_by_bound, print_register_limited, registers_pick  # noqa: E402
from trace_key import cand_key  # noqa: E402

R13 = "validation/results/h100/2026-11-27-drift-run13"
GUARDS = "validation/results/h200/2026-11-29-guards"
RB = "validation/results/h200/2026-11-29-redblack"
FP = "validation/results/h200/2026-11-29-fp-op-probe"
MODEL = "validation/results/h200/2026-11-29-model-run"
MODEL_EXAMPLES = ["2mm", "atax", "bicg", "conv3d", "covariance", "divergence", "gemm", "heat3d", "jacobi2d",
                  "laplacian", "matmul", "mvt", "syr2k", "syrk"]
R13_EXAMPLES = ["collapse4", "conv2d", "fdtd2d", "gwv_explicit", "himeno", "jacobi", "kernels_region",
                "omp_target", "pointer_arith", "tile", "transpose", "triangular", "xreuse"]
GRAIN = "validation/results/h200/2026-11-30-grain-run"
GRAIN_EXAMPLES = ["2mm", "conv3d", "fdtd2d", "gemm", "himeno", "jacobi", "kernels_region", "redblack", "tile",
                  "yreuse"]
REST = "validation/results/h200/2026-11-30-rest-run"
REST_EXAMPLES = ["colmajor_runtime", "enum_sizes", "gesummv", "reverse_loop", "spmv_short_rows", "vla_param"]
LEVELS = "validation/results/h200/2026-11-30-l2-levels-run"
LEVELS_EXAMPLES = ["atax", "bicg", "conv2d", "correlation", "covariance", "divergence", "fdtd2d", "gwv_explicit",
                   "heat3d", "himeno", "jacobi", "jacobi2d", "kernels_region", "matmul", "pointer_arith",
                   "redblack", "tile", "transpose", "yreuse"]
MLP = "validation/results/h200/2026-11-30-mlp-run"
THREADS = "validation/results/h200/2026-11-30-threads-run"
THREADS_EXAMPLES = ["collapse4", "colmajor_runtime", "conv2d", "correlation", "covariance", "enum_sizes", "fdtd2d",
                    "jacobi", "kernels_region", "omp_target", "pointer_arith", "reverse_loop", "spmv_short_rows",
                    "triangular", "vla_param", "xreuse"]
UNEVEN = "validation/results/h200/2026-11-30-uneven-run"
UNEVEN_EXAMPLES = ["atax", "conv3d", "correlation", "covariance", "triangular"]
HARNESS_ARGS = {"redblack": ["--param", "color=1"]}  # the values the harness ran


def runs(dataset, d, examples, plan_suffix=".plan.json.gz", measured="measured"):
    """(dataset, example, plan, measured, extra arguments) of each example of a run directory"""
    return [(dataset, e, f"{d}/plans/{e}{plan_suffix}", f"{d}/{measured}/{e}.plan.measured.json",
             HARNESS_ARGS.get(e, [])) for e in examples]


DATASETS = (
    runs("run13", R13, R13_EXAMPLES, measured="h200/measured") +
    runs("guards", GUARDS, ("continue_stencil", "guarded_stencil")) +
    [("redblack", "redblack", f"{RB}/plans/redblack.{m}model.plan.json",
      f"{RB}/{m}-model/redblack.plan.measured.json", HARNESS_ARGS["redblack"]) for m in ("h100", "h200")] +
    runs("fp", FP, ("aos_particles", "correlation", "himeno"), plan_suffix=".plan.json") +
    runs("model", MODEL, MODEL_EXAMPLES) +
    runs("grain", GRAIN, GRAIN_EXAMPLES) +
    runs("rest", REST, REST_EXAMPLES) +
    runs("levels", LEVELS, LEVELS_EXAMPLES) +
    runs("mlp", MLP, ("conv2d", "fdtd2d", "himeno")) +
    runs("threads", THREADS, THREADS_EXAMPLES) +
    runs("uneven", f"{UNEVEN}/new", UNEVEN_EXAMPLES) +
    runs("uneven0", f"{UNEVEN}/base", UNEVEN_EXAMPLES))


def load(path):
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        return json.load(f)


def ranking(binary, name, extra, cache):
    key = (binary, name, tuple(extra))
    if key not in cache:
        src = f"examples/{name}.c"
        try:
            out = subprocess.run([binary, "--arch", "h200", "--format", "json", "--top", "100000", "-q",
                                  src] + example_args(os.path.join(ROOT, src)) + extra,
                                 capture_output=True, text=True, cwd=ROOT)
        except OSError as e:
            sys.exit(f"h200_measured: cannot run {binary}: {e.strerror}")
        if out.returncode != 0:
            sys.exit(f"h200_measured: {binary} on {name}: exit {out.returncode}: {out.stderr[-400:]}")
        nests = {}
        for n in json.loads(out.stdout)["nests"]:
            nid = n["location"].split("/")[-1].rsplit(":", 1)[0]
            nests[nid] = {cand_key(c): (i + 1, c["time"]) for i, c in enumerate(n["ranking"])}
        cache[key] = nests
    return cache[key]


def judge(binary, cache, duration, registers=False):
    """registers: each candidate's prediction from a ranking with --registers set to the count its
    compiled kernel had (the measurement's `registers`). Where a nest's candidates had one count,
    the pick is that ranking's first; where they had several that leave every candidate its warps,
    the first of the ranking without registers. Otherwise no one ranking holds them all (the nest
    is marked `mixed_registers`): the pick is the first, in the order of the ranking without
    registers, whose prediction with its registers is within the model's plateau (SP_RANK_PLATEAU,
    5 %) of the fastest such prediction."""
    nests = []
    for ds, name, plan_path, meas_path, extra in DATASETS:
        plan, meas = load(os.path.join(ROOT, plan_path)), load(os.path.join(ROOT, meas_path))
        pred = ranking(binary, name, extra, cache)
        for k in meas["kernels"]:
            pk = next(p for p in plan["kernels"] if p["id"] == k["id"])
            byid = {c["id"]: c for c in pk["candidates"]}
            rows, cands, unmatched, counts = [], [], 0, set()
            for mc in k["candidates"]:
                if mc.get("status") != "ok":
                    continue
                key = cand_key(byid[mc["id"]])
                t = measured_us(mc, duration)
                with_regs = pred
                if registers and mc.get("registers"):
                    counts.add(mc["registers"])
                    with_regs = ranking(binary, name, extra + ["--registers", str(mc["registers"])], cache)
                if key in with_regs.get(k["id"], {}):
                    rank, parts = with_regs[k["id"]][key]
                    p = parts["total_us"]
                    base = pred.get(k["id"], {}).get(key)
                    rows.append((rank, p, t, base[0] if base else rank))
                    cands.append({"pred_us": p, "time_us": t, "bound": parts.get("bound"),
                                  "rank": rank,
                                  "mapping": key[0], "block": list(key[1]), "grid": list(key[2]),
                                  "time": parts})
                    if registers:  # fewer warps an SM than without the registers
                        warps = parts.get("active_warps_per_sm")
                        cands[-1]["register_limited"] = (bool(base) and
                                                         warps != base[1].get("active_warps_per_sm"))
                        cands[-1]["pred_us_without_registers"] = base[1]["total_us"] if base else p
                else:
                    unmatched += 1
            if not rows:
                continue
            # several counts that leave every candidate its warps rank as the ranking without them
            limited = any(c.get("register_limited") for c in cands)
            mixed = len(counts) > 1 and limited
            pick = registers_pick(rows, lambda r: r[0], lambda r: r[1], lambda r: r[3], counts, limited)
            best = min(r[2] for r in rows)
            nests.append({"dataset": ds, "nest": k["id"], "n": len(rows), "unmatched": unmatched,
                          "log_errors": [math.log(r[2] / r[1]) for r in rows],
                          "pick_us": pick[2], "best_us": best, "regret": pick[2] / best - 1,
                          "mixed_registers": mixed, "candidates": cands})
    return nests


def summary(nests):
    errs = [e for n in nests for e in n["log_errors"]]
    return {"nests": len(nests), "candidates": len(errs),
            "unmatched": sum(n["unmatched"] for n in nests),
            "mean_abs_log": statistics.mean(abs(e) for e in errs),
            "within_20pct": sum(abs(math.exp(e) - 1) <= 0.2 for e in errs),
            "median_ratio": math.exp(statistics.median(errs)),
            "pick_best": sum(n["regret"] == 0 for n in nests),
            "pick_within_10pct": sum(n["regret"] <= 0.10 for n in nests),
            "median_regret": statistics.median(n["regret"] for n in nests)}


def summary_line(s):
    return (f"{s['nests']} nests, {s['candidates']} candidates ({s['unmatched']} unmatched); "
            f"time error {s['mean_abs_log']:.3f} mean |log|, {s['within_20pct']} within 20 %, "
            f"median measured/predicted {s['median_ratio']:.3f}; pick the measured best in "
            f"{s['pick_best']}, within 10 % in {s['pick_within_10pct']}, median regret "
            f"{100 * s['median_regret']:.1f} %")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("binary")
    ap.add_argument("--baseline", metavar="BIN2")
    ap.add_argument("--json", metavar="FILE",
                    help="write each binary's summary and nests, every matched candidate with its "
                         "measured and predicted time and the report's time parts (\"time\")")
    ap.add_argument("--duration", action="store_true",
                    help="measured time: gpu__time_duration.sum, not the CUDA events' median")
    ap.add_argument("--registers", action="store_true",
                    help="predict each candidate with --registers set to its compiled kernel's count "
                         "(what a user who gives --registers sees), and pick by those predictions")
    a = ap.parse_args()
    bins = [("new", os.path.abspath(a.binary))] + ([("base", os.path.abspath(a.baseline))] if a.baseline else [])
    cache, res = {}, {}
    for label, b in bins:
        res[label] = judge(b, cache, a.duration, a.registers)
    print(f"{'nest':34s} " + "  ".join(f"{label + ': |log| ratio regret':>30s}" for label, _ in bins))
    for i, n in enumerate(res["new"]):
        cells = []
        for label, _ in bins:
            m = res[label][i]
            cells.append(f"{statistics.mean(abs(e) for e in m['log_errors']):8.3f} "
                         f"{math.exp(statistics.median(m['log_errors'])):6.3f} {100 * m['regret']:6.1f} %")
        print(f"{n['dataset'] + ' ' + n['nest']:34s} " + "  ".join(f"{c:>30s}" for c in cells))
    print()
    for label, _ in bins:
        print(f"{label}: {summary_line(summary(res[label]))}")
    print("by dataset:")
    for ds in dict.fromkeys(n["dataset"] for n in res["new"]):
        for label, _ in bins:
            print(f"  {ds:8s} {label}: {summary_line(summary([n for n in res[label] if n['dataset'] == ds]))}")
    for label, _ in bins if a.registers else ():
        print_register_limited(label, [c for n in res[label] for c in n["candidates"]])
    print()
    print_by_bound({label: {"nests": res[label]} for label, _ in bins}, [label for label, _ in bins])
    if a.json:
        with open(a.json, "w") as f:
            json.dump({label: {"summary": summary(res[label]), "nests": res[label]} for label, _ in bins}, f, indent=1)


if __name__ == "__main__":
    main()
