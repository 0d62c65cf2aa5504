#!/usr/bin/env python3
"""The GCC OpenACC proof, part 3: reads what scripts/gcc_openacc_run.sh wrote and prints a
Markdown table per example and function: time as written, time after --fix, the measured and
the predicted speedup, whether the two builds computed the same thing, the geometric mean, and
the cases where following the advice did not pay, with GCC's launch dimensions as evidence.

  scripts/gcc_openacc_table.py RESULTS [--manifest OUTDIR/manifest.json]
  scripts/gcc_openacc_table.py RESULTS --check [--tolerance REL] [--return-tolerance REL]

--check (the CI test, on libgomp's host fallback) prints nothing but problems and exits 1 when a
run failed or a function's checksums differ between the builds: bitwise (FNV hash of every
array) unless --tolerance allows a relative difference of the per-array sums.
--return-tolerance allows a relative difference of the functions' return values only (a
reduction summed in another order when --fix interchanges its loops); arrays stay bitwise.
"""
import argparse
import csv
import json
import math
import os
import re
import sys

LAUNCH = re.compile(r"kernel (\S+): launch gangs=(\d+), workers=(\d+), vectors=(\d+)")


def function_of_kernel(kernel):
    """GCC names an offloaded region FUNCTION._omp_fn.N ('$' for '.' in PTX)."""
    base = kernel.split("_omp_fn")[0]
    return base.rstrip(".$")


def read_times(results):
    rows, failed, skipped = {}, [], []
    path = os.path.join(results, "times.jsonl")
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                r = json.loads(line)
            except ValueError as e:
                sys.exit(f"{path}:{n}: not JSON ({e}): rerun scripts/gcc_openacc_run.sh")
            if "failed" in r:
                failed.append(r)
            elif "skipped" in r:
                if r["variant"] == "orig":
                    skipped.append(r)
            else:
                rows[(r["example"], r["function"], r["variant"])] = r
    return rows, failed, skipped


def read_dims(results, example, variant):
    """{function: ['G x W x V', ...]} in launch order, each kernel once."""
    out, seen = {}, set()
    path = os.path.join(results, "dims", f"{example}.{variant}.txt")
    if not os.path.exists(path):
        return out
    for m in LAUNCH.finditer(open(path).read()):
        if m.group(1) in seen:
            continue
        seen.add(m.group(1))
        out.setdefault(function_of_kernel(m.group(1)), []).append(
            f"{m.group(2)}x{m.group(3)}x{m.group(4)}")
    return out


UNITS = {"nsecond": 1e-3, "usecond": 1.0, "msecond": 1e3, "second": 1e6,
         "ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}


def read_ncu(results, example, variant):
    """{function: device time of one call in µs}: per kernel the fastest launch, summed."""
    path = os.path.join(results, "ncu", f"{example}.{variant}.csv")
    if not os.path.exists(path):
        return {}
    lines = [l for l in open(path, errors="replace") if l.startswith('"')]
    best = {}
    for r in csv.DictReader(lines):
        if r.get("Metric Name") != "gpu__time_duration.sum":
            continue
        try:
            v = float(r["Metric Value"].replace(",", "")) * UNITS.get(r.get("Metric Unit"), 1.0)
        except (KeyError, ValueError):
            continue
        k = r.get("Kernel Name", "")
        best[k] = min(v, best.get(k, v))
    out = {}
    for k, v in best.items():
        fn = function_of_kernel(k)
        out[fn] = out.get(fn, 0.0) + v
    return out


def compare_checksums(a, b, return_tolerance=0.0):
    """(True if every array is bitwise equal, largest relative difference of the sums). The
    return value counts as equal within return_tolerance."""
    bitwise, worst = True, 0.0
    for key in sorted(set(a) | set(b)):
        x, y = a.get(key), b.get(key)
        if x is None or y is None:
            return False, math.inf
        if key == "return" and return_tolerance > 0 and x.get("fnv") == y.get("fnv"):
            s, t = x["sum"], y["sum"]
            if s == s and t == t and abs(s - t) <= return_tolerance * max(abs(s), abs(t)):
                continue
        if x.get("fnv") != y.get("fnv") or x["sum"] != y["sum"]:
            bitwise = False
            s, t = x["sum"], y["sum"]
            if s != s or t != t:  # NaN
                worst = math.inf if not (s != s and t != t) else worst
                continue
            scale = max(abs(s), abs(t), 1e-300)
            worst = max(worst, abs(s - t) / scale)
    return bitwise, worst


def load_manifest(path):
    if not path or not os.path.exists(path):
        return {}
    with open(path) as f:
        return {e["example"]: e for e in json.load(f).get("examples", [])}


def predicted(manifest, example, function):
    nests = [n for n in manifest.get(example, {}).get("nests", []) if n.get("function") == function]
    d = [n.get("default_time_us") for n in nests]
    r = [n.get("recommended_time_us") for n in nests]
    if not nests or None in d or None in r or sum(r) <= 0:
        return None
    return sum(d) / sum(r)


GCC_DIMS = re.compile(r"num_gangs\((\d+)\) num_workers\((\d+)\) vector_length\((\d+)\)")


def model_dims(manifest, example, function):
    """The launch dims schedpredict says GCC uses as written, per nest (--compiler gcc)."""
    out = []
    for n in manifest.get(example, {}).get("nests", []):
        m = GCC_DIMS.search(n.get("default_openacc") or "") if n.get("function") == function else None
        if m:
            out.append("x".join(m.groups()))
    return out


def geomean(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def fmt(x, spec=".2f"):
    return "–" if x is None else format(x, spec)


def check(results, tolerance, return_tolerance=0.0):
    rows, failed, _ = read_times(results)
    problems = [f"{r['example']}.{r['variant']}: run failed ({r['failed']})" for r in failed]
    pairs = 0
    for (ex, fn, v), r in sorted(rows.items()):
        if v != "orig":
            continue
        o = rows.get((ex, fn, "fixed"))
        if o is None:
            problems.append(f"{ex}: {fn}: no result from the fixed build")
            continue
        pairs += 1
        bitwise, worst = compare_checksums(r["checksum"], o["checksum"], return_tolerance)
        if not bitwise and worst > tolerance:
            problems.append(f"{ex}: {fn}: checksums differ (largest relative difference of a "
                            f"sum {worst:.3g}): as written {json.dumps(r['checksum'])}, fixed "
                            f"{json.dumps(o['checksum'])}")
    for p in problems:
        print(p)
    print(f"gcc-openacc check: {pairs} functions compared, {len(problems)} problem(s)")
    return 1 if problems or pairs == 0 else 0


def table(results, manifest_path):
    rows, failed, skipped = read_times(results)
    manifest = load_manifest(manifest_path)
    env = os.path.join(results, "env.txt")
    if os.path.exists(env):
        print("Run: " + " / ".join(l.strip() for l in open(env) if l.strip()) + "\n")
    print("| example | function | nests (lines) | as written µs | fixed µs | measured speedup "
          "| predicted speedup | device µs written → fixed (ncu) | same result | launch dims "
          "written → fixed, GOMP_DEBUG (gangs x workers x vectors) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    measured, predicted_all, losses = [], [], []
    for (ex, fn, v), r in sorted(rows.items()):
        if v != "orig":
            continue
        o = rows.get((ex, fn, "fixed"))
        changed = manifest.get(ex, {}).get("fixed", True)
        dims_o = read_dims(results, ex, "orig").get(fn, [])
        dims_f = read_dims(results, ex, "fixed").get(fn, [])
        ncu_o = read_ncu(results, ex, "orig").get(fn)
        ncu_f = read_ncu(results, ex, "fixed").get(fn)
        t_o = r.get("median_us")
        t_f = o.get("median_us") if o else None
        speed = t_o / t_f if t_o and t_f else None
        pred = predicted(manifest, ex, fn)
        same = "–"
        if o:
            bitwise, worst = compare_checksums(r["checksum"], o["checksum"])
            same = "bitwise" if bitwise else (f"≈ ({worst:.1g})" if worst <= 1e-5 else
                                              f"**no** ({worst:.2g})")
        dims = f"{', '.join(dims_o) or '–'} → {', '.join(dims_f) or '–'}"
        predicted_dims = model_dims(manifest, ex, fn)
        if predicted_dims:
            dims += f" (model of GCC: {', '.join(predicted_dims)})"
        ncu = f"{fmt(ncu_o, '.1f')} → {fmt(ncu_f, '.1f')}" if ncu_o or ncu_f else "–"
        note = "" if changed else " (unchanged)"
        print(f"| {ex} | {fn}{note} | {','.join(map(str, r.get('nests', [])))} | {fmt(t_o, '.1f')} "
              f"| {fmt(t_f, '.1f')} | {fmt(speed)} | {fmt(pred)} | {ncu} | {same} | {dims} |")
        if changed and speed and same != "–" and not same.startswith("**no"):
            measured.append(speed)
            if pred:
                predicted_all.append(pred)
            if speed < 1.0:
                losses.append((ex, fn, speed, pred, dims, manifest.get(ex, {})))
    print()
    print(f"Geometric mean over the {len(measured)} functions --fix changed (same result): "
          f"measured {fmt(geomean(measured))}x, predicted {fmt(geomean(predicted_all))}x "
          f"({len(predicted_all)} with a prediction).")
    if losses:
        print("\nWhere following the advice did not pay:\n")
        for ex, fn, speed, pred, dims, m in losses:
            recs = "; ".join(f"line {n['line']}: {n.get('recommended_openacc')}"
                             for n in m.get("nests", []) if n.get("function") == fn)
            print(f"- {ex} {fn}: {speed:.2f}x measured, {fmt(pred)}x predicted; launch {dims}; "
                  f"recommended {recs or '?'}")
    if skipped:
        print("\nNot driven by the harness:\n")
        for r in skipped:
            print(f"- {r['example']} {r['function']}: {r['skipped']}")
    if failed:
        print("\nRuns that failed:\n")
        for r in failed:
            print(f"- {r['example']}.{r['variant']}: {r['failed']}")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results")
    ap.add_argument("--manifest", help="default: RESULTS/manifest.json")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--tolerance", type=float, default=0.0)
    ap.add_argument("--return-tolerance", type=float, default=0.0)
    a = ap.parse_args()
    if not os.path.exists(os.path.join(a.results, "times.jsonl")):
        sys.exit(f"error: {a.results}/times.jsonl missing: run scripts/gcc_openacc_run.sh first")
    if a.check:
        return check(a.results, a.tolerance, a.return_tolerance)
    return table(a.results, a.manifest or os.path.join(a.results, "manifest.json"))


if __name__ == "__main__":
    sys.exit(main())
