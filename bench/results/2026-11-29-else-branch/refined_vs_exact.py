#!/usr/bin/env python3
"""usage: refined_vs_exact.py PAIRS [N] [refined]  (from the repo root): PAIRS holds lines "EXACT.json[.gz] SAMPLED.json"
(schedpredict --format json --top 100000 -q, with and without --exact); prints the N candidates whose counts are
furthest from --exact (% off: load requests, L1 hits, L2 reads, L2 hits, DRAM reads, DRAM writes, time), the
refined ones only with a third argument; ~~ marks candidates only screened."""
import gzip,json,sys
sys.path.insert(0,"scripts")
from trace_key import cand_key
load=lambda f: json.load((gzip.open if f.endswith(".gz") else open)(f,"rt"))["nests"]
F=["global_load_requests","ld_l1_hit_sectors","l2_tex_read_transactions","l2_read_hit_sectors","dram_read_bytes","dram_write_bytes"]
err=lambda x,e:100*(x/e-1) if e else 0.0
rows=[]
for line in open(sys.argv[1]):
  ref,out=line.split()
  ex,s=load(ref),load(out)
  bex={}
  for ne in ex:
    for c in ne["ranking"]: bex[(ne["location"],cand_key(c))]=c
  for ns in s:
    for r,c in enumerate(ns["ranking"]):
      e=bex.get((ns["location"],cand_key(c)))
      if not e: continue
      v=[err(c["counters"][f],e["counters"][f]) for f in F]+[err(c["time"]["total_us"],e["time"]["total_us"])]
      rows.append((max(abs(x) for x in v),ref.split('/')[-1][:22],ns['location'].split('/')[-1],r,c['cuda_mapping'],'x'.join(map(str,c['block'])),'x'.join(map(str,c['grid'])),v,c.get('screened_only')))
rows.sort(key=lambda r:-r[0])
if len(sys.argv)>3: rows=[r for r in rows if not r[8]]
print("max  ref nest rank mapping block grid | ldreq l1hit l2rd l2hit dramR dramW time")
n=int(sys.argv[2]) if len(sys.argv)>2 else 40
for r in rows[:n]:
  print(f"{r[0]:6.2f} {r[1]:22} {r[2]:18} {r[3]:3d} {r[4]:28.28} {r[5]:8} {r[6]:12} "+" ".join(f"{x:+6.2f}" for x in r[7])+(" ~~" if r[8] else ""))
import statistics
print(len(rows),"candidates; over 1%:",sum(r[0]>1 for r in rows),"over 5%:",sum(r[0]>5 for r in rows), "refined over 1%:", sum(r[0]>1 and not r[8] for r in rows))
