# (repo root) a binary's predicted times for the candidates measured here, against the H200's:
#   python3 validation/results/h200/2026-11-29-fp-op-probe/model_vs_measured.py BIN
import json, subprocess, math, sys, statistics
sys.path.insert(0, 'scripts')
from trace_key import cand_key
D = 'validation/results/h200/2026-11-29-fp-op-probe'
binary = sys.argv[1]
for ex in ('aos_particles', 'correlation', 'himeno'):
    plan = json.load(open(f'{D}/plans/{ex}.plan.json'))
    meas = json.load(open(f'{D}/measured/{ex}.plan.measured.json'))
    r = json.loads(subprocess.run([binary, f'examples/{ex}.c', '--arch', 'h200', '--format', 'json',
                                   '--top', '100000', '-q'], capture_output=True, text=True).stdout)
    for k in meas['kernels']:
        pk = next(p for p in plan['kernels'] if p['id'] == k['id'])
        pc = {c['id']: c for c in pk['candidates']}
        nest = next(n for n in r['nests'] if n['location'].split('/')[-1].rsplit(':', 1)[0] == k['id'])
        pred = {cand_key(c): (i + 1, c['time']['total_us'], c['time']['bound']) for i, c in enumerate(nest['ranking'])}
        errs, rows = [], []
        for c in k['candidates']:
            if c.get('status') != 'ok': continue
            key = cand_key(pc[c['id']])
            if key not in pred: continue
            t = c['time_us']['median']
            errs.append(math.log(t / pred[key][1]))
            rows.append((t, key, pred[key]))
        if not errs: continue
        best = min(rows)
        pick = min(rows, key=lambda x: x[2][0])
        print(f"{k['id']:22s} n {len(errs):2d}  mean |log(measured/predicted)| {statistics.mean(abs(e) for e in errs):.3f}"
              f"  median measured/predicted {math.exp(statistics.median(errs)):.3f}"
              f"  pick {pick[0]:.1f} us (best {best[0]:.1f})  bounds: {', '.join(sorted(set(x[2][2] for x in rows)))}")
