#!/usr/bin/env python3
"""Which of two near-ties ran faster, by block shape: the evidence for the plateau's order
(SP_RANK_PLATEAU_THREADS and sp_rank_plateau_shape_before in include/schedpredict/rank.h).

    python3 scripts/h200_measured.py BIN --duration --json H200.json
    python3 scripts/replay_measured.py BIN --duration --json H100.json
    python3 scripts/plateau_pairs.py [--h200 H200.json] [--h100 H100.json] [--threads 256]

Per nest, the matched candidates predicted within 5 % of the nest's fastest matched prediction
are its near-ties. Every pair of them whose block x differs counts once, by whether the wider
block has more than --threads threads and whether the narrower has: the wider ran faster (by
more than 2 %), the narrower did, or they tied. The H100's replay holds its merged dataset
(a candidate measured in several runs counts once, at its merged time)."""
import argparse, json, re, sys
from collections import defaultdict

PLATEAU = 1.05  # SP_RANK_PLATEAU
FASTER = 1.02


def h200_nests(path):
    d = json.load(open(path))
    for label in d:
        for n in d[label]["nests"]:
            yield [(c["pred_us"], c["time_us"], tuple(c["block"])) for c in n["candidates"]]
        return


def h100_nests(path):
    d = json.load(open(path))
    for label, r in d["datasets"]["merged"]["rankings"].items():
        for n in r["nests"]:
            out = []
            for c in n["candidates"]:
                m = re.search(r" b(\d+)x(\d+)x(\d+) ", c["key"])
                if not m:
                    sys.exit(f"plateau_pairs: no block in key {c['key']!r}")
                out.append((c["pred_us"], c["time_us"], tuple(int(v) for v in m.groups())))
            yield out
        return


def count(nests, threads):
    st = defaultdict(lambda: [0, 0, 0])
    for cs in nests:
        cs = [c for c in cs if c[0] and c[0] > 0 and c[1] > 0]
        if not cs:
            continue
        fastest = min(c[0] for c in cs)
        ties = [c for c in cs if c[0] <= PLATEAU * fastest]
        for a in ties:
            for b in ties:
                if a[2][0] <= b[2][0]:
                    continue  # a is the wider in x
                big = lambda c: c[2][0] * c[2][1] * c[2][2] > threads
                s = st[(big(a), big(b))]
                s[0 if a[1] * FASTER < b[1] else 1 if b[1] * FASTER < a[1] else 2] += 1
    return st


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--h200", metavar="FILE", help="h200_measured.py --json output")
    ap.add_argument("--h100", metavar="FILE", help="replay_measured.py --json output")
    ap.add_argument("--threads", type=int, default=256)
    a = ap.parse_args()
    if not a.h200 and not a.h100:
        ap.error("give --h200 or --h100 (or both)")
    print(f"{'GPU':5} {'wider block':>12} {'narrower':>12} {'wider faster':>13} {'narrower faster':>16} {'tie':>5}")
    for gpu, path, nests in (("H200", a.h200, h200_nests), ("H100", a.h100, h100_nests)):
        if not path:
            continue
        st = count(nests(path), a.threads)
        for key in sorted(st):
            w, n, t = st[key]
            size = lambda big: f"> {a.threads}" if big else f"<= {a.threads}"
            print(f"{gpu:5} {size(key[0]):>12} {size(key[1]):>12} {w:13d} {n:16d} {t:5d}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
