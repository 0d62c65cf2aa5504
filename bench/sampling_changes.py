#!/usr/bin/env python3
"""The candidates whose counters two runs of schedpredict disagree on, each against an --exact
run: relative error in % of L1 hit sectors, L2 read sectors, L2 read hits, DRAM read bytes and
predicted time, for the first run (A) and the second (B).

    bench/sampling_changes.py EXACT.json[.gz] A.json B.json

Each file is `schedpredict --format json --top 100000 -q ...` output of the same source and
arguments (EXACT with --exact); candidates are matched by their trace (scripts/trace_key.py).
"""
import gzip
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
from trace_key import cand_key  # noqa: E402

if len(sys.argv) != 4:
    sys.exit(__doc__)
load = lambda f: json.load((gzip.open if f.endswith(".gz") else open)(f, "rt"))["nests"]
exact, a_nests, b_nests = (load(f) for f in sys.argv[1:4])
fields = ["ld_l1_hit_sectors", "l2_tex_read_transactions", "l2_read_hit_sectors", "dram_read_bytes"]
err = lambda x, e: 100 * (x / e - 1) if e else 0.0
for ne, na, nb in zip(exact, a_nests, b_nests):
    by_exact = {cand_key(c): c for c in ne["ranking"]}
    by_a = {cand_key(c): c for c in na["ranking"]}
    print(na["location"] + "   (L1 hits, L2 reads, L2 hits, DRAM reads, time: % off --exact)")
    for c in nb["ranking"]:
        k = cand_key(c)
        if k not in by_a or by_a[k]["counters"] == c["counters"]:
            continue
        e = by_exact[k]
        for tag, x in (("A", by_a[k]), ("B", c)):
            print(f"  {c['cuda_mapping']:28.28} {'x'.join(map(str, c['block']))} "
                  f"{'x'.join(map(str, c['grid']))} {tag} " +
                  " ".join(f"{err(x['counters'][f], e['counters'][f]):+6.2f}" for f in fields) +
                  f"  {err(x['time']['total_us'], e['time']['total_us']):+6.2f}")
