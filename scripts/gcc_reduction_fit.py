#!/usr/bin/env python3
"""Fits the compare-and-swap costs of GCC 12's OpenACC reduction code (arch fields cas_shared_ns,
cas_global_base_ns, cas_global_per_contender_ns) to the H200 kernel times in
the H200 kernel times (ncu gpu__time_duration) that scripts/gcc_reduction_sweep.sh measures.

  scripts/gcc_reduction_fit.py RESULTS_DIR     (its ncu-sweep*.csv)

Kernels (4096 x 4096 doubles, sum of squares; NAME_gG_vV = num_gangs(G) vector_length(V)):
  rowsum_vV: per row i, `loop vector reduction(+:t)` over j, b[i] = t: the vector loop's fold
             only (GCC 12: for V > 32 every lane folds its part into one shared-memory word with
             a CAS loop, so a row costs V(V+1)/2 attempts; V = 32 folds with shuffles).
  frob_gG_vV: `gang reduction(+:sum)` on i, `vector reduction(+:sum)` on j: the vector fold per row
             plus each gang's CAS loop on the global sum.
cas_shared_ns: (t(rowsum_vV) - t(rowsum_v32)) / (rows per SM * V(V+1)/2), least squares over V.
cas_global: (t(frob_gG_v32) - t(rowsum_v32)) / G against the G gangs retrying together.
The rest (workers, V = 64 and 512, jacobi's max) is printed against the fit, not fitted.
"""
import csv
import glob
import statistics
import sys
from collections import defaultdict

SMS, ROWS = 132, 4096


def kernel_times(path):
    """{binary: median µs of its first kernel}, {binary: {kernel: median µs}}."""
    per = defaultdict(lambda: defaultdict(list))
    with open(path) as f:
        for row in csv.reader(f):
            if len(row) < 3 or "gpu__time_duration.sum" not in row:
                continue
            name, kernel = row[0], next((x for x in row if "_omp_fn" in x), "?")
            value = float(row[-1].replace(",", ""))
            per[name][kernel].append(value / 1000.0)  # ns -> µs
    return {n: {k: statistics.median(v) for k, v in ks.items()} for n, ks in per.items()}


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else "validation/results/h200/gcc-openacc/2026-12-01-reduction-lowering"
    t = {}
    files = sorted(glob.glob(f"{d}/ncu-sweep*.csv"))
    if not files:
        sys.exit(f"no ncu-sweep*.csv in {d} (scripts/gcc_reduction_sweep.sh run writes one)")
    for f in files:
        for name, ks in kernel_times(f).items():
            t[name] = ks
    first = {n: min(ks.items(), key=lambda kv: kv[0])[1] for n, ks in t.items()}
    base = first["rowsum_v32"]
    rows_per_sm = ROWS / SMS
    num = den = 0.0
    print("vector fold (rowsum, 528 gangs):")
    for v in (128, 256, 1024):
        extra = first[f"rowsum_v{v}"] - base
        attempts = rows_per_sm * v * (v + 1) / 2
        num += extra * attempts
        den += attempts * attempts
        print(f"  V={v:5d}: {first[f'rowsum_v{v}']:9.1f} us, {extra:9.1f} over V=32, {extra / attempts * 1e3:.3f} ns an attempt")
    cas_shared = num / den * 1e3
    print(f"cas_shared_ns = {cas_shared:.3f} (least squares)")
    pts = []
    print("gang fold (frob, V=32):")
    for g in (528, 1056, 2112, 4096):
        per_gang = (first[f"frob_g{g}_v32"] - base) / g * 1e3
        pts.append((g, per_gang))
        print(f"  G={g:5d}: {first[f'frob_g{g}_v32']:9.1f} us, {per_gang:7.1f} ns a gang")
    mx = statistics.mean(p[0] for p in pts)
    my = statistics.mean(p[1] for p in pts)
    slope = sum((x - mx) * (y - my) for x, y in pts) / sum((x - mx) ** 2 for x, _ in pts)
    inter = my - slope * mx
    print(f"cas_global_base_ns = {inter:.1f}, cas_global_per_contender_ns = {slope:.4f}")
    for x, y in pts:
        print(f"  G={x:5d}: fit {inter + slope * x:7.1f} ns a gang, measured {y:7.1f}")

    def vec(v, rows=ROWS):
        return 0.0 if v <= 32 else rows / SMS * v * (v + 1) / 2 * cas_shared * 1e-3

    def gang(g):
        return g * (inter + slope * min(g, 32 * SMS)) * 1e-3

    print("not fitted (differences against the fit's terms, µs):")
    for v, g in ((64, 528), (512, 528), (64, 4096), (512, 4096), (128, 528), (256, 528), (1024, 528),
                 (256, 4096), (128, 2112), (256, 1056)):
        name = f"frob_g{g}_v{v}"
        if name not in first:
            continue
        meas = first[name] - first.get(f"frob_g{g}_v32", float("nan"))
        print(f"  {name:18s} measured {first[name]:9.1f}; over V=32 {meas:9.1f}, vector fold predicted {vec(v):9.1f}")
    for w in (2, 4, 8, 16):
        name = f"frobw_g528_w{w}_v32"
        if name in first:
            print(f"  {name:18s} measured {first[name]:9.1f} (W=1: {first['frob_g528_v32']:.1f}); workers fold once per gang: not charged")
    name = "frobw_g528_w4_v128"
    if name in first:
        print(f"  {name:18s} measured {first[name]:9.1f}; over W=4 V=32 {first[name] - first['frobw_g528_w4_v32']:9.1f}, vector fold predicted {vec(128):9.1f}")
    print("jacobi's max (a CAS that keeps the word mostly succeeds at once: V attempts a row):")
    for g, v in ((4094, 256), (4094, 32), (528, 128), (528, 32), (1056, 64), (264, 32)):
        name = f"jac_g{g}_v{v}"
        if name in first:
            lin = 0.0 if v <= 32 else 4094 / SMS * v * cas_shared * 1e-3
            print(f"  {name:18s} measured {first[name]:9.1f}; vector fold predicted {lin:7.1f} (a sum's would be {vec(v, 4094):9.1f})")


if __name__ == "__main__":
    main()
