# (repo root) a binary's predicted times for the 22 candidates measured here, against the H200's:
#   python3 validation/results/h200/2026-11-29-redblack/model_vs_measured.py BIN [h200|h100]
import json,subprocess,math,sys,statistics
sys.path.insert(0,'scripts')
from trace_key import cand_key
D='validation/results/h200/2026-11-29-redblack'
def meas(plan,m):
    p=json.load(open(plan)); mm=json.load(open(m))
    pc={c['id']:c for c in p['kernels'][0]['candidates']}
    out={}
    for k in mm['kernels']:
        for c in k['candidates']:
            if c.get('status')!='ok': continue
            pcc=pc[c['id']]
            out[cand_key(pcc)]=c['time_us']['median']
    return out
M={}
M.update(meas(D+'/plans/redblack.h100model.plan.json',D+'/h100-model/redblack.plan.measured.json'))
M.update(meas(D+'/plans/redblack.h200model.plan.json',D+'/h200-model/redblack.plan.measured.json'))
binary=sys.argv[1]; arch=sys.argv[2] if len(sys.argv)>2 else 'h200'
r=json.loads(subprocess.run([binary,'examples/redblack.c','--arch',arch,'--param','color=1','--format','json','--top','100000','-q'],capture_output=True,text=True).stdout)
rank={cand_key(c):(i+1,c['time']['total_us']) for i,c in enumerate(r['nests'][0]['ranking'])}
errs=[]
for k,t in sorted(M.items(), key=lambda kv: kv[1]):
    if k in rank: errs.append(math.log(t/rank[k][1]))
best=min(M.items(), key=lambda kv: kv[1])
pick=min((rank[k][0],k) for k in M if k in rank)
print(f"{binary} --arch {arch}: {len(M)} measured candidates on the H200, mean |log(measured/predicted)| {statistics.mean(abs(e) for e in errs):.3f}, median measured/predicted {math.exp(statistics.median(errs)):.3f}; pick among measured: {pick[1][0]} {pick[1][1]} {pick[1][2]} rank {pick[0]} measured {M[pick[1]]:.1f} us, best {best[1]:.1f} us")
