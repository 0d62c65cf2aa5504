"""Per candidate of the eighth H100 run: DRAM read bytes modeled by two binaries against
dram__bytes_read.sum; the 25 whose |error| moved most, then mean |log(model/measured)| and
how many are within 10 %. Run from the repo root:
    python3 bench/results/2026-11-27-l2-sets/dram_diff.py BASE_BIN NEW_BIN"""
import sys, os, concurrent.futures
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..', 'scripts'))
import counters_measured as cm
meas = cm.load_measured(cm.RUN8)
names = sorted({k[0][:-2] for k in meas})
bins = [sys.argv[1], sys.argv[2]]
jobs = [(b, n) for b in bins for n in names]
with concurrent.futures.ThreadPoolExecutor(2) as ex:
    res = list(ex.map(lambda j: cm.run_example(*j), jobs))
model = {b: {} for b in bins}
for (b, n), r in zip(jobs, res):
    if not isinstance(r, str): model[b].update(r)
rows = []
for k, m in meas.items():
    if all(k in model[b] for b in bins):
        e = [model[b][k]['dram_read_bytes'] / m['dram_read_bytes'] - 1 if m['dram_read_bytes'] else 0 for b in bins]
        rows.append((abs(e[1]) - abs(e[0]), k, e, m['dram_read_bytes'], [model[b][k]['dram_read_bytes'] for b in bins]))
rows.sort(key=lambda r: -abs(r[0]))
for r in rows[:25]:
    print(f"{r[1][0]}:{r[1][1]} {r[1][2]} {r[1][3]} {r[1][4]}  err base {r[2][0]*100:+.1f}% new {r[2][1]*100:+.1f}%  meas {r[3]/1e6:.1f} MB model {r[4][0]/1e6:.1f} -> {r[4][1]/1e6:.1f}")
import math
def lg(a, b): return abs(math.log(max(a, 1) / max(b, 1)))
for i, b in enumerate(bins):
    errs = [lg(r[4][i], r[3]) for r in rows]
    print(b, "n", len(errs), "mean |log|", round(sum(errs) / len(errs), 4), "within 10%", sum(e < math.log(1.1) for e in errs))
