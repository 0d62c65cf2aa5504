#!/usr/bin/env python3
"""Ranking time and peak memory against problem size, for the whole default space of one nest
of two kernels: transpose (N x N doubles) and laplacian (N^3), up to ~10^10 iterations. Writes
a table (markdown, stdout) and a PNG (needs matplotlib: Debian's python3-matplotlib, so run it
with /usr/bin/python3 where python3 is another interpreter).

    /usr/bin/python3 bench/time_vs_size.py [SCHEDPREDICT] [OUT.png]
"""
import os
import re
import subprocess
import sys
import tempfile

binary = sys.argv[1] if len(sys.argv) > 1 else "build/schedpredict"
png = sys.argv[2] if len(sys.argv) > 2 else "bench/results/time_vs_size.png"
root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")

def measure(cmd):
    """Wall seconds, CPU seconds (user + system, all threads) and peak resident MB of one run,
    through GNU time. On a shared machine the CPU time is the steadier figure."""
    r = subprocess.run(["/usr/bin/time", "-f", "%e %U %S %M"] + cmd, capture_output=True,
                       text=True)
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed: {r.stderr}")
    wall, user, system, kb = r.stderr.strip().splitlines()[-1].split()
    return float(wall), float(user) + float(system), int(kb) / 1024

with open(os.path.join(root, "examples/transpose.c")) as f:
    transpose_src = f.read()
tmp = tempfile.mkdtemp()
series = {"transpose (N x N)": [], "laplacian (N^3)": []}
for n in [256, 1024, 4096, 16384, 100000]:  # 100000^2 = 10^10 iterations
    path = os.path.join(tmp, f"transpose{n}.c")
    with open(path, "w") as f:
        f.write(re.sub(r"#define N \d+", f"#define N {n}", transpose_src))
    series["transpose (N x N)"].append((n, n * n, *measure([binary, "-q", "--top", "1", path])))
for n in [32, 64, 128, 256, 512, 2154]:  # 2154^3 = 10^10 iterations
    src = os.path.join(root, "examples/laplacian.c")
    cmd = [binary, "-q", "--top", "1", src, "--", f"-DNX={n}", f"-DNY={n}", f"-DNZ={n}"]
    series["laplacian (N^3)"].append((n, (n - 2) ** 3, *measure(cmd)))

print("| kernel | N | iterations | wall s | CPU s | peak MB |")
print("|---|---|---|---|---|---|")
for name, rows in series.items():
    for n, it, wall, cpu, mb in rows:
        print(f"| {name} | {n} | {it:.2e} | {wall:.2f} | {cpu:.2f} | {mb:.0f} |")

import matplotlib  # noqa: E402 (only needed for the figure)
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
for name, rows in series.items():
    its = [r[1] for r in rows]
    line, = ax1.plot(its, [r[2] for r in rows], "o-", label=f"{name}, wall")
    ax1.plot(its, [r[3] for r in rows], "s--", color=line.get_color(), label=f"{name}, CPU")
    ax2.plot(its, [r[4] for r in rows], "o-", label=name)
ax1.set(xscale="log", xlabel="iterations of the nest", ylabel="ranking time, s",
        title="Whole default space, one nest")
ax2.set(xscale="log", xlabel="iterations of the nest", ylabel="peak resident memory, MB",
        title="Peak memory (limit 256 MB)")
ax2.axhline(256, color="red", linestyle="--", linewidth=1)
ax1.set_ylim(bottom=0)
ax2.set_ylim(0, 300)
for ax in (ax1, ax2):
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
fig.tight_layout()
fig.savefig(png, dpi=100)
print(f"\nwrote {png}")
