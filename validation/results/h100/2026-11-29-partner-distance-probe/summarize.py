#!/usr/bin/env python3
"""The partner-distance probe's table: per configuration, the CUDA-event times of the two runs
(partner_distance.csv, partner_distance_2.csv), and from the ncu run (partner_distance_ncu.csv.gz,
9 launches a configuration, in the probe's order, the L2 flushed before each) the medians of DRAM
read and write MB, L2 read sectors and their lookup hits. Then the walks (walk*.csv, walk*_ncu.csv.gz: the third
and fourth device calls), the same way.
    python3 validation/results/h100/2026-11-29-partner-distance-probe/summarize.py"""
import csv, gzip, os, statistics as st
d = os.path.dirname(os.path.abspath(__file__))
def rows(name):
    return [r for r in csv.DictReader(l for l in open(os.path.join(d, name)) if not l.startswith('#'))]
def metrics(name, nrows):
    met = {}
    with gzip.open(os.path.join(d, name), 'rt') as f:
        for r in csv.DictReader(l for l in f if l.startswith('"')):
            met.setdefault(int(r['ID']), {})[r['Metric Name']] = float(r['Metric Value'].replace(',', ''))
    launches = sorted(met)
    return met, launches, len(launches) // nrows
MB = lambda v: f'{v / 1e6:.1f}'
M = lambda v: f'{v / 1e6:.2f}'


def table(first, second, ncu, walks):
    """One row a configuration: the two runs' times and the ncu medians."""
    r1, r2 = rows(first), rows(second)
    met, launches, per = metrics(ncu, len(r1))
    cols = [('dram__bytes_read.sum', MB), ('dram__bytes_write.sum', MB)]
    if not walks:
        cols += [('lts__t_sectors_srcunit_tex_op_read.sum', M), ('lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum', M)]
    head = ['kernel', 'piece', 'order', 'walk L (= D)' if walks else 'D', 'us (run 1, 2)', 'DRAM read MB',
            'DRAM write MB'] + ([] if walks else ['L2 read sectors (M)', 'of them hits (M)'])
    print('| ' + ' | '.join(head) + ' |')
    print('|' + '---|' * len(head))
    for k, (a, b) in enumerate(zip(r1, r2)):
        ms = [met[i] for i in launches[k * per:(k + 1) * per]]
        d_ = a['D'] if not walks or a['order'] == 'walk' else '-'
        cells = [a['kernel'], a['piece_bytes'] + ' B', a['order'], d_, f"{float(a['time_us']):.1f}, {float(b['time_us']):.1f}"]
        cells += [fmt(st.median(x[m] for x in ms)) for m, fmt in cols]
        print('| ' + ' | '.join(cells) + ' |')


table('partner_distance.csv', 'partner_distance_2.csv', 'partner_distance_ncu.csv.gz', False)
for first, second, ncu in (('walk.csv', 'walk_2.csv', 'walk_ncu.csv.gz'),
                           ('walk4.csv', 'walk4_2.csv', 'walk4_ncu.csv.gz')):
    print()
    table(first, second, ncu, True)
