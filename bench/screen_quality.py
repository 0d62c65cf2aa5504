#!/usr/bin/env python3
"""How well the screening's short samples order a nest's candidates, against every candidate
refined: for comparing screening rules (how long a sample runs, where it stops).

Inputs, per nest K of each example NAME (bench_rank writes both; bench/refine_rounds.py
describes and reads them):
  DUMP/NAME.K  bench_rank --screen-dump DUMP/NAME: every candidate's screened time (column 10)
  REF/NAME.K   bench_rank --reference --ref-file REF/NAME: every candidate's refined time

Per nest and dump directory:
  spearman   rank correlation of screened and refined times over all candidates
  spread     median absolute deviation of log(refined / screened) from its median, in %: how
             unevenly the screening errs (an even error does not change the order)
  top10      how deep in the screened order the refined top 10 all lie
  ratio      the median refined / screened ratio

    python3 bench/screen_quality.py REF DUMP[,DUMP2...] NAME...
"""
import math
import statistics
import sys

import refine_rounds  # the dump and reference files' reader (load)


def ranks(v):
    r = [0] * len(v)
    for k, i in enumerate(sorted(range(len(v)), key=lambda i: v[i])):
        r[i] = k
    return r


def spearman(a, b):
    ra, rb = ranks(a), ranks(b)
    ma, mb = sum(ra) / len(ra), sum(rb) / len(rb)
    num = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    den = math.sqrt(sum((x - ma) ** 2 for x in ra) * sum((y - mb) ** 2 for y in rb))
    return num / den if den else 1.0


def quality(cands):
    screened = [c['scr'] for c in cands]
    refined = [c['ref'] for c in cands]
    logs = [math.log(r / s) for r, s in zip(refined, screened) if r > 0 and s > 0]
    med = statistics.median(logs)
    spread = statistics.median([abs(x - med) for x in logs])
    order = sorted(range(len(screened)), key=lambda i: screened[i])
    pos = {i: k for k, i in enumerate(order)}
    top = sorted(range(len(refined)), key=lambda i: refined[i])[:10]
    return spearman(screened, refined), spread, max(pos[i] for i in top) + 1, math.exp(med)


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    ref, dumps, names = argv[0], argv[1].split(','), argv[2:]
    print(f"{'nest':16} {'dump':24} {'cands':>5} {'spearman':>8} {'spread':>7} {'top10':>5} {'ratio':>6}")
    for name in names:
        per_dump = [(d, dict(refine_rounds.load(d, ref, name))) for d in dumps]
        nests = sorted({n for _, loaded in per_dump for n in loaded}, key=lambda n: int(n.rsplit('.', 1)[1]))
        for nest in nests:
            for d, loaded in per_dump:
                cands = loaded.get(nest)
                if not cands or len(cands) < 10:
                    continue
                rho, spread, depth, ratio = quality(cands)
                print(f"{nest:16} {d[-24:]:24} {len(cands):5d} {rho:8.4f} {100 * spread:6.1f}% {depth:5d} {ratio:6.3f}")


if __name__ == '__main__':
    main(sys.argv[1:])
