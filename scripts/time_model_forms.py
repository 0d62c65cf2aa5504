#!/usr/bin/env python3
"""How well parameter-free ways of combining the time model's parts rank measured candidates.

    scripts/time_model_forms.py COMPARISON.csv REPORT_DIR

COMPARISON.csv: `schedpredict compare --format csv` of a GPU run (validation/results/<gpu>/<date>/).
REPORT_DIR: one `schedpredict --format json --top 100000 EXAMPLE.c ARGS` report per example
(NAME.json), whose candidates carry the time parts (dram_us, l2_us, l1_us, latency_us). Candidates
are matched by kernel (file:line), CUDA mapping, block and grid. Per form it prints the median
Spearman rho of predicted vs measured time over the nests, how often the form's first choice is
the measured best or within 10 % of it, and its measured speedup over the compiler default
(geometric mean, and in how many nests it is slower). Used to choose the form in rank/time.c
(README, "The model")."""
import csv, glob, json, math, os, statistics, sys


def spearman(a, b):
    def ranks(x):
        order = sorted(range(len(x)), key=lambda i: x[i])
        r = [0] * len(x)
        for pos, i in enumerate(order):
            r[i] = pos
        return r
    ra, rb = ranks(a), ranks(b)
    n = len(a)
    ma, mb = sum(ra) / n, sum(rb) / n
    num = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    den = math.sqrt(sum((x - ma) ** 2 for x in ra) * sum((y - mb) ** 2 for y in rb))
    return num / den if den else float("nan")


def load(csv_path, report_dir):
    model = {}
    for f in glob.glob(os.path.join(report_dir, "*.json")):
        try:
            report = json.load(open(f))
        except (OSError, ValueError):
            continue
        for nest in report.get("nests", []):
            path, line = nest["location"].split(":")[:2]
            kid = os.path.basename(path) + ":" + line
            for c in nest["ranking"]:
                key = (kid, c["cuda_mapping"], "x".join(map(str, c["block"])),
                       "x".join(map(str, c["grid"])))
                model[key] = c
    nests, missing = {}, 0
    for r in csv.DictReader(open(csv_path)):
        if r["status"] != "ok" or not r["time_us_measured"]:
            continue
        c = model.get((r["kernel"], r["cuda_mapping"], r["block"], r["grid"]))
        if c is None:
            missing += 1
            continue
        nests.setdefault(r["kernel"], []).append((float(r["time_us_measured"]), c,
                                                  r["compiler_default"] == "1"))
    return nests, missing


def evaluate(nests, form):
    rhos, speedups, best, within, count = [], [], 0, 0, 0
    for cands in nests.values():
        if len(cands) < 3:
            continue
        pred = [form(c["time"]) for _, c, _ in cands]
        meas = [m for m, _, _ in cands]
        pick = min(range(len(cands)), key=lambda i: pred[i])
        rhos.append(spearman(pred, meas))
        best += meas[pick] == min(meas)
        within += meas[pick] <= 1.1 * min(meas)
        count += 1
        default = [i for i, (_, _, d) in enumerate(cands) if d]
        if default:
            speedups.append(meas[default[0]] / meas[pick])
    gm = math.exp(sum(math.log(s) for s in speedups) / len(speedups))
    return statistics.median(rhos), best, within, count, gm, sum(s < 1 for s in speedups), len(speedups)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    nests, missing = load(sys.argv[1], sys.argv[2])
    n = sum(len(v) for v in nests.values())
    print(f"{n} measured candidates in {len(nests)} nests matched ({missing} not in the reports)")
    bw = lambda t: max(t["dram_us"], t["l2_us"], t["l1_us"])
    forms = [("larger of memory and waiting", lambda t: max(bw(t), t["latency_us"])),
             ("memory + waiting", lambda t: bw(t) + t["latency_us"]),
             ("2-norm of memory and waiting", lambda t: math.hypot(bw(t), t["latency_us"])),
             ("sum of all levels and waiting",
              lambda t: t["dram_us"] + t["l2_us"] + t["l1_us"] + t["latency_us"]),
             ("memory only", bw), ("waiting only", lambda t: t["latency_us"])]
    print("| form | median rho | pick = best | pick within 10 % | pick vs default (geomean) | slower than default |")
    print("|---|---|---|---|---|---|")
    for name, form in forms:
        rho, best, within, count, gm, slower, nd = evaluate(nests, form)
        print(f"| {name} | {rho:.2f} | {best}/{count} | {within}/{count} | {gm:.3f}x | {slower}/{nd} |")


if __name__ == "__main__":
    main()
