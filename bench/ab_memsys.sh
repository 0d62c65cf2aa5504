#!/bin/bash
# Two bench_memsys binaries compared on a noisy host: N alternating runs of each (so both see the
# same load), the minimum time per row, shown as sectors/s and the time's change (negative =
# faster), for the first pass ("model") and the warm pass.
#   bench/ab_memsys.sh N BASE_BIN NEW_BIN [STREAM [MODEL]]   (STREAM/MODEL as bench_memsys takes)
set -eu
[ $# -ge 3 ] || { echo "usage: bench/ab_memsys.sh N BASE_BIN NEW_BIN [STREAM [MODEL]]" >&2; exit 2; }
n=$1 a=$2 b=$3
shift 3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for ((i = 0; i < n; i++)); do
  "$a" 2048 h100 shaped "$@" | grep -E '^(coalesced|strided)' >> "$tmp/a"
  "$b" 2048 h100 shaped "$@" | grep -E '^(coalesced|strided)' >> "$tmp/b"
done
python3 - "$tmp/a" "$tmp/b" <<'PY'
import sys
def rows(fn):
    d = {}
    for line in open(fn):
        f = line.split()
        j = f.index('(L1')  # the columns before it are fixed; the row's name may hold spaces
        d.setdefault(' '.join(f[:j - 14]), []).append((float(f[j - 11]), float(f[j - 3]), int(f[j - 13])))
    return d
A, B = rows(sys.argv[1]), rows(sys.argv[2])
for k, a in A.items():
    b, s = B[k], a[0][2]
    ma, mb = min(x[0] for x in a), min(x[0] for x in b)
    wa, wb = min(x[1] for x in a), min(x[1] for x in b)
    print(f"{k:28s} model {s/ma/1e6:6.1f} -> {s/mb/1e6:6.1f} M/s ({mb/ma-1:+.0%})  "
          f"warm {s/wa/1e6:6.1f} -> {s/wb/1e6:6.1f} ({wb/wa-1:+.0%})")
PY
