#!/usr/bin/env python3
"""GCC's own default schedule (--compiler gcc) against GCC itself: for every example, the loop
levels schedpredict says GCC assigns (the compiler-default candidate's `openacc` text, e.g.
"i: gang worker  j: vector  num_gangs(16896) ...") must be what `gcc -fopenacc -fopt-info-omp`
reports ("assigned OpenACC gang worker loop parallelism") at each loop directive's line. A
kernels region whose loops have no directive GCC reports at the region's directive: "gang" where
its parloops put the outer loop on gangs, "seq" where the region runs on one thread; the model's
default must map a loop to a block dimension in the first case and none in the second. Skips
(exit 77) when gcc has no -fopenacc.
  tests/gcc_default.py SCHEDPREDICT
"""
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
ASSIGNED = re.compile(r":(\d+):\d+: optimized: assigned OpenACC ((?:gang |worker |vector |seq )+)"
                      r"loop parallelism")


def example_args(path):
    for line in open(path).readlines()[:10]:
        if line.startswith("// schedpredict-args:"):
            args = shlex.split(line.split(":", 1)[1])
            if "--" in args:
                i = args.index("--")
                return args[:i], args[i + 1:]
            return args, []
    return [], []


def gcc_levels(path, cargs):
    """{directive line: 'gang worker'} as GCC reports it."""
    with tempfile.TemporaryDirectory() as tmp:
        r = subprocess.run(["gcc", "-O2", "-fopenacc", "-foffload=disable", "-fopt-info-omp-all",
                            "-c", path, "-o", os.path.join(tmp, "x.o")] + cargs,
                           capture_output=True, text=True)
    out = {}
    for m in ASSIGNED.finditer(r.stderr):
        out[int(m.group(1))] = m.group(2).replace("seq", "").strip()
    return out


def model_levels(sp, path, sargs, cargs):
    """{directive line: 'gang worker'} from the compiler-default candidate of each nest."""
    # a one-shape space ranks fast; the baselines are always in it
    cmd = [sp, "-q", "--compiler", "gcc", "--format", "json", "--top", "1", "--block", "32",
           "--gangs", "132", path] + sargs
    if cargs:
        cmd += ["--"] + cargs
    report = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)
    ir_cmd = [sp, "-q", "--dump-ir", path] + sargs + (["--"] + cargs if cargs else [])
    ir = json.loads(subprocess.run(ir_cmd, capture_output=True, text=True, check=True).stdout)
    loops_at, region_at = {}, {}
    for nest in ir["nests"]:
        loc = nest["location"].split(":")
        loops_at[int(loc[1])] = nest["loops"]
        cons = nest.get("construct_clauses", {}).get("location")
        if (nest["construct"] == "acc kernels" and cons and
                not any(l.get("clauses", {}).get("location") for l in nest["loops"])):
            region_at[int(loc[1])] = int(cons.split(":")[1])
    out, notes = {}, []
    for n in report["nests"]:
        d = n.get("compiler_default")
        line = int(n["location"].split(":")[1])
        if not d or d.get("pattern") != "gcc-default":
            notes.append(f"{path}:{line}: GCC's schedule is not modeled (a level outside the "
                         f"loops the model maps): the baseline is the nvc-style one")
            continue
        if line in region_at:  # (two nests of one region: GCC says one thing for both)
            gang = re.search(r"->b[xyz]", d["cuda_mapping"]) is not None
            out[region_at[line]] = "gang" if gang else ""
            continue
        names = {l["index"]: l for l in loops_at.get(line, [])}
        text = d["openacc"].split("  num_gangs(")[0]
        for part in re.findall(r"(\w+):((?: (?:gang|worker|vector|seq))+)", text):
            loop = names.get(part[0])
            directive = (loop or {}).get("clauses", {}).get("location")
            if not directive:
                notes.append(f"{path}:{line}: loop {part[0]} has no directive in the IR")
                continue
            out[int(directive.split(":")[1])] = part[1].replace("seq", "").strip()
    return out, notes


def main():
    sp = sys.argv[1]
    probe = subprocess.run(["gcc", "-fopenacc", "-foffload=disable", "-x", "c", "-c", "-",
                            "-o", os.devnull], input="int x;\n", capture_output=True, text=True)
    if probe.returncode != 0:
        print("SKIP: gcc -fopenacc is not available")
        return 77
    failures, checked = 0, 0
    paths = [os.path.join("examples", name)
             for name in sorted(os.listdir(os.path.join(ROOT, "examples")))
             if name.endswith(".c") and name != "omp_target.c"]
    for path in paths + ["tests/inputs/kernels_transpose.c"]:
        sargs, cargs = example_args(os.path.join(ROOT, path))
        gcc = gcc_levels(os.path.join(ROOT, path), cargs)
        model, notes = model_levels(sp, path, sargs, cargs)
        for line, levels in sorted(model.items()):
            checked += 1
            if gcc.get(line, "") != levels:
                failures += 1
                print(f"FAIL {path}:{line}: schedpredict says GCC assigns '{levels or 'seq'}', "
                      f"gcc -fopt-info-omp says '{gcc.get(line) or 'nothing (seq)'}'")
        for n in notes:
            print("note:", n)
    print(f"gcc-default: {checked} loop directives and kernels regions checked against "
          f"gcc -fopt-info-omp, {failures} differ")
    return 1 if failures or checked == 0 else 0


if __name__ == "__main__":
    os.chdir(ROOT)
    sys.exit(main())
