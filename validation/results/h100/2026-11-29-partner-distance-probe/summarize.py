#!/usr/bin/env python3
"""The partner-distance probe's table: per configuration, the CUDA-event times of the two runs
(partner_distance.csv, partner_distance_2.csv), and from the ncu run (partner_distance_ncu.csv.gz,
9 launches a configuration, in the probe's order, the L2 flushed before each) the medians of DRAM
read and write MB, L2 read sectors and their lookup hits. Then the walks (walk.csv, walk_2.csv,
walk_ncu.csv.gz, the second device call), the same way.
    python3 validation/results/h100/2026-11-29-partner-distance-probe/summarize.py"""
import csv, gzip, os, statistics as st
d = os.path.dirname(os.path.abspath(__file__))
def rows(name):
    return [r for r in csv.DictReader(l for l in open(os.path.join(d, name)) if not l.startswith('#'))]
r1, r2 = rows('partner_distance.csv'), rows('partner_distance_2.csv')
def metrics(name, nrows):
    met = {}
    with gzip.open(os.path.join(d, name), 'rt') as f:
        for r in csv.DictReader(l for l in f if l.startswith('"')):
            met.setdefault(int(r['ID']), {})[r['Metric Name']] = float(r['Metric Value'].replace(',', ''))
    launches = sorted(met)
    return met, launches, len(launches) // nrows
met, launches, per = metrics('partner_distance_ncu.csv.gz', len(r1))
print('| kernel | piece | order | D | us (run 1, 2) | DRAM read MB | DRAM write MB | L2 read sectors (M) | of them hits (M) |')
print('|---|---|---|---|---|---|---|---|---|')
for k, (a, b) in enumerate(zip(r1, r2)):
    ms = [met[i] for i in launches[k * per:(k + 1) * per]]
    med = lambda m: st.median(x[m] for x in ms)
    print(f"| {a['kernel']} | {a['piece_bytes']} B | {a['order']} | {a['D']} | {float(a['time_us']):.1f}, {float(b['time_us']):.1f} | "
          f"{med('dram__bytes_read.sum') / 1e6:.1f} | {med('dram__bytes_write.sum') / 1e6:.1f} | "
          f"{med('lts__t_sectors_srcunit_tex_op_read.sum') / 1e6:.2f} | "
          f"{med('lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum') / 1e6:.2f} |")

w1, w2 = rows('walk.csv'), rows('walk_2.csv')
met, launches, per = metrics('walk_ncu.csv.gz', len(w1))
print()
print('| kernel | order | walk L (= D) | us (run 1, 2) | DRAM read MB | DRAM write MB |')
print('|---|---|---|---|---|---|')
for k, (a, b) in enumerate(zip(w1, w2)):
    ms = [met[i] for i in launches[k * per:(k + 1) * per]]
    med = lambda m: st.median(x[m] for x in ms)
    print(f"| {a['kernel']} | {a['order']} | {a['D'] if a['order'] == 'walk' else '-'} | {float(a['time_us']):.1f}, "
          f"{float(b['time_us']):.1f} | {med('dram__bytes_read.sum') / 1e6:.1f} | {med('dram__bytes_write.sum') / 1e6:.1f} |")
