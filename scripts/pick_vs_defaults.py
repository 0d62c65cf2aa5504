#!/usr/bin/env python3
"""The model's pick against both compiler baselines of a merged validation run.

    scripts/pick_vs_defaults.py all.plan.json all.measured.json   (scripts/merge_validation.py)

Per kernel the pick is the measured candidate of lowest model_rank, overall and among those an
OpenACC compiler can express; the baselines are the plan's "defaults" (gcc: GCC's schedule of the nest
as written; nvc: outer gang, vector(128)). Prints the geometric mean of baseline time / pick time and
in how many kernels the pick is more than 2 % faster or slower."""
import json,math,sys
plan=json.load(open(sys.argv[1])); meas=json.load(open(sys.argv[2]))
mt={}
for k in meas['kernels']:
    for c in k['candidates']:
        if c.get('status')=='ok': mt[(k['id'],c['id'])]=c['time_us']['median']
res={'nvc':[],'gcc':[]}; expr=[]
for k in plan['kernels']:
    kid=k['id']; d=k.get('defaults',{})
    cands=[c for c in k['candidates'] if (kid,c['id']) in mt]
    if not cands: continue
    pick=min(cands,key=lambda c:c['model_rank'])
    ex=[c for c in cands if not c['openacc'].startswith('not expressible')]
    pe=min(ex,key=lambda c:c['model_rank']) if ex else None
    for key in res:
        if key in d and (kid,d[key]) in mt:
            res[key].append((mt[(kid,d[key])]/mt[(kid,pick['id'])], mt[(kid,d[key])]/mt[(kid,pe['id'])] if pe else None))
gm=lambda l: math.exp(sum(map(math.log,l))/len(l))
for key,l in res.items():
    a=[x for x,_ in l]; b=[y for _,y in l if y]
    print('vs %s default: n=%d  overall pick gm %.3f (faster %d, slower %d)  expressible pick gm %.3f (faster %d, slower %d)'%(key,len(a),gm(a),sum(x>1.02 for x in a),sum(x<0.98 for x in a),gm(b),sum(x>1.02 for x in b),sum(x<0.98 for x in b)))
