#!/usr/bin/env bash
# Command-line behaviour and every error path: exit code and the message's key words.
#   tests/cli_errors.sh SCHEDPREDICT
set -u
bin=$1
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

. tests/expect.sh

expect 0 "usage: schedpredict" -- --help
expect 0 "schedpredict [0-9]+\.[0-9]+" -- --version
expect 2 "no input file" --
expect 2 "unknown option '--frobnicate'" -- --frobnicate x.c
expect 2 "NAME=VALUE" -- --param n examples/transpose.c
expect 2 "not a 64-bit integer" -- --param n=12x examples/transpose.c
expect 2 "needs a value" -- examples/transpose.c --param
expect 3 "nosuch.c: error: cannot read the file: No such file" -- tests/inputs/nosuch.c
expect 3 "cannot read the file" -- tests/inputs
expect 3 "not a C source file" -- tests/inputs/binary.c
expect 3 "syntax_error.c:2:31: error: expected '\)'" -- tests/inputs/syntax_error.c
expect 3 "error\(s\) from the C parser" -- tests/inputs/syntax_error.c
expect 4 "needs_param.c:4:23: error: .*'n'.*--param n=VALUE" -- tests/inputs/needs_param.c
expect 0 "1000 iterations" -- --summary tests/inputs/needs_param.c --param n=1000
expect 0 "warning: --param m=7 changes nothing: no identifier 'm' in the file" -- --summary tests/inputs/needs_param.c --param n=1000 --param m=7
expect 4 "does not fit in 64 bits" -- tests/inputs/overflow.c --param n=4000000000
expect 0 "10000000000 band iterations" -- --summary tests/inputs/overflow.c --param n=100000
expect 5 "no loop nest to schedule.*--all-loops" -- tests/inputs/no_nests.c
# macros: _Pragma is read, written out or through an object-like macro; loops a macro makes are
# named with the workaround; --fix leaves _Pragma directives to the user
expect 0 "nest 0 in operator_form\(\) \[acc parallel\], 1048576 band iterations" -- --summary tests/inputs/macro_loops.c
expect 0 "nest 1 in macro_form\(\) \[acc parallel\], 1024 band iterations" -- --summary tests/inputs/macro_loops.c
expect 0 "macro_loops.c:29:1: warning: 'acc parallel loop' directive is followed by 'FOR', not by a for loop.*cc -E -P" -- --summary tests/inputs/macro_loops.c
expect 0 "macro_loops.c:36:5: warning: macro 'SCALE' holds a _Pragma.*cc -E -P" -- --summary tests/inputs/macro_loops.c
expect 0 "macro_loops.c:43:9: warning: for loop written through macro 'FOR'.*nest skipped.*cc -E -P" -- --summary tests/inputs/macro_loops.c
expect 0 "macro_loops.c:23:5: warning: --fix leaves this nest alone: its directive at 22:5 is a _Pragma \(ACC_PARALLEL_LOOP\)" -- --fix=diff tests/inputs/macro_loops.c
# bounds it cannot read name the way around them, and the ways work
expect 0 "bound_hints.c:9:26: warning: loop bound 'd.n' is not affine.*copy it to a local before the compute construct \(long n = d.n;\) and give its value with --param n=VALUE" -- --summary tests/inputs/bound_hints.c --param n=4096
expect 0 "nest 0 in member_local\(\) \[acc parallel\], 4096 band iterations" -- --summary tests/inputs/bound_hints.c --param n=4096
expect 0 "bound_hints.c:25:30: warning: loop bound 'MIN\(ii \+ 32, 1000\)' is not affine.*put the other in an if inside it" -- --summary tests/inputs/bound_hints.c --param n=4096
expect 0 "loop i = ii .. ii \+ 31 step 1: sequential \(default-seq\), band, 32 iterations" -- --summary tests/inputs/bound_hints.c --param n=4096
# the dependence test on a declared array's subscripts: a kernels transpose is parallel in i
expect 0 "loop i = 0 .. 4095 step 1: parallel \(dependence-test\)" -- --summary tests/inputs/kernels_transpose.c
expect 0 "loop i = 0 .. 511 step 1: parallel \(dependence-test\)" -- --summary tests/inputs/kernels_transpose.c
# a triangular nest's dependence test in the trip counters: LU's i and j are parallel, k is not
expect 0 "loop i = k \+ 1 .. 1023 step 1: parallel \(dependence-test\)" -- --summary tests/inputs/lu_update.c
expect 0 "loop j = k \+ 1 .. 1023 step 1: parallel \(dependence-test\)" -- --summary tests/inputs/lu_update.c
expect 0 "loop 'k' is kept sequential" -- --summary tests/inputs/lu_update.c
# k carries row k + 1 from other threads: one launch would race
expect 0 "lu_update.c:8:5: warning: sequential loop 'k' carries a dependence between iterations of loop 'i'" -- --summary tests/inputs/lu_update.c
# GCC runs the kernels region on one thread, and partitions nothing inside k even when decomposed
expect 0 "#pragma acc loop gang independent" -- --top 1 tests/inputs/lu_update.c
expect 0 "inside sequential loop k GCC partitions nothing.*\[gcc-kernels-serial\]" -- --top 1 tests/inputs/lu_update.c
expect 0 "parallel \(dependence-test\)" -- --summary tests/inputs/no_nests.c --all-loops
expect 0 "while loop in the nest.*skipped" -- --summary tests/inputs/unmodelable.c
expect 5 "zero_step.c:4:3: warning: loop step is 0: the loop would not end" -- --param n=100 tests/inputs/zero_step.c
expect 5 "zero_step.c: error: no loop nest to schedule: the 1 nest found was skipped" -- --param n=100 tests/inputs/zero_step.c
expect 0 "unmodelable.c:10:3: warning: loop 'i' is declared parallel but carries a dependence" -- --summary tests/inputs/unmodelable.c
# an indirect gather's array: its size from the construct's data clause (x[0:n / 2 + 1000]:
# 501,000 doubles), else a warning at the access
expect 0 "array x: double\[\?\], 3\.8 MiB$" -- --summary tests/inputs/gather_size.c --param n=1000000
expect 0 "gather_size.c:14:22: warning: the size of 'x' is not known .*present\(x\[0:n\]\)" -- --summary tests/inputs/gather_size.c --param n=1000000
expect 3 "use of undeclared identifier 'N'" -- tests/inputs/uses_define.c
expect 0 "777 iterations" -- --summary tests/inputs/uses_define.c -- -DN=777
expect 0 "777 iterations" -- --summary -p tests/inputs/compdb tests/inputs/uses_define.c
expect 2 "no readable compile_commands.json" -- -p tests tests/inputs/uses_define.c
expect 0 "gemm.c:16:26: warning: C\[i\]\[j\] reaches bytes 0..150732799 of .C., declared with 36800000 bytes" -- --summary examples/gemm.c --param ni=8192 --param nj=2300 --param nk=2600
expect 0 "264x1x1" -- --top 3 --gangs 264 --block 128,32x8 tests/inputs/needs_param.c --param n=100000
expect 2 "--gangs takes positive numbers" -- --gangs 0 tests/inputs/needs_param.c
expect 2 "more than 1024 threads" -- --block 64x32 tests/inputs/needs_param.c
expect 2 "--registers takes a count of registers a thread, 1..255" -- --registers 0 tests/inputs/needs_param.c
expect 2 "--registers takes a count" -- --registers 36k tests/inputs/needs_param.c
expect 0 "limited by 40 registers a thread" -- --top 1 --registers 40 tests/inputs/needs_param.c --param n=100000
expect 2 "no description .nosuch." -- --arch nosuch tests/inputs/needs_param.c --param n=100
expect 0 "h100 +NVIDIA H100" -- --list-archs
expect 0 "\"schema\": \"schedpredict-report\"" -- --format json tests/inputs/needs_param.c --param n=1000
# quiet drops notes but keeps warnings
expect 0 "warning: loop 'i' is declared parallel" -- --summary -q tests/inputs/unmodelable.c
# -o writes atomically and refuses to replace a file unless --force
expect 0 "^$" -- --dump-ir -o "$tmp/ir.json" examples/transpose.c
if grep -q '"schema_version": 1' "$tmp/ir.json"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: -o wrote no IR"; fi
expect 2 "exists; pass --force" -- --dump-ir -o "$tmp/ir.json" examples/transpose.c
expect 0 "^$" -- --dump-ir --force -o "$tmp/ir.json" examples/jacobi.c
if grep -q 'jacobi' "$tmp/ir.json" && [ -z "$(ls "$tmp" | grep tmp)" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: --force did not replace cleanly"; fi
# --emit-plan: the plan beside the report, same atomic / --force rules; nests that cannot be
# generated are named at file:line:col and listed under "skipped"
expect 2 "--plan-top and --plan-sample take a number" -- --plan-top x tests/inputs/plan_user_call.c
expect 2 "go with --emit-plan" -- --plan-top 3 tests/inputs/plan_user_call.c
expect 2 "--emit-plan needs the ranking" -- --summary --emit-plan "$tmp/p.json" tests/inputs/plan_user_call.c
expect 0 "plan_user_call.c:11:16: warning: nest at line 10 left out of the plan: calls 'twice'" -- --block 128 --emit-plan "$tmp/plan.json" tests/inputs/plan_user_call.c
if grep -q '"reason": "calls .twice' "$tmp/plan.json" && grep -q '"id": "plan_user_call.c:13"' "$tmp/plan.json"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: the plan lacks the skipped or the generated nest"; fi
expect 2 "plan.json exists; pass --force" -- --block 128 --emit-plan "$tmp/plan.json" tests/inputs/plan_user_call.c
# --registers limits the blocks an SM holds: vla_param.c:17's blocks of 1,024 threads with 36
# registers each (1,280 allocated a warp, 40,960 a block of the SM's 65,536) run one an SM, 32
# warps, not two
for r in 0 36; do
  ra=(); [ $r -gt 0 ] && ra=(--registers $r)
  "$bin" -q --format json --top 1000 --block 1024 --gangs 264 "${ra[@]}" --nest examples/vla_param.c:17 \
    examples/vla_param.c --param n=8192 --param m=1024 > "$tmp/regs$r.json"
done
if python3 - "$tmp/regs0.json" "$tmp/regs36.json" <<'PY'; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: --registers 36 did not halve the warps of 1024-thread blocks"; fi
import json, sys
def cands(p):
    n = json.load(open(p))["nests"][0]
    return {(c["cuda_mapping"], tuple(c["grid"])): c for c in n["ranking"]}
a, b = cands(sys.argv[1]), cands(sys.argv[2])
c0, c1 = a[("i->bx j->tx", (264, 1, 1))], b[("i->bx j->tx", (264, 1, 1))]
assert c0["time"]["active_warps_per_sm"] == 64 and c1["time"]["active_warps_per_sm"] == 32, (c0["time"], c1["time"])
assert c1["time"]["total_us"] > c0["time"]["total_us"]
PY
# several files in one run
out=$("$bin" -q --summary examples/transpose.c examples/jacobi.c | grep -c "nest")
if [ "$out" -eq 3 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: two files gave $out nests, want 3"; fi
# advice options: bad values, help topics, --nest
expect 2 "--compiler takes gcc or nvc, not 'pgi'" -- --compiler pgi examples/transpose.c
expect 2 "--format takes text, json, remarks, sarif or opt-record" -- --format xml examples/transpose.c
expect 2 "--nest takes FILE:LINE" -- --nest transpose.c examples/transpose.c
expect 5 "no loop nest at transpose.c:3 \\(the nests start at: examples/transpose.c:12\\)" -- --nest transpose.c:3 --block 128 examples/transpose.c
expect 0 "vector_length a multiple of 32" -- help compilers
expect 0 "== exit-codes ==" -- help
expect 2 "no help topic 'nosuch'" -- help nosuch
expect 2 "--fix with -o takes one input file" -- --fix -o "$tmp/x.c" --block 128 examples/transpose.c examples/jacobi.c
expect 2 "--emit-harness takes one input file" -- --emit-harness examples/transpose.c examples/jacobi.c
expect 0 "skipped.*OpenMP target regions" -- --emit-harness examples/omp_target.c
expect 0 "sp_h_run_transpose\\(reps\\)" -- --emit-harness examples/transpose.c
lines=$("$bin" --help | wc -l)
if [ "$lines" -le 40 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: --help has $lines lines (fit a screen: 40)"; fi

echo "cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
