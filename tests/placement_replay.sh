#!/usr/bin/env bash
# placement_replay on the command line: exit codes and messages, a recorded H100 placement of
# 2mm.c:26's GCC default (figures from simulation, checked by hand once: SM 0 holds 67 blocks
# there, 64 under b mod S), and a synthetic placement that is b mod S written out (first wave
# b mod S, refills first in first out), whose figures must equal the b mod S columns; and the
# placement the h100's dealing cycle gives (--placement dealt).
#   tests/placement_replay.sh PLACEMENT_REPLAY
set -u
bin=$1
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
R=validation/results/h100/2026-11-23-placement-replay
zcat $R/sp_kernel_2mm_26_c270_ncu1.run0.csv.gz >"$tmp/2mm.csv"

. tests/expect.sh

expect 0 "usage: placement_replay FILE.c --nest LINE --placement CSV\|dealt" -- --help
expect 2 "FILE.c, --nest LINE and --placement CSV\|dealt are needed" -- examples/2mm.c --nest 26
expect 2 "expected a number, not '-1'" -- examples/2mm.c --nest 26 --placement dealt --seed -1
expect 2 "expected a number, not 'x'" -- examples/2mm.c --sms x
expect 2 "unknown option '--bogus'" -- examples/2mm.c --bogus 1
expect 2 "--compiler takes gcc or nvc, not 'pgi'" -- examples/2mm.c --compiler pgi
expect 3 "nosuch.csv: cannot read it" -- examples/2mm.c --nest 26 --placement "$tmp/nosuch.csv"
expect 5 "no nest starts at line 25" -- examples/2mm.c --nest 25 --placement "$tmp/2mm.csv"
expect 2 "--candidate 9999: the nest has [0-9]+ candidates" -- examples/2mm.c --nest 26 --candidate 9999 \
  --placement "$tmp/2mm.csv"
expect 3 "2mm.csv:802: block 800 on SM 30 is outside the grid of 800 blocks on 132 SMs" -- examples/2mm.c --nest 26 --candidate 0 \
  --placement "$tmp/2mm.csv"
printf 'block,smid,start_ns,end_ns\n0,0,0,0\n0,1,0,0\n' >"$tmp/dup.csv"
expect 3 "dup.csv:3: block 0 appears twice" -- examples/2mm.c --nest 26 --candidate 270 --placement "$tmp/dup.csv"

expect 0 "^   0       64     84.47      330963   \|                67     82.37    322158" -- \
  examples/2mm.c --nest 26 --candidate 270 --sms 2 --placement "$tmp/2mm.csv"
expect 0 "over 2 SMs: L1 hit 83.50 % \(b mod S\) vs 82.37 % \(recorded\)" -- \
  examples/2mm.c --nest 26 --candidate 270 --sms 2 --placement "$tmp/2mm.csv"
python3 scripts/synth_placement.py --blocks 8448 --per-sm 32 --first rr --refill fifo -o "$tmp/rr.csv"
expect 0 "over 2 SMs: L1 hit 83.50 % \(b mod S\) vs 83.50 % \(recorded\); L2 read sectors x132: 4.311e\+07 vs 4.311e\+07" -- \
  examples/2mm.c --nest 26 --candidate 270 --sms 2 --placement "$tmp/rr.csv"
# the h100's dealing cycle with random refills (traces/dealing.c); the h200 has no cycle
expect 0 "placement: dealt \(the arch's block_dealing_cycle, refills random, seed 3\)" -- \
  examples/2mm.c --nest 26 --candidate 270 --sms 2 --placement dealt --seed 3
expect 0 "over 2 SMs: L1 hit 83.50 % \(b mod S\) vs 82.37 % \(dealt\); L2 read sectors x132: 4.311e\+07 vs 4.252e\+07" -- \
  examples/2mm.c --nest 26 --candidate 270 --sms 2 --placement dealt --seed 3
expect 0 "placement: dealt \(no block_dealing_cycle: 0, 1, ..., S-1, refills random, seed 1\)" -- \
  examples/2mm.c --nest 26 --candidate 270 --sms 1 --placement dealt --arch h200
# the script does not replace a file
if python3 scripts/synth_placement.py --blocks 8 --per-sm 1 -o "$tmp/rr.csv" 2>/dev/null; then
  fail=$((fail + 1)); echo "FAIL: synth_placement.py replaced an existing file"
else
  pass=$((pass + 1))
fi

echo "placement_replay: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
