"""The key under which two candidates of a JSON report run the same trace (shared by
scripts/replay_measured.py and bench/sampling_error.py)."""


def trace_mapping(mapping, block, grid):
    """cuda_mapping without the hardware dimensions of extent 1 ("i->tx+by" under gridDim.y = 1
    is "i->tx"): schedules that differ only there run the same trace (sp_schedule_same_trace),
    and the space keeps one of them, not always under the pattern name an older run measured. A
    loop that runs sequentially ("j->seq") is left out: an inner loop that was not in the band when
    an older run measured it has since joined it as an imperfect loop (analyzer/imperfect.c)."""
    out = []
    for tok in mapping.split():
        var, _, dims = tok.partition("->")
        if dims == "seq":
            continue
        kept = [d for d in dims.split("+") if d != "seq" and not
                (len(d) == 2 and d[0] in "tb" and d[1] in "xyz" and
                 (block if d[0] == "t" else grid)["xyz".index(d[1])] == 1)]
        out.append(var + "->" + ("+".join(kept) or "seq"))
    return " ".join(out)


def cand_key(c):
    """(mapping as its trace runs, block, grid) of a report's candidate: the pattern name is
    left out (twins differ in it)."""
    return (trace_mapping(c["cuda_mapping"], c["block"], c["grid"]), tuple(c["block"]),
            tuple(c["grid"]))
