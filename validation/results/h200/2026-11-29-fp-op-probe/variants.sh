#!/bin/bash
# model vs the nbody_body_probe: prints function, NI, predicted kernel us (total - launch)
BIN=${1:-build/schedpredict}  # (repo root) bash validation/results/h200/2026-11-29-fp-op-probe/variants.sh [BIN]
for ni in 32 1024; do $BIN validation/results/h200/2026-11-29-fp-op-probe/nbody_variants.c --arch h200 --block $ni --gangs 1 --format json --top 100 -q -- -DNI=$ni | python3 -c "
import json,sys;d=json.load(sys.stdin)
meas={('full',32):550.9,('nodiv',32):405.9,('nosqrt',32):463.2,('neither',32):283.3,('full',1024):22.32,('nodiv',1024):15.77,('nosqrt',1024):16.47,('neither',1024):10.82}
for n in d['nests']:
  for c in n['ranking']:
    if c['block'][0]==$ni and c['grid'][0]==1:
      t=c['time'];f=n['function']
      m=meas[(f,$ni)]*16384/1980*( 1 if $ni==32 else 32)
      p=t['total_us']-2
      print('%-8s NI %4d measured %7.0f us predicted %7.0f us (%+.0f %%)  chain %.0f issue %.0f bound %s'%(f,$ni,m,p,100*(p/m-1),t['fp_chain_us'],t['fp_issue_us'],t['bound']));break
"; done
