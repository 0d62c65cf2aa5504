#!/usr/bin/env python3
"""Replays a schedpredict binary's ranking against the H100 measurements committed in the repo,
without a GPU: how good its picks would have been.

    scripts/replay_measured.py BIN [--baseline BIN2] [--examples a,b] [--json FILE] [--registers]
                               [--jobs N] [--timeout S] [--results DIR] [--duration]

Runs `BIN --format json --top 100000 -q examples/NAME.c ARGS` (ARGS: the example's first
`// schedpredict-args:` line, split as the shell would; scripts/emit_plans.sh) for every example
that has measurements, at most --jobs (default 2) at a time, and matches each measured candidate
(status ok) to the new ranking by (nest file name and line, mapping, block, grid; the mapping
without hardware dimensions of extent 1, see scripts/trace_key.py; twins measured in one plan count as
one candidate, the mean of their medians); ids are not
used across the two, they may shift. Measured candidates that do not match are listed, not
dropped silently.

Datasets (under --results, default validation/results/h100):
  run1    2026-11-22/                 first run, 1,935 candidates (plans of up to 40 per nest)
  run2    2026-11-22-model-7aa0fc7/   second run, 665 candidates (6 best + 4 sampled + baselines)
  run3    2026-11-22-model-6e59c49/   third run, 778 candidates (8 best + 4 sampled + baselines)
  run4    2026-11-22-model-6910a10/   fourth run, 775 candidates (the same, with the plateau rule)
  run5    2026-11-22-reduction-combine/  jacobi.c:18 and himeno.c:18 (the reduction nests) again,
          with one atomic per block instead of per warp; in "merged" they replace runs 1-4's
  run6    2026-11-22-reduction-combine/run6/  the same two examples, fresh plans of the model
          with the reduction-combine term (in "merged", with run5, replacing runs 1-4's)
  run7    2026-11-23-model-2108e9c/   seventh run, 787 candidates, all examples, with DRAM writes
  run8    2026-11-23-model-d7c4d47/   eighth run, 778 candidates, all examples: the plans of the
          model with one candidate per trace and screening on as few SMs as its budget needs
  run9    2026-11-23-model-dfbf6d0/   ninth run, 779 candidates, all examples: the plans of the
          model that charges store sectors written in part
  run10   2026-11-23-lane-loops-b441b9a/  tenth run, the same 779 candidates (plans of the same
          model) with the harness that does not unroll lane-varying loops; in "merged" a
          candidate it measured takes its time only (the earlier harness's unrolled loops left
          lanes iterations apart, validation/results/h100/2026-11-23-partial-gap-probe/)
  run11   2026-11-24-uneven-blocks-4a9b635/  eleventh run, 185 candidates of 7 examples (syrk,
          syr2k, triangular, correlation, covariance, 2mm, himeno): the plans of the model that
          charges unequal blocks in one wave, with run 10's harness
  run12   2026-11-24-pending-hits/  twelfth run, 265 candidates of 12 examples: the plans of the
          model whose latency counts hits on fills still in flight as waits, with run 10's harness
  run13   2026-11-27-drift-run13/  thirteenth run, 286 candidates of 13 examples: the plans of the
          model whose DRAM time grows as the warps of a block drift apart over grid-stride
          rounds, with run 10's harness
  run14   2026-11-27-l1-miss-run14/  fourteenth run, 117 candidates of 6 examples: the plans of
          the model whose L1 time counts multi-row loads that miss twice, with run 10's harness
  merged  the union of all; a candidate measured in more than one run (same nest, mapping, block,
          grid) takes the median of its medians (of two: their mean). The runs were minutes or
          hours apart on the same GPU model but different VMs; the ratio of the last to the
          first time is reported.

Per nest and ranking: the pick is the matched candidate of lowest rank (a binary's: its place in
the JSON ranking; "plan": the model_rank the plan recorded, i.e. the model that chose the
candidates), the best is the matched candidate of lowest measured time (ties: lower rank), the
baselines are the measured candidates that are the plan's defaults.nvc / defaults.gcc. The first
run's plans have no "defaults": its nvc baseline is the plan's "reference" (its one
compiler_default candidate, the same schedule as the second run's defaults.nvc in every nest),
and its gcc baseline is the second run's defaults.gcc schedule where the first run measured it
(only where GCC's baseline falls back to the nvc-style one; pattern "gcc-default" did not exist
yet). Baselines are measured times: they do not depend on the ranking.

Metrics over nests: the pick is the measured best (regret 0) / within 10 % of it (regret <=
0.10, as `schedpredict compare`), median regret, geometric mean of baseline time / pick time with
the counts of nests where the pick is more than 2 % faster (+) or slower (-), and the median over
nests (of 3 or more matched candidates) of Spearman's rho (average ranks for ties) between the
predicted time (time.total_us; plan: predicted.time_us) and the measured median time. Over
candidates: the time error, mean |log(measured / predicted)|, and how many are within 20 %;
for "merged", also per bound the binary's time model names (time.bound): the median of measured /
predicted (above 1: the model is too fast there), the mean |log| and how many within 20 %.

Read "pick is the ranking's #1" first: only where the binary's own first choice was measured is
the row below it about the binary's real pick; elsewhere the pick is its best-ranked schedule
among those another model chose to measure, which flatters it (a plan of the old model's top 20
leaves out what the old model ranked poorly). "merged" measures the most schedules.

Output: a table per dataset on stdout; --json FILE writes every nest's details and the unmatched
candidates; --baseline BIN2 adds a column for a second binary and lists, per dataset, the nests
whose pick changed with both picks' measured times. Progress goes to stderr. Exit 0; 1 when an
example failed under a binary (reported and skipped: its candidates count as unmatched); 2 on a
bad command line or a missing binary or dataset."""
import argparse
import concurrent.futures
import gzip
import json
import math
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from counters_measured import example_args  # noqa: E402
from trace_key import cand_key  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATASETS = [("run1", "2026-11-22", "first run"),
            ("run2", "2026-11-22-model-7aa0fc7", "second run"),
            ("run3", "2026-11-22-model-6e59c49", "third run"),
            ("run4", "2026-11-22-model-6910a10", "fourth run"),
            ("run5", "2026-11-22-reduction-combine", "reduction nests, one atomic per block"),
            ("run6", "2026-11-22-reduction-combine/run6",
             "reduction nests, fresh plans of the model with the combine term"),
            ("run7", "2026-11-23-model-2108e9c", "seventh run, DRAM writes measured"),
            ("run8", "2026-11-23-model-d7c4d47",
             "eighth run, one candidate per trace, screening on one SM"),
            ("run9", "2026-11-23-model-dfbf6d0", "ninth run, partly written store sectors"),
            ("run10", "2026-11-23-lane-loops-b441b9a",
             "tenth run, run 9's plans with lane-varying loops not unrolled"),
            ("run11", "2026-11-24-uneven-blocks-4a9b635",
             "eleventh run, 7 examples, the plans of the model with unequal blocks"),
            ("run12", "2026-11-24-pending-hits",
             "twelfth run, 12 examples, the plans of the model with pending hits"),
            ("run13", "2026-11-27-drift-run13",
             "thirteenth run, 13 examples, the plans of the model with warps drifting apart"),
            ("run14", "2026-11-27-l1-miss-run14",
             "fourteenth run, 6 examples, the plans of the model with the L1's misses")]
# Datasets whose nests replace the earlier runs' in "merged": run5 measured the two reduction
# nests (jacobi.c:18, himeno.c:18) with the harness combining once per block; runs 1-4 combined
# once per warp, which cost up to 4x their time (validation/results/h100/2026-11-22-atomic-probe.md).
SUPERSEDING = {"run5", "run6"}
# Datasets measured with that harness too, whose measurements of those nests are kept.
SAME_HARNESS = SUPERSEDING | {"run7", "run8", "run9", "run10", "run11", "run12", "run13",
                                "run14"}
# Datasets whose measurement of a candidate replaces every earlier one of it in "merged": run10's
# harness (run11's and run12's too) keeps lane-varying loops from being unrolled, which changed
# the times.
CANDIDATE_SUPERSEDING = {"run10", "run11", "run12", "run13", "run14"}
FAST = 1.02  # the pick counts as faster / slower than a baseline beyond 2 %
PLATEAU = 1.05  # SP_RANK_PLATEAU (include/schedpredict/rank.h)


def registers_pick(rows, rank, pred, base_rank, counts, limited):
    """The pick of a nest whose candidates were predicted with their kernels' registers (--registers):
    rows, each with its rank and prediction in its own ranking and its rank in the ranking without
    registers (the functions given). One count: the first of that ranking. Several that change no
    candidate's warps: the first of the ranking without registers. Otherwise no one ranking holds
    them all: the first, in that order, whose prediction is within the plateau of the fastest."""
    if len(counts) > 1 and limited:
        fastest = min(pred(r) for r in rows)
        return min((r for r in rows if pred(r) <= PLATEAU * fastest), key=base_rank)
    return min(rows, key=base_rank if len(counts) > 1 else rank)


def print_register_limited(label, cands):
    """The register-limited candidates' time error and median ratio, with and without registers."""
    lim = [c for c in cands if c["register_limited"]]
    if not lim:
        return
    logs = {k: [math.log(c["time_us"] / c[k]) for c in lim] for k in ("pred_us", "pred_us_without_registers")}
    err = {k: statistics.mean(abs(e) for e in v) for k, v in logs.items()}
    med = {k: math.exp(statistics.median(v)) for k, v in logs.items()}
    print(f"{label}: {len(lim)} candidates register-limited (fewer warps an SM with their registers): "
          f"time error {err['pred_us']:.3f} mean |log| ({err['pred_us_without_registers']:.3f} without "
          f"registers), median measured/predicted {med['pred_us']:.3f} ({med['pred_us_without_registers']:.3f})")


def die(msg, code=2):
    print(f"replay_measured: {msg}", file=sys.stderr)
    sys.exit(code)


def key_str(k):
    dims = lambda d: "x".join(str(v) for v in d)
    return f"{k[0]} b{dims(k[1])} g{dims(k[2])}"


def nest_str(n):
    return f"{n[0]}:{n[1]}"


def load_json(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


# ---------------------------------------------------------------- measurements

def measured_us(mc, duration):
    """The CUDA events' median; with --duration, CUPTI's gpu__time_duration.sum (every run here
    has it), which leaves out the launch's host side: kernels of a few microseconds read 6-9 us
    by events and about 2 by duration (validation/results/h200/2026-11-29-sm-bandwidth-probe/)."""
    if duration:
        return mc["metrics"]["gpu__time_duration.sum"] / 1000
    return mc["time_us"]["median"]


def load_dataset(ddir, only, duration=False):
    """Per nest (file name, line): {key: {time, id, plan_rank, plan_pred, openacc}}, the not-ok
    candidates, the baseline keys from the plans and which example each nest belongs to."""
    pdir, mdir = os.path.join(ddir, "plans"), os.path.join(ddir, "measured")
    if not os.path.isdir(pdir) or not os.path.isdir(mdir):
        die(f"{ddir}: no plans/ or measured/")
    plans = {}
    for f in sorted(os.listdir(pdir)):
        for suf in (".plan.json", ".plan.json.gz"):
            if f.endswith(suf):
                plans[f[: -len(suf)]] = os.path.join(pdir, f)
    meas, notok, base, example, problems = {}, [], {}, {}, []
    for f in sorted(os.listdir(mdir)):
        if not f.endswith(".plan.measured.json"):
            continue
        name = f[: -len(".plan.measured.json")]
        if only is not None and name not in only:
            continue
        if name not in plans:
            problems.append(f"{name}: measured but no plan")
            continue
        plan, m = load_json(plans[name]), load_json(os.path.join(mdir, f))
        pk = {k["id"]: k for k in plan["kernels"]}
        for mk in m["kernels"]:
            k = pk.get(mk["id"])
            if k is None:
                problems.append(f"{name}: measured kernel {mk['id']} not in the plan")
                continue
            nest = (os.path.basename(k["file"]), k["line"])
            example[nest] = name
            byid = {c["id"]: c for c in k["candidates"]}
            d = meas.setdefault(nest, {})
            for mc in mk["candidates"]:
                c = byid.get(mc["id"])
                if c is None:
                    problems.append(f"{nest_str(nest)}: measured candidate {mc['id']} not in the plan")
                    continue
                if mc.get("status") != "ok":
                    notok.append({"nest": nest_str(nest), "id": mc["id"], "key": key_str(cand_key(c)),
                                  "status": mc.get("status")})
                    continue
                key = cand_key(c)
                t = measured_us(mc, duration)
                if key in d:  # twins (one trace, two schedules: older spaces held both)
                    x = d[key]
                    x["time"] = (x["time"] * x["twins"] + t) / (x["twins"] + 1)
                    x["twins"] += 1
                    if c["model_rank"] < x["plan_rank"]:
                        x.update({"id": c["id"], "plan_rank": c["model_rank"],
                                  "plan_pred": c["predicted"]["time_us"], "openacc": c["openacc"]})
                    continue
                d[key] = {"time": t, "id": c["id"], "twins": 1, "registers": mc.get("registers") or 0,
                          "plan_rank": c["model_rank"], "plan_pred": c["predicted"]["time_us"],
                          "openacc": c["openacc"]}
            defaults = dict(k.get("defaults") or {})
            if "nvc" not in defaults and "reference" in k:
                # first run: the reference is its only compiler_default candidate (nvc-style)
                defaults["nvc"] = k["reference"]
            base[nest] = {comp: cand_key(byid[i]) for comp, i in defaults.items() if i in byid}
    return {"meas": meas, "notok": notok, "base": base, "example": example, "problems": problems}


def merge_datasets(ds, superseding=(), same_harness=(), cand_superseding=()):
    """ds in order; a nest measured by a dataset in superseding takes only the measurements of
    the datasets in superseding and same_harness; a candidate measured by a dataset in
    cand_superseding only those of cand_superseding."""
    meas, twice, example = {}, [], {}
    replaced = {nest for d in superseding for nest in d["meas"]}
    kept = list(superseding) + list(same_harness)
    newer = {(nest, key) for d in cand_superseding for nest, cands in d["meas"].items() for key in cands}
    for d in ds:
        example.update(d["example"])
        newest = any(d is x for x in cand_superseding)
        for nest, cands in d["meas"].items():
            if nest in replaced and not any(d is x for x in kept):
                continue
            out = meas.setdefault(nest, {})
            for key, c in cands.items():
                if (nest, key) in newer and not newest:
                    continue
                out.setdefault(key, []).append(c)
    merged = {}
    for nest, cands in meas.items():
        merged[nest] = {}
        for key, cs in cands.items():
            t = statistics.median(c["time"] for c in cs)
            if len(cs) > 1:
                twice.append(cs[-1]["time"] / cs[0]["time"])
            merged[nest][key] = {"time": t, "id": None, "plan_rank": None, "plan_pred": None,
                                 "registers": cs[-1]["registers"],
                                 "openacc": cs[-1]["openacc"], "runs": len(cs)}
    notok = {}
    for x in (x for d in ds for x in d["notok"]):
        nest = tuple(x["nest"].rsplit(":", 1))
        if not any(k for k in merged.get((nest[0], int(nest[1])), {}) if key_str(k) == x["key"]):
            notok.setdefault((x["nest"], x["key"]), x)  # not ok in every run that measured it
    return {"meas": merged, "notok": list(notok.values()), "base": {},
            "example": example, "problems": [], "twice": twice}


def fill_baselines(sets):
    """A dataset whose plan lacks a baseline takes the other dataset's schedule for it (the
    baseline is a property of the nest and compiler, not of the model)."""
    for name, d in sets.items():
        for nest in d["meas"]:
            own = d["base"].setdefault(nest, {})
            for other_name, other in sets.items():
                if other_name == name:
                    continue
                for comp, key in other["base"].get(nest, {}).items():
                    own.setdefault(comp, key)


# ---------------------------------------------------------------- running the binary

def run_example(binary, name, timeout, registers=0):
    src = os.path.join("examples", name + ".c")
    cmd = [binary, "--format", "json", "--top", "100000", "-q", src] + example_args(
        os.path.join(ROOT, src)) + (["--registers", str(registers)] if registers else [])
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, f"timed out after {timeout} s", time.monotonic() - t0
    except OSError as e:
        return None, str(e), time.monotonic() - t0
    dt = time.monotonic() - t0
    if p.returncode != 0:
        err = p.stderr.strip().splitlines()
        return None, f"exit {p.returncode}: {err[-1] if err else '(no message)'}", dt
    try:
        rep = json.loads(p.stdout)
    except ValueError as e:
        return None, f"output is not JSON: {e}", dt
    if rep.get("schema") != "schedpredict-report":
        return None, f"output schema is {rep.get('schema')!r}", dt
    nests, notes = {}, []
    for n in rep.get("nests", []):
        file, line, _col = n["location"].rsplit(":", 2)
        nest = (os.path.basename(file), int(line))
        if "error" in n:
            nests[nest] = n["error"]
            continue
        ranking = {}
        for i, c in enumerate(n["ranking"]):
            ranking.setdefault(cand_key(c), (i + 1, c["time"]["total_us"], c["time"].get("bound"),
                                             c["time"].get("active_warps_per_sm")))
        if len(n["ranking"]) < n.get("candidates_evaluated", 0):
            notes.append(f"{nest_str(nest)}: ranking holds {len(n['ranking'])} of "
                         f"{n['candidates_evaluated']} candidates")
        nests[nest] = ranking
    return {"nests": nests, "notes": notes}, None, dt


def reg_run(example, registers):
    return f"{example} --registers {registers}"


def run_all(binaries, names, jobs, timeout, registers=None):
    """{label: {example: result or None}}, {label: {example: error}}, {label: seconds}.
    registers: {example: register counts}; each example also runs with --registers N for each N,
    its result under reg_run(example, N)."""
    out = {label: {} for label, _ in binaries}
    errors = {label: {} for label, _ in binaries}
    secs = {label: 0.0 for label, _ in binaries}
    tasks = [(label, b, n, 0) for label, b in binaries for n in names]
    tasks += [(label, b, n, r) for label, b in binaries for n in names
              for r in sorted((registers or {}).get(n, ())) if r]
    done = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        futs = {pool.submit(run_example, b, n, timeout, r): (label, reg_run(n, r) if r else n)
                for label, b, n, r in tasks}
        for fut in concurrent.futures.as_completed(futs):
            label, name = futs[fut]
            res, err, dt = fut.result()
            done += 1
            secs[label] += dt
            out[label][name] = res
            if err:
                errors[label][name] = err
                msg = f"FAILED: {err}"
            else:
                msg = f"{len(res['nests'])} nests"
                for note in res["notes"]:
                    print(f"replay_measured: {label}: {name}: note: {note}", file=sys.stderr)
            print(f"replay: [{done:3d}/{len(tasks)}] {label:4s} {name:18s} {dt:6.1f} s  {msg}",
                  file=sys.stderr, flush=True)
    return out, errors, secs


# ---------------------------------------------------------------- metrics

def avg_ranks(xs):
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    r = [0.0] * len(xs)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and xs[order[j + 1]] == xs[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return r


def spearman(x, y):
    if len(x) < 3:
        return None
    rx, ry = avg_ranks(x), avg_ranks(y)
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    sxx = sum((a - mx) ** 2 for a in rx)
    syy = sum((b - my) ** 2 for b in ry)
    if sxx == 0 or syy == 0:
        return None
    return sxy / math.sqrt(sxx * syy)


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def evaluate(d, ranker, runs, registers=False):
    """ranker: 'plan' (the plans' own ranks) or a binary label with runs[label][example].
    registers: each candidate's rank and prediction from the run with --registers set to the
    count its kernel held (runs[label][reg_run(example, N)]). Where a nest's candidates held one
    count, the pick is that ranking's first; several that leave every candidate its warps, the
    first of the ranking without registers; otherwise (no one ranking holds them all: the nest's
    `mixed_registers`) the first, in that order, whose prediction with its registers is within
    the plateau (PLATEAU) of the fastest such prediction."""
    nests, unmatched = [], []
    for nest in sorted(d["meas"]):
        cands = d["meas"][nest]
        if ranker == "plan":
            ranking, why = {k: (c["plan_rank"], c["plan_pred"]) for k, c in cands.items()}, None
        else:
            res = runs[ranker].get(d["example"][nest])
            if res is None:
                ranking, why = {}, "example failed"
            elif nest not in res["nests"]:
                ranking, why = {}, "nest not in the binary's output"
            elif isinstance(res["nests"][nest], str):
                ranking, why = {}, "nest not ranked: " + res["nests"][nest]
            else:
                ranking, why = res["nests"][nest], "schedule not in the binary's ranking"
        matched, counts, limited = [], set(), 0
        for key, c in cands.items():
            own = ranking
            if registers and ranker != "plan" and c.get("registers"):
                counts.add(c["registers"])
                res = runs[ranker].get(reg_run(d["example"][nest], c["registers"]))
                own = res["nests"].get(nest, {}) if res else {}
                own = own if isinstance(own, dict) else {}
            if key in own and key in ranking:
                rank, pred = own[key][:2]
                bound = own[key][2] if len(own[key]) > 2 else None
                warps_changed = own is not ranking and own[key][3:4] != ranking[key][3:4]
                limited += warps_changed
                matched.append((key, rank, pred, c["time"], bound, ranking[key][0], warps_changed,
                                ranking[key][1]))
            else:
                unmatched.append({"nest": nest_str(nest), "key": key_str(key), "id": c["id"],
                                  "time_us": c["time"], "reason": why})
        row = {"nest": nest_str(nest), "example": d["example"][nest], "measured": len(cands),
               "matched": len(matched),
               "log_errors": [math.log(m[3] / m[2]) for m in matched if m[2] and m[2] > 0],
               "candidates": [{"key": key_str(m[0]), "rank": m[1], "pred_us": m[2], "time_us": m[3],
                               "bound": m[4], "register_limited": m[6],
                               "pred_us_without_registers": m[7]}
                              for m in sorted(matched, key=lambda m: m[1])]}
        base = {}
        for comp in ("nvc", "gcc"):
            key = d["base"].get(nest, {}).get(comp)
            base[comp] = cands[key]["time"] if key in cands else None
            row[f"{comp}_default"] = key_str(key) if key else None
            row[f"{comp}_default_time_us"] = base[comp]
        row["mixed_registers"] = len(counts) > 1 and limited > 0
        row["register_limited"] = limited
        if matched:
            pick = registers_pick(matched, lambda m: m[1], lambda m: m[2], lambda m: m[5], counts, limited)
            best = min(matched, key=lambda m: (m[3], m[1]))
            row.update({
                "pick": key_str(pick[0]), "pick_key": pick[0], "pick_rank": pick[1],
                "pick_pred_us": pick[2], "pick_time_us": pick[3],
                "best": key_str(best[0]), "best_rank": best[1], "best_time_us": best[3],
                "regret": pick[3] / best[3] - 1,
                "pick_measured_place": 1 + sum(m[3] < pick[3] for m in matched),
                "rho": spearman([m[2] for m in matched], [m[3] for m in matched]),
            })
            for comp in ("nvc", "gcc"):
                row[f"{comp}_over_pick"] = base[comp] / pick[3] if base[comp] else None
        nests.append(row)
    return {"nests": nests, "unmatched": unmatched, "summary": summarize(nests, unmatched)}


def summarize(nests, unmatched):
    picked = [n for n in nests if "pick" in n]
    s = {"nests": len(nests), "nests_with_pick": len(picked),
         "measured": sum(n["measured"] for n in nests), "matched": sum(n["matched"] for n in nests),
         "unmatched": len(unmatched),
         "pick_is_rank1": sum(n["pick_rank"] == 1 for n in picked),
         "median_pick_rank": statistics.median([n["pick_rank"] for n in picked]) if picked else None,
         "pick_is_best": sum(n["regret"] == 0 for n in picked),
         "pick_within_10pct": sum(n["regret"] <= 0.10 for n in picked),
         "median_regret": statistics.median([n["regret"] for n in picked]) if picked else None}
    for comp in ("nvc", "gcc"):
        r = [n[f"{comp}_over_pick"] for n in picked if n[f"{comp}_over_pick"]]
        s[f"vs_{comp}"] = {"n": len(r), "geomean": geomean(r), "faster": sum(x > FAST for x in r),
                           "slower": sum(x < 1 / FAST for x in r)}
    rhos = [n["rho"] for n in picked if n["rho"] is not None]
    s["median_rho"] = statistics.median(rhos) if rhos else None
    s["rho_nests"] = len(rhos)
    errs = [e for n in nests for e in n["log_errors"]]
    s["mean_abs_log_error"] = statistics.mean(abs(e) for e in errs) if errs else None
    s["within_20pct"] = sum(abs(e) <= math.log(1.2) for e in errs)
    s["time_errors"] = len(errs)
    return s


def by_bound(nests):
    """{bound: (n, median log(measured / predicted), mean |log|, within 20 %)} over the matched
    candidates, by what the binary's time model says bounds each (its JSON time.bound)."""
    errs = {}
    for n in nests:
        for c in n["candidates"]:
            if c["bound"] and c["pred_us"] and c["pred_us"] > 0 and c["time_us"] > 0:
                errs.setdefault(c["bound"], []).append(math.log(c["time_us"] / c["pred_us"]))
    return {b: (len(v), statistics.median(v), statistics.mean(abs(e) for e in v),
                sum(abs(e) <= math.log(1.2) for e in v)) for b, v in errs.items()}


def print_by_bound(res, rankers):
    """The time error per bound, one block per binary: where the time model is off, and which way."""
    for r in rankers:
        t = by_bound(res[r]["nests"])
        if not t:
            continue
        print(f"time error by the bound {r}'s model names (measured / predicted: median; mean |log|; "
              "within 20 %)")
        for b, (n, med, mabs, w20) in sorted(t.items(), key=lambda kv: -kv[1][0]):
            print(f"  {b:30s} n {n:5d}  {math.exp(med):6.3f}x  {mabs:.3f}  {w20}/{n}")


# ---------------------------------------------------------------- output

def cells(s):
    out = [f"{s['matched']}/{s['measured']}", f"{s['nests_with_pick']}/{s['nests']}",
           f"{s['pick_is_rank1']}" + ("" if s["median_pick_rank"] is None else
                                      f" (median rank {s['median_pick_rank']:g})"),
           f"{s['pick_is_best']}", f"{s['pick_within_10pct']}",
           "-" if s["median_regret"] is None else f"{100 * s['median_regret']:.1f} %"]
    for comp in ("nvc", "gcc"):
        v = s[f"vs_{comp}"]
        out.append("-" if not v["n"] else
                   f"{v['geomean']:.3f}x n{v['n']} +{v['faster']} -{v['slower']}")
    out.append("-" if s["median_rho"] is None else f"{s['median_rho']:.3f} ({s['rho_nests']})")
    out.append("-" if s["mean_abs_log_error"] is None else
               f"{s['mean_abs_log_error']:.3f}, {s['within_20pct']}/{s['time_errors']}")
    return out


ROWS = ["matched / measured ok", "nests with a pick", "pick is the ranking's #1",
        "pick is the measured best",
        "pick within 10 % of best", "median regret of pick", "nvc default / pick, gm",
        "gcc default / pick, gm", "median Spearman rho (n)",
        "time error: mean |log|, <=20 %"]


def print_table(title, cols):
    """cols: [(header, summary)]"""
    print(title)
    w = max(len(r) for r in ROWS) + 2
    colw = [max(22, len(h) + 2) for h, _ in cols]
    print(" " * w + "".join(h.ljust(cw) for (h, _), cw in zip(cols, colw)).rstrip())
    table = [cells(s) for _, s in cols]
    for i, r in enumerate(ROWS):
        print(r.ljust(w) + "".join(t[i].ljust(cw) for t, cw in zip(table, colw)).rstrip())


def fmt_us(t):
    return "-" if t is None else f"{t:.1f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("binary", help="the schedpredict binary to judge")
    ap.add_argument("--baseline", metavar="BIN2", help="a second binary, shown beside the first")
    ap.add_argument("--examples", metavar="A,B", help="only these examples (names, no .c)")
    ap.add_argument("--json", metavar="FILE", help="write every nest's details to FILE")
    ap.add_argument("--jobs", type=int, default=2, help="binary runs at a time (default 2)")
    ap.add_argument("--timeout", type=float, default=600, help="seconds per example (default 600)")
    ap.add_argument("--results", default=os.path.join(ROOT, "validation", "results", "h100"),
                    help="directory of the datasets (default validation/results/h100)")
    ap.add_argument("--duration", action="store_true",
                    help="measured time: gpu__time_duration.sum, not the CUDA events' median")
    ap.add_argument("--registers", action="store_true",
                    help="predict each candidate with --registers set to its kernel's count (the "
                         "measurement's registers), and pick by those rankings (see evaluate)")
    ap.add_argument("--unmatched-shown", type=int, default=10, metavar="N",
                    help="unmatched candidates listed per dataset and binary (default 10)")
    a = ap.parse_args()
    if a.jobs < 1:
        die("--jobs must be at least 1")

    binaries = [("new", a.binary)] + ([("base", a.baseline)] if a.baseline else [])
    binaries = [(label, os.path.abspath(b)) for label, b in binaries]
    for label, b in binaries:
        if not os.path.isfile(b) or not os.access(b, os.X_OK):
            die(f"{b}: no such executable")

    only = None
    if a.examples:
        only = {x.strip().removesuffix(".c") for x in a.examples.split(",") if x.strip()}
    sets = {}
    for name, sub, desc in DATASETS:
        d = load_dataset(os.path.join(a.results, sub), only, a.duration)
        d["desc"] = f"{sub} ({desc})"
        sets[name] = d
    fill_baselines(sets)
    merged = merge_datasets([sets[n] for n, _, _ in DATASETS],
                            [sets[n] for n in SUPERSEDING], [sets[n] for n in SAME_HARNESS],
                            [sets[n] for n in CANDIDATE_SUPERSEDING])
    merged["desc"] = ("run1 + ... + run14 (measured more than once: the median of the medians; "
                      "of two, their mean; the reduction nests from runs 5 to 14 only; a "
                      "candidate runs 10 to 14 measured, their times only)")
    for nest in merged["meas"]:
        for n, _, _ in DATASETS:
            for comp, key in sets[n]["base"].get(nest, {}).items():
                merged["base"].setdefault(nest, {}).setdefault(comp, key)
    sets["merged"] = merged

    names = sorted({e for d in sets.values() for e in d["example"].values()})
    if only is not None:
        missing = sorted(only - set(names))
        if missing:
            die(f"--examples: no measurements for {', '.join(missing)}")
    for n in names:
        if not os.path.isfile(os.path.join(ROOT, "examples", n + ".c")):
            die(f"examples/{n}.c: missing (it has measurements)")
    if not names:
        die("no measured examples found")

    t0 = time.monotonic()
    counts = {}
    if a.registers:
        for d in sets.values():
            for nest, cands in d["meas"].items():
                counts.setdefault(d["example"][nest], set()).update(
                    c["registers"] for c in cands.values() if c.get("registers"))
    runs, errors, secs = run_all(binaries, names, a.jobs, a.timeout, counts)
    wall = time.monotonic() - t0

    rankers = [label for label, _ in binaries]
    report = {"binaries": dict(binaries), "examples": names, "wall_s": wall,
              "binary_s": secs, "failed": errors, "datasets": {}}
    print("replay of the H100 measurements in " + os.path.relpath(a.results, ROOT))
    for label, b in binaries:
        print(f"  {label:4s} = {b}: {len(names)} examples, {secs[label]:.0f} s of runs"
              + (f", {len(errors[label])} FAILED" if errors[label] else ""))
    print("  plan = the rank and predicted time recorded in each plan (the model that chose it)")
    print("  gm cells: geometric mean of default time / pick time, nN nests, +faster -slower "
          "than the default by > 2 %")
    for name, d in sets.items():
        if not d["meas"] and not d["notok"]:  # nothing of --examples in this dataset
            print(f"\n({name}: {d['desc']}: none of these examples measured)")
            continue
        res = {r: evaluate(d, r, runs, a.registers) for r in rankers + (["plan"] if name != "merged" else [])}
        report["datasets"][name] = {"description": d["desc"], "not_ok": d["notok"],
                                    "problems": d["problems"],
                                    "rankings": {r: {"summary": v["summary"], "nests": [
                                        {k: x for k, x in n.items() if k != "pick_key"}
                                        for n in v["nests"]], "unmatched": v["unmatched"]}
                                        for r, v in res.items()}}
        nok = len(d["notok"])
        statuses = sorted({x["status"] for x in d["notok"]})
        print()
        print_table(f"== {name}: {d['desc']}; not ok: {nok}"
                    + (f" ({', '.join(map(str, statuses))})" if nok else "") + " ==",
                    [(r, v["summary"]) for r, v in res.items()])
        if name == "merged":
            print_by_bound(res, rankers)
            for r in (rankers if a.registers else []):
                print_register_limited(r, [c for n in res[r]["nests"] for c in n["candidates"]])
        if name == "merged" and d["twice"]:
            q = sorted(d["twice"])
            pct = lambda p: q[min(len(q) - 1, int(p * len(q)))]
            print(f"measured in more than one run: {len(q)} candidates, last/first time median "
                  f"{statistics.median(q):.3f}, 10-90 % {pct(0.1):.3f}-{pct(0.9):.3f}")
        for p in d["problems"]:
            print(f"data problem: {p}")
        for r in rankers:
            um = res[r]["unmatched"]
            if um:
                print(f"unmatched ({r}): {len(um)}")
                whole = {}  # nests lost as a whole: one line each
                for u in um:
                    if u["reason"] != "schedule not in the binary's ranking":
                        whole.setdefault((u["nest"], u["reason"]), []).append(u)
                for (nest, why), us in whole.items():
                    print(f"  {nest:22s} all {len(us)} measured: {why}")
                single = [u for u in um if u["reason"] == "schedule not in the binary's ranking"]
                for u in single[: a.unmatched_shown]:
                    print(f"  {u['nest']:22s} {u['key']:36s} {u['reason']}")
                if len(single) > a.unmatched_shown:
                    print(f"  ... {len(single) - a.unmatched_shown} more (--json)")
        if len(rankers) == 2:
            new = {n["nest"]: n for n in res["new"]["nests"] if "pick" in n}
            old = {n["nest"]: n for n in res["base"]["nests"] if "pick" in n}
            changed = [k for k in sorted(set(new) & set(old))
                       if new[k]["pick_key"] != old[k]["pick_key"]]
            report["datasets"][name]["changed_picks"] = [
                {"nest": k, "new": new[k]["pick"], "new_time_us": new[k]["pick_time_us"],
                 "base": old[k]["pick"], "base_time_us": old[k]["pick_time_us"],
                 "best_time_us": new[k]["best_time_us"]} for k in changed]
            print(f"picks changed (new vs base): {len(changed)} of {len(set(new) & set(old))} "
                  "nests; measured us, best of new's matched")
            if changed:
                better = sum(new[k]["pick_time_us"] < old[k]["pick_time_us"] / FAST for k in changed)
                worse = sum(new[k]["pick_time_us"] > old[k]["pick_time_us"] * FAST for k in changed)
                for k in changed:
                    print(f"  {k:22s} new {new[k]['pick']:34s} {fmt_us(new[k]['pick_time_us']):>9s}"
                          f"  base {old[k]['pick']:34s} {fmt_us(old[k]['pick_time_us']):>9s}"
                          f"  best {fmt_us(new[k]['best_time_us']):>9s}")
                print(f"  new pick faster in {better}, slower in {worse} (beyond 2 %)")
    failed = {label: e for label, e in errors.items() if e}
    if failed:
        print()
        for label, e in failed.items():
            for n, msg in sorted(e.items()):
                print(f"FAILED ({label}): {n}: {msg}")
    print(f"\nwall time {wall:.0f} s")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(report, f, indent=1)
            f.write("\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
