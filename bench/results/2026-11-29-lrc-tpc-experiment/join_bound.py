# (run from the repo root) see merge_vs_time_error.py
# join replay candidates (time_us, pred_us) with the model's time breakdown; error by bound
import json,math,os,re,shlex,subprocess,sys,statistics,concurrent.futures
sys.path.insert(0,"scripts")
from trace_key import cand_key
from replay_measured import key_str, example_args
BIN=sys.argv[1]; rep=json.load(open(sys.argv[2]))
m=rep['datasets']['merged']['rankings']['new']['nests']
exs=sorted({n['example'] for n in m})
def run(ex):
  src="examples/%s.c"%ex
  out=subprocess.run([BIN,"--format","json","--top","100000","-q",src]+example_args(os.path.abspath(src)),capture_output=True,text=True).stdout
  d={}
  for n in json.loads(out)["nests"]:
    if "ranking" not in n: continue
    f,l,_=n["location"].rsplit(":",2)
    for c in n["ranking"]:
      d.setdefault((os.path.basename(f)+":"+l,key_str(cand_key(c))),c)
  return d
cache=sys.argv[3] if len(sys.argv)>3 else None
if cache and os.path.exists(cache):
  info={tuple(k.split("|")):v for k,v in json.load(open(cache)).items()}
else:
  info={}
  with concurrent.futures.ThreadPoolExecutor(2) as ex:
    for d in ex.map(run,exs): info.update(d)
  if cache: json.dump({"|".join(k):v for k,v in info.items()},open(cache,"w"))
rows=[]
for n in m:
  for c in n['candidates']:
    i=info.get((n['nest'],c['key']))
    if not i: continue
    rows.append((n['nest'],c['key'],c['time_us'],c['pred_us'],i))
json.dump([[a,b,t,p,i['time'],i['counters'],i['block'],i['grid']] for a,b,t,p,i in rows],open("/tmp/s48/joined.json","w"))
cls={}
for nest,key,t,p,i in rows:
  e=math.log(t/p); cls.setdefault(i['time']['bound'],[]).append(e)
for k,v in sorted(cls.items()):
  print(f"{k:12s} n={len(v):5d} mean={statistics.mean(v):+.3f} median={statistics.median(v):+.3f} mean|.|={statistics.mean(abs(x) for x in v):.3f}")
