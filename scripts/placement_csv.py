"""Reads a block placement CSV (block,smid,start_ns,end_ns; .gz too) as written by
validation/probes/block_sm_map.cu and placement_run.cu (shared by scripts/block_placement.py and
scripts/synth_placement.py)."""
import csv
import gzip


def read_placement(path):
    """Lists smid, start_ns and end_ns indexed by block; None where a block is not listed."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        rows = [(int(r["block"]), int(r["smid"]), int(r["start_ns"]), int(r["end_ns"]))
                for r in csv.DictReader(f)]
    n = max((b for b, _, _, _ in rows), default=-1) + 1
    sm, start, end = [None] * n, [None] * n, [None] * n
    for b, s, t0, t1 in rows:
        sm[b], start[b], end[b] = s, t0, t1
    return sm, start, end
