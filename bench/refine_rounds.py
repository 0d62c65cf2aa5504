#!/usr/bin/env python3
"""Replays the ranking's refinement rounds (rank/refine.c) offline, to compare rules for what a
later round refines, and measures how well each rule's estimate of a refined time holds.

Inputs, per nest K of each example NAME (bench_rank writes both):
  DUMP/NAME.K  bench_rank --screen-dump DUMP/NAME: every candidate's screened time, occupancy,
               subset and baseline flags (the format is at the top of bench/bench_rank.c)
  REF/NAME.K   bench_rank --reference --ref-file REF/NAME: every candidate's refined time

A candidate the replay refines takes its reference time, so the replay needs no simulation.
The reference refines every candidate on the refinement budget without the screening's
per-candidate budget cut (sp_refine_budget), so a replayed count can differ from bench_rank's by
a candidate or two where times tie.

Rules:
  calibration  every screened time times the baselines' refined/screened ratio (before 2026-11-24)
  twins        a refined screening twin's ratio where there is one (same block, occupancy and
               screened time within 0.5 %), else the calibration; one candidate of a twin group
               per later round (rank/refine.c since 2026-11-24)
  twins-block  the same with twins on the block alone (no occupancy): the contrast

  python3 bench/refine_rounds.py DUMP REF NAME...          the table
  python3 bench/refine_rounds.py --pairs DUMP REF NAME...  the estimates' errors
"""
import collections
import itertools
import math
import os
import sys

TWIN = 0.005
MARGIN = 0.02
PER_ROUND = 8
ROUNDS = 4


def load(dump, ref, name):
    nests = []
    k = 0
    while os.path.exists(f'{dump}/{name}.{k}'):
        cands = []
        for line in open(f'{dump}/{name}.{k}'):
            f = line.split()
            cands.append(dict(block=tuple(map(int, f[1:4])), grid=tuple(map(int, f[4:7])),
                              occ=(int(f[7]), int(f[8])), scr=float(f[9]), sp=float(f[10]),
                              rp=float(f[13]) if int(f[11]) else None, also=int(f[14]),
                              base=int(f[15])))
        rpath = f'{ref}/{name}.{k}'
        refs = [float(x) for x in open(rpath)] if os.path.exists(rpath) else []
        if len(refs) == len(cands):
            for c, r in zip(cands, refs):
                c['ref'] = r
            nests.append((f'{name}.{k}', cands))
        else:
            print(f'{name}.{k}: no reference of {len(cands)} candidates', file=sys.stderr)
        k += 1
    return nests


def twins(rule, a, b):
    return (a['block'] == b['block'] and (rule == 'twins-block' or a['occ'] == b['occ']) and
            abs(a['scr'] / b['scr'] - 1) <= TWIN)


def calibration(cands, refined):
    logs = []
    for c in cands:
        if c['base'] and refined[id(c)] and c['rp'] is not None:
            r, s = c['ref'] - c['rp'], c['scr'] - c['sp']
            if r > 0 and s > 0:
                logs.append(math.log(r / s))
    return max(1.0, math.exp(sum(logs) / len(logs))) if logs else 1.0


def replay(cands, rule):
    """Candidates refined in all, per round, and the best refined (all, subset) over the best."""
    refined = {id(c): False for c in cands}
    log = []
    for rnd in range(ROUNDS):
        order = sorted(cands, key=lambda c: (not refined[id(c)],
                                             c['ref'] if refined[id(c)] else c['scr']))
        done = [c for c in cands if refined[id(c)]]
        best = min((c['ref'] for c in done), default=math.inf)
        best_also = min((c['ref'] for c in done if c['also']), default=math.inf)
        cal = calibration(cands, refined)

        def estimate(c):
            if rule != 'calibration':
                tw = [r['ref'] * c['scr'] / r['scr'] for r in done if twins(rule, r, c)]
                if tw:
                    return min(tw)
            return (c['scr'] - c['sp']) * cal + c['sp']

        queue = []

        def contender(c, b):
            if refined[id(c)]:
                return False
            if rnd == 0:
                return True
            return (estimate(c) < b * (1 - MARGIN) and
                    (rule == 'calibration' or not any(twins(rule, q, c) for q in queue)))

        nalso = 0
        for c in order:
            if len(queue) >= PER_ROUND:
                break
            if contender(c, best):
                queue.append(c)
                nalso += c['also']
        first = list(queue)
        for c in order:
            if nalso >= PER_ROUND // 2:
                break
            if c['also'] and not any(c is q for q in first) and contender(c, best_also):
                queue.append(c)
                nalso += 1
        if rnd == 0:
            queue += [c for c in cands if c['base'] and not any(c is q for q in queue)]
        if not queue:
            break
        for c in queue:
            refined[id(c)] = True
        log.append(len(queue))
    done = [c for c in cands if refined[id(c)]]
    regret = min(c['ref'] for c in done) / min(c['ref'] for c in cands) - 1
    also = [c['ref'] for c in cands if c['also']]
    regret_also = (min(c['ref'] for c in done if c['also']) / min(also) - 1) if also else 0
    return len(done), log, regret, regret_also


def table(nests):
    rules = ('calibration', 'twins', 'twins-block')
    print('| nest | ' + ' | '.join(f'{r}: refined (per round), regret, subset' for r in rules) + ' |')
    print('|---|' + '---|' * len(rules))
    for name, cands in nests:
        cells = []
        for r in rules:
            n, log, reg, rega = replay(cands, r)
            cells.append(f'{n} ({"+".join(map(str, log))}), {100 * reg:.2f} %, {100 * rega:.2f} %')
        print(f'| {name} | ' + ' | '.join(cells) + ' |')


def pairs(nests):
    """How far a twin's refined/screened ratio is from a candidate's own, against the error of
    the baselines' calibration on every candidate."""
    errs = collections.defaultdict(list)
    for _, cands in nests:
        everyone = {id(c): True for c in cands}
        cal = calibration(cands, everyone)
        for c in cands:
            errs['calibration'].append(abs(math.log((c['scr'] - c['sp']) * cal + c['sp']) -
                                           math.log(c['ref'])))
        for rule in ('twins', 'twins-block'):
            groups = collections.defaultdict(list)
            for c in cands:
                groups[c['block'] if rule == 'twins-block' else (c['block'], c['occ'])].append(c)
            for g in groups.values():
                for r, c in itertools.permutations(g, 2):
                    if twins(rule, r, c):
                        errs[rule].append(abs(math.log(r['ref'] * c['scr'] / r['scr'] / c['ref'])))
    print('| estimate | cases | median | 90th pct | 99th pct | worst | over 2 % | over 10 % |')
    print('|---|---|---|---|---|---|---|---|')
    for rule, xs in errs.items():
        xs.sort()

        def q(p):
            return f'{100 * (math.exp(xs[min(len(xs) - 1, int(p * len(xs)))]) - 1):.1f} %'
        over = [sum(x > math.log(t) for x in xs) / len(xs) for t in (1.02, 1.10)]
        print(f'| {rule} | {len(xs)} | {q(0.5)} | {q(0.9)} | {q(0.99)} | '
              f'{100 * (math.exp(xs[-1]) - 1):.0f} % | {100 * over[0]:.1f} % | {100 * over[1]:.1f} % |')


def main(argv):
    mode = table
    if argv and argv[0] == '--pairs':
        mode, argv = pairs, argv[1:]
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    dump, ref, names = argv[0], argv[1], argv[2:]
    nests = [n for name in names for n in load(dump, ref, name)]
    if not nests:
        print('refine_rounds: no nest with both a dump and a reference', file=sys.stderr)
        return 1
    mode(nests)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
