#!/usr/bin/env python3
"""The block-order probe's table: per kernel (order x mode), its CUDA-event times (two runs) and
the counters of its last profiled launch (ncu profiles each of the 6 launches of a kernel).

    python3 validation/results/h100/2026-11-27-block-order-probe/summarize.py [3]
3: the second call's files (block_order_3*.csv*, all eight kernels, one timing run)."""
import collections
import csv
import gzip
import os
import sys

d = os.path.dirname(os.path.abspath(__file__))
second = len(sys.argv) > 1 and sys.argv[1] == "3"
runs = ("block_order_3.csv",) if second else ("block_order.csv", "block_order_2.csv")
times = [list(csv.DictReader(open(os.path.join(d, f)))) for f in runs]
hdr, data = None, collections.OrderedDict()
for row in csv.reader(gzip.open(os.path.join(d, "block_order_3_ncu.csv.gz" if second else "block_order_ncu.csv.gz"), "rt")):
    if "ID" in row and "Metric Name" in row:
        hdr = row
    elif hdr and len(row) == len(hdr):
        x = dict(zip(hdr, row))
        data.setdefault(int(x["ID"]), {})[x["Metric Name"]] = float(x["Metric Value"].replace(",", ""))
launches = list(data.values())
per = len(launches) // len(times[0])
print(f"| order | mode | us ({len(times)} run{'s' if len(times) > 1 else ''}) | DRAM read MB | DRAM write MB | L2 read sectors | of them hits | L2 write sectors |")
print("|---|---|---|---|---|---|---|---|")
for k, t in enumerate(times[0]):
    m = launches[(k + 1) * per - 1]
    us = ", ".join(f"{float(r[k]['us']):.1f}" for r in times)
    print(f"| {t['order']} | {t['mode']} | {us} | "
          f"{m['dram__bytes_read.sum'] / 1e6:.1f} | {m['dram__bytes_write.sum'] / 1e6:.1f} | "
          f"{m['lts__t_sectors_srcunit_tex_op_read.sum']:,.0f} | "
          f"{m['lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum']:,.0f} | "
          f"{m['lts__t_sectors_srcunit_tex_op_write.sum']:,.0f} |")
