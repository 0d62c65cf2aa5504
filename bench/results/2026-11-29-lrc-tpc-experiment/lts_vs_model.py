# (run from the repo root) model L2 lookups (l2_tex_read_transactions - l2_read_merged_sectors of the patched binary) against the H100 lts__t_sectors_srcunit_tex_op_read of the eighth run:
#   python3 bench/results/2026-11-29-lrc-tpc-experiment/lts_vs_model.py BIN
import csv,json,os,sys,statistics,subprocess,concurrent.futures
sys.path.insert(0,"scripts")
from counters_measured import load_measured, run_example, RUN8
run=os.environ.get("RUN",RUN8)
meas=load_measured(run)
names=sorted({k[0][:-2] for k in meas})
BIN=os.path.abspath(sys.argv[1])
with concurrent.futures.ThreadPoolExecutor(2) as ex: res=list(ex.map(lambda n: run_example(BIN,n),names))
model={}
for r in res:
  if isinstance(r,dict): model.update(r)
per={}
allb=[];alla=[]
for k,m in meas.items():
  c=model.get(k)
  if not c: continue
  lts=m["l2_tex_read_transactions"]; miss=m["ld_l1_miss_sectors"]
  if lts<=0: continue
  look=c["l2_tex_read_transactions"]-c.get("l2_read_merged_sectors",0)
  eb=abs(c["l2_tex_read_transactions"]/lts-1)*100; ea=abs(look/lts-1)*100
  # merged share model vs measured
  ms=c.get("l2_read_merged_sectors",0)/c["l2_tex_read_transactions"] if c["l2_tex_read_transactions"] else 0
  mm=1-lts/miss if miss else 0
  per.setdefault(f"{k[0]}:{k[1]}",[]).append((eb,ea,ms,mm))
  allb.append(eb);alla.append(ea)
print(f"{'nest':28s} n  medErr(no merge) medErr(merge) modelMergedShare measMergedShare")
for n,v in sorted(per.items()):
  print(f"{n:28s} {len(v):3d} {statistics.median(x[0] for x in v):7.2f} {statistics.median(x[1] for x in v):7.2f}   {statistics.mean(x[2] for x in v):.3f} {statistics.mean(x[3] for x in v):.3f}")
print("all",len(allb),"median",statistics.median(allb),statistics.median(alla),"mean",statistics.mean(allb),statistics.mean(alla))
print("within1%", sum(x<1 for x in allb), sum(x<1 for x in alla))
