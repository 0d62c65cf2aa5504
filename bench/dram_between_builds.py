#!/usr/bin/env python3
"""DRAM reads of every candidate of every example under two builds, matched by mapping, block
and grid; prints how many changed and the 25 largest changes (|log ratio|).

    bench/dram_between_builds.py NEW_BIN OLD_BIN   (from the repo root; each example with its
                                                   `// schedpredict-args:` line)
"""
import json, subprocess, sys, re, glob, math
new, base = sys.argv[1], sys.argv[2]
tot = chg = 0; big = []
for f in sorted(glob.glob("examples/*.c")):
    args = []
    for line in open(f):
        m = re.match(r"// schedpredict-args:(.*)", line)
        if m: args = m.group(1).split()
    def run(b):
        r = subprocess.run([b, "--format", "json", "--top", "100000", "-q", f] + args, capture_output=True, text=True)
        return json.loads(r.stdout)["nests"] if r.returncode == 0 else []
    A, B = run(new), run(base)
    for na, nb in zip(A, B):
        kb = {(c["cuda_mapping"], tuple(c["block"]), tuple(c["grid"])): c for c in nb["ranking"]}
        for c in na["ranking"]:
            o = kb.get((c["cuda_mapping"], tuple(c["block"]), tuple(c["grid"])))
            if not o: continue
            tot += 1
            x, y = c["counters"]["dram_read_bytes"], o["counters"]["dram_read_bytes"]
            if x != y:
                chg += 1
                big.append((abs(math.log((x+1)/(y+1))), na["location"], c["cuda_mapping"], c["block"], c["grid"], c["screened_only"], y/1e6, x/1e6))
big.sort(reverse=True)
print(f"{tot} candidates, {chg} with other DRAM reads")
for b in big[:25]: print("  %.2f %s %s %s %s screened_only=%s %.1f -> %.1f MB" % b)
