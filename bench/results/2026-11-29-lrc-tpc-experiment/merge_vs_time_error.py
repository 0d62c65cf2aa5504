# (run from the repo root) log(measured/predicted) of the replay candidates by the model time bound and the measured L2 lookups per L1 miss:
#   python3 join_bound.py BIN REPLAY.json [CACHE.json]   (writes /tmp/s48/joined.json; mkdir -p /tmp/s48 first)
#   python3 merge_vs_time_error.py 2026-11-23-lane-loops-b441b9a
import csv,json,math,os,sys,statistics
sys.path.insert(0,"scripts")
from trace_key import trace_mapping
from replay_measured import key_str
J=json.load(open("/tmp/s48/joined.json"))
meas={}
for run in sys.argv[1:]:
  for r in csv.DictReader(open(f"validation/results/h100/{run}/comparison.csv")):
    if r['status']!='ok' or not r['l2_tex_read_transactions_measured']: continue
    f,l=r['kernel'].rsplit(':',1)
    b=[int(x) for x in r['block'].split('x')]; g=[int(x) for x in r['grid'].split('x')]
    k=(os.path.basename(f)+":"+l, key_str((trace_mapping(r['cuda_mapping'],b,g),tuple(b),tuple(g))))
    miss=float(r['gld_transactions_measured'])-float(r['ld_l1_hit_sectors_measured'])
    if miss>0: meas[k]=(float(r['l2_tex_read_transactions_measured'])/miss, float(r['time_us_measured']))
rows=[]
for nest,key,t,p,tm,cnt,b,g in J:
  x=meas.get((nest,key))
  if not x: continue
  rows.append((tm['bound'],x[0],math.log(t/p),nest,key,t,p,tm))
for bound in sorted({r[0] for r in rows}):
  rs=[r for r in rows if r[0]==bound]
  for lo,hi in [(0,.5),(.5,.8),(.8,.95),(.95,2)]:
    v=[r[2] for r in rs if lo<=r[1]<hi]
    if v: print(f"{bound:14s} l2/miss [{lo},{hi}) n={len(v):4d} mean={statistics.mean(v):+.3f} med={statistics.median(v):+.3f}")
if '-v' in os.environ.get('V',''):
  pass
rows.sort(key=lambda r:r[2])
for r in rows[:25]: print(f"{r[2]:+.3f} {r[1]:.2f} {r[0]:14s} {r[3]:16s} {r[4]:50s} {r[5]:8.1f} {r[6]:8.1f} l2={r[7]['l2_us']:.1f} dram={r[7]['dram_us']:.1f} l1={r[7]['l1_us']:.1f} lat={r[7]['latency_us']:.1f}")
