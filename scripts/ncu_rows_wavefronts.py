#!/usr/bin/env python3
"""The L1 data-stage wavefronts a request of the rows probes took, from their Nsight Compute CSV:
validation/probes/l1_store_wavefront_probe.cu (rows_write: write wavefronts a store request)
and l1_miss_wavefront_probe.cu (rows_read: read wavefronts a load request). Each case launched
3 times; the last counts. Prints R, pitch, source or target, wavefronts a request, and the
model's bank cycles and lines of that request.

    python3 scripts/ncu_rows_wavefronts.py store_ncu.csv [load_ncu.csv]"""
import collections, csv, sys


def kernels(path):
    """Each profiled launch's metrics, in launch order."""
    with open(path) as f:
        lines = [l for l in f if not l.startswith("==")]
    start = next((i for i, l in enumerate(lines) if l.startswith('"ID"')), None)
    if start is None:
        sys.exit(f"ncu_rows_wavefronts: {path}: no Nsight Compute CSV (a line starting \"ID\")")
    rows = list(csv.reader(lines[start:]))
    h = rows[0]
    i_id, i_m, i_v = h.index("ID"), h.index("Metric Name"), h.index("Metric Value")
    out = collections.OrderedDict()
    for r in rows[1:]:
        if len(r) > i_v:
            out.setdefault(r[i_id], {})[r[i_m]] = float(r[i_v].replace(",", ""))
    return list(out.values())


def request_shape(R, pitch):
    """bank cycles (32 banks of 4-byte words) and 128-byte lines of a warp over R rows of
    32/R doubles, rows pitch bytes apart"""
    per_bank, lines = [0] * 32, set()
    for l in range(32):
        byte = (l % R) * pitch + (l // R) * 8
        for w in range(2):
            per_bank[(byte // 4 + w) % 32] += 1
        lines.add(byte // 128)
    return max(per_bank), len(lines)


def table(path, kind, places, metric, requests):
    ks = kernels(path)
    per_case = 3
    cases = [(R, pitch, p) for R in (1, 2, 4, 8, 16, 32) for pitch in (32768, 32832) for p in places]
    if len(ks) != per_case * len(cases):
        sys.exit(f"ncu_rows_wavefronts: {path}: {len(ks)} launches, expected {per_case * len(cases)}")
    print(f"{kind}: R pitch {'where':5s} wavefronts/request bank_cycles lines")
    for n, (R, pitch, p) in enumerate(cases):
        k = ks[per_case * n + per_case - 1]
        banks, lines = request_shape(R, pitch)
        print(f"{kind}: {R:2d} {pitch} {p:5s} {k[metric] / k[requests]:6.2f} {banks:3d} {lines:3d}")


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    table(sys.argv[1], "store", ("dram", "l2"), "l1tex__data_pipe_lsu_wavefronts_cmd_write.sum",
          "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum")
    if len(sys.argv) == 3:
        table(sys.argv[2], "load", ("dram", "l2", "pend"), "l1tex__data_pipe_lsu_wavefronts_cmd_read.sum",
              "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum")


if __name__ == "__main__":
    main()
