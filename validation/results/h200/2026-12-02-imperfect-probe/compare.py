# Matches the probe's configurations (run1.csv, run2.csv) with the model's candidates of the same
# mapping, block and grid (model-*.json.gz) into comparison.csv. Run from the repository root.
import csv, gzip, json, math
R='validation/results/h200/2026-12-02-imperfect-probe'
model={}
for f,names in ((R+'/model-mvt.json.gz',('mvt1','mvt2')),(R+'/model-mvt-gcc.json.gz',('mvt1','mvt2')),(R+'/model-rowscale.json.gz',('rowscale',))):
    d=json.load(gzip.open(f,'rt'))
    for n,name in zip(d['nests'],names):
        for r in n['ranking']:
            key=(name,r['cuda_mapping'],r['block'][0],r['block'][1],r['grid'][0])
            model.setdefault(key,r['time']['total_us'])
runs=[list(csv.DictReader(l for l in open(f'{R}/run{k}.csv') if not l.startswith('#'))) for k in (1,2)]
w=csv.writer(open(R+'/comparison.csv','w'))
w.writerow(['nest','mapping','block_x','block_y','grid','measured_us','predicted_us','measured_over_predicted'])
errs=[]
for r1,r2 in zip(*runs):
    key=(r1['nest'],r1['mapping'],int(r1['block_x']),int(r1['block_y']),int(r1['grid']))
    t=min(float(r1['time_us']),float(r2['time_us']))
    p=model.get(key)
    w.writerow(list(key)+[f'{t:.2f}', f'{p:.2f}' if p else '', f'{t/p:.3f}' if p else ''])
    if p: errs.append(t/p)
print(len(errs),'matched; measured/predicted',round(min(errs),2),'-',round(max(errs),2),'; within 20 %:',sum(abs(e-1)<=0.2 for e in errs),'; mean |log|',round(sum(abs(math.log(e)) for e in errs)/len(errs),3))
