#!/usr/bin/env bash
# The advice formats and --fix on a few examples:
#   tests/advice.sh SCHEDPREDICT [--update]
# - golden remarks, SARIF, opt-record and --fix=diff outputs (tests/golden/advice/);
# - SARIF validated against tests/schemas/sarif-2.1.0-subset.schema.json;
# - LLVM's opt-viewer renders the opt-record to HTML holding the remarks;
# - clang-apply-replacements on --export-fixes gives the same file as --fix;
# - --fix is idempotent, keeps a .orig backup, and --fix -o leaves the input alone.
# Tools that are missing (opt-viewer: llvm-14-tools, clang-apply-replacements: clang-tools-14,
# python3-jsonschema) are reported as skipped.
set -u
bin=$(realpath "$1")
update=${2:-}
cd "$(dirname "$0")/.."
root=$PWD
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0 skip=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
skipped() { skip=$((skip + 1)); echo "SKIP: $*"; }

# golden NAME FILE: FILE against tests/golden/advice/NAME (or rewrite it with --update)
golden() {
  local want=tests/golden/advice/$1
  if [ "$update" = --update ]; then
    mkdir -p tests/golden/advice && cp "$2" "$want" && ok
  elif diff -u "$want" "$2" > "$tmp/golden.diff"; then
    ok
  else
    bad "$1 differs from $want"; head -30 "$tmp/golden.diff"
  fi
}

optviewer=$(ls /usr/lib/llvm-*/share/opt-viewer/opt-viewer.py 2>/dev/null | tail -1)
car=$(command -v clang-apply-replacements || command -v clang-apply-replacements-14 || true)
# Debian's python3 holds the Debian packages' modules; another python3 may come first on PATH
pick_python() { for p in /usr/bin/python3 python3; do "$p" -c "import $1" 2>/dev/null && { echo "$p"; return; }; done; }
py_schema=$(pick_python jsonschema)
py_yaml=$(pick_python yaml)
have_jsonschema=no
[ -n "$py_schema" ] && have_jsonschema=yes
[ -n "$py_yaml" ] || optviewer=

for ex in transpose laplacian atax frobenius_colmajor; do
  src=examples/$ex.c
  args=$(grep -m1 '^// schedpredict-args:' "$src" | sed 's|^// schedpredict-args:||')
  run() { eval "\"$bin\" -q $* $args"; }

  # remarks: one line per nest on stderr, clang's form
  run --format remarks "$src" 2> "$tmp/$ex.remarks" > "$tmp/$ex.stdout"
  nests=$(run --summary "$src" | grep -c ': nest [0-9]* in ')
  if [ -s "$tmp/$ex.stdout" ] || [ "$(grep -c ': remark: .*\[-Rschedpredict\]$' "$tmp/$ex.remarks")" -ne "$nests" ]; then
    bad "$ex: remarks are not one '[-Rschedpredict]' line per nest ($nests) on stderr"
    cat "$tmp/$ex.remarks"
  else
    ok
  fi
  golden "$ex.remarks" "$tmp/$ex.remarks"

  # SARIF
  run --format sarif "$src" > "$tmp/$ex.sarif"
  golden "$ex.sarif" "$tmp/$ex.sarif"
  if [ $have_jsonschema = yes ]; then
    if "$py_schema" tests/validate_json.py tests/schemas/sarif-2.1.0-subset.schema.json "$tmp/$ex.sarif" > "$tmp/v.out"; then ok
    else bad "$ex: SARIF does not validate"; cat "$tmp/v.out"; fi
  else
    skipped "SARIF validation (apt-get install python3-jsonschema)"
  fi

  # LLVM optimization records, rendered by opt-viewer
  mkdir -p "$tmp/or-$ex"
  run --format opt-record "$src" > "$tmp/or-$ex/$ex.opt.yaml"
  golden "$ex.opt.yaml" "$tmp/or-$ex/$ex.opt.yaml"
  if [ -n "$optviewer" ]; then
    n_rec=$(grep -c '^--- !Analysis' "$tmp/or-$ex/$ex.opt.yaml")
    if "$py_yaml" "$optviewer" -j1 --output-dir "$tmp/or-$ex/html" --source-dir "$root" \
         "$tmp/or-$ex/$ex.opt.yaml" > "$tmp/or.log" 2>&1 &&
       [ "$n_rec" -gt 0 ] &&
       [ "$(grep -Eo '<td class="column-entry-[a-z]*">schedpredict</td>' "$tmp/or-$ex/html/examples_$ex.c.html" | wc -l)" -eq "$n_rec" ]; then
      ok
    else
      bad "$ex: opt-viewer did not render the $n_rec records"; cat "$tmp/or.log"
      ls "$tmp/or-$ex/html" 2>/dev/null
    fi
  else
    skipped "opt-viewer render (apt-get install llvm-14-tools python3-yaml)"
  fi

  # --fix=diff, --fix -o, --export-fixes, clang-apply-replacements, idempotence, backups
  run --fix=diff "$src" > "$tmp/$ex.diff"
  golden "$ex.diff" "$tmp/$ex.diff"
  mkdir -p "$tmp/work-$ex" "$tmp/fixes-$ex"
  cp "$src" "$tmp/work-$ex/$ex.c"
  cp "$src" "$tmp/$ex.in.c"
  run --fix -o "$tmp/$ex.fixed.c" --export-fixes "$tmp/fixes-$ex/$ex.yaml" "$tmp/work-$ex/$ex.c"
  if cmp -s "$tmp/work-$ex/$ex.c" "$src"; then ok; else bad "$ex: --fix -o changed its input"; fi
  if (cd "$tmp/work-$ex" && patch -s -p1 -o - "$ex.c" < <(sed "s|^\(---\|+++\) [ab]/examples/|\1 |" "$tmp/$ex.diff")) > "$tmp/$ex.patched.c" 2>/dev/null &&
     cmp -s "$tmp/$ex.patched.c" "$tmp/$ex.fixed.c"; then ok
  else bad "$ex: --fix=diff does not patch the file into what --fix -o writes"; fi
  if [ -n "$car" ]; then
    "$car" "$tmp/fixes-$ex" > "$tmp/car.log" 2>&1
    if cmp -s "$tmp/work-$ex/$ex.c" "$tmp/$ex.fixed.c"; then ok
    else bad "$ex: clang-apply-replacements on --export-fixes differs from --fix"; cat "$tmp/car.log"
      diff -u "$tmp/$ex.fixed.c" "$tmp/work-$ex/$ex.c" | head -20; fi
  else
    skipped "clang-apply-replacements (apt-get install clang-tools-14)"
  fi
  # in place: the backup holds the original; a second run changes nothing
  run --fix "$tmp/$ex.in.c" 2> "$tmp/fix.err"
  if cmp -s "$tmp/$ex.in.c" "$tmp/$ex.fixed.c" && { cmp -s "$tmp/$ex.in.c.orig" "$src" || cmp -s "$src" "$tmp/$ex.fixed.c"; }; then ok
  else bad "$ex: --fix in place did not write the fix and a .orig backup"; cat "$tmp/fix.err"; fi
  run --fix=diff "$tmp/$ex.fixed.c" > "$tmp/$ex.again.diff"
  if [ ! -s "$tmp/$ex.again.diff" ]; then ok
  else bad "$ex: --fix is not idempotent: a second run changes"; head -20 "$tmp/$ex.again.diff"; fi
done

# a nest the advice cannot rewrite is reported, and --fix exits 0 leaving it alone
cat > "$tmp/omp.c" <<'EOF'
#define N 2048
void f(double a[N][N]) {
#pragma omp target teams distribute parallel for collapse(2)
  for (int j = 0; j < N; j++)
    for (int i = 0; i < N; i++)
      a[i][j] = 2 * a[i][j];
}
EOF
cp "$tmp/omp.c" "$tmp/omp.orig.c"
"$bin" --fix --no-backup "$tmp/omp.c" 2> "$tmp/omp.err"
rc=$?
if [ $rc -eq 0 ] && cmp -s "$tmp/omp.c" "$tmp/omp.orig.c" && grep -q "warning: --fix leaves this nest alone: only OpenACC" "$tmp/omp.err" &&
   [ ! -e "$tmp/omp.c.orig" ]; then ok
else bad "an OpenMP nest under --fix: exit $rc"; cat "$tmp/omp.err"; fi

# comments on directive lines stay and do not stop the rewrite; a private variable of a directive
# whose collapsed loop gets a directive of its own (vector) goes onto that one too (else the
# lanes of a gang share it)
cat > "$tmp/cp.c" <<'EOF'
#define N 2048
static double a[N][N], b[N][N];
void f(void)
{
    double t;
#pragma acc parallel loop collapse(2) private(t) copyin(a) copyout(b) // transpose
    for (int j = 0; j < N; j++)
        for (int i = 0; i < N; i++) {
            t = a[i][j] * 2.0;
            b[i][j] = t + t * t;
        }
}
void g(void)
{
#pragma acc parallel loop copyin(a) copyout(b) /* rows */
    for (int j = 0; j < N; j++)
#pragma acc loop /* columns */
        for (int i = 0; i < N; i++)
            b[j][i] = a[i][j];
}
EOF
"$bin" -q --compiler gcc --fix --no-backup "$tmp/cp.c" 2> "$tmp/cp.err"
rc=$?
if [ $rc -eq 0 ] && ! grep -q "leaves this nest alone" "$tmp/cp.err" &&
   grep -q '^#pragma acc parallel loop gang .*private(t) copyin(a) copyout(b) // transpose$' "$tmp/cp.c" &&
   grep -q '#pragma acc loop vector private(t)$' "$tmp/cp.c" &&
   grep -q '^#pragma acc parallel loop gang.* copyin(a) copyout(b) /\* rows \*/$' "$tmp/cp.c" &&
   grep -q '^#pragma acc loop vector /\* columns \*/$' "$tmp/cp.c"; then ok
else bad "comments and private clauses under --fix: exit $rc"; cat "$tmp/cp.err" "$tmp/cp.c"; fi

# nests sharing a parallel construct: --fix leaves them, and the advice names the sizes it wants
# on the construct (the gain may be all theirs)
cat > "$tmp/shared.c" <<'EOF'
#define N 4096
static double a[N][N], c[N];
void f(void)
{
#pragma acc parallel copyin(a) copyout(c)
    {
#pragma acc loop gang vector
        for (int i = 0; i < N; i++)
            c[i] = a[i][0];
#pragma acc loop gang vector
        for (int i = 0; i < N; i++)
            c[i] += a[0][i];
    }
}
EOF
"$bin" --compiler gcc "$tmp/shared.c" > "$tmp/shared.out" 2>&1
rc=$?
if [ $rc -eq 0 ] && [ "$(grep -c "^    with num_gangs([0-9]*) vector_length([0-9]*) on the compute construct$" "$tmp/shared.out")" -eq 2 ] &&
   grep -q "holds other nests too" "$tmp/shared.out"; then ok
else bad "nests sharing a construct: exit $rc"; cat "$tmp/shared.out"; fi

# a device_type clause whose schedule clauses --fix replaces goes with them (one left with nothing
# of its own is no valid directive); one that keeps a clause stays
cat > "$tmp/dtype.c" <<'EOF'
#define N 4096
static double a[N][N], b[N][N];
void f(void)
{
#pragma acc parallel loop gang device_type(nvidia) vector_length(128) copyin(a) copyout(b)
    for (int j = 0; j < N; j++)
#pragma acc loop vector device_type(nvidia) vector async
        for (int i = 0; i < N; i++)
            b[j][i] = a[i][j];
}
EOF
"$bin" -q --compiler gcc --fix --no-backup "$tmp/dtype.c" 2> "$tmp/dtype.err"
rc=$?
if [ $rc -eq 0 ] && ! grep -q "device_type(nvidia) copyin" "$tmp/dtype.c" &&
   grep -q "^#pragma acc parallel loop gang.* copyin(a) copyout(b)$" "$tmp/dtype.c" &&
   grep -q "^#pragma acc loop .*device_type(nvidia) async$" "$tmp/dtype.c"; then ok
else bad "device_type under --fix: exit $rc"; cat "$tmp/dtype.err" "$tmp/dtype.c"; fi

# a file with CRLF line endings keeps them on the lines --fix adds
printf '#define N 2048\r\nstatic double a[N][N], b[N][N];\r\nvoid f(void)\r\n{\r\n#pragma acc parallel loop collapse(2) copyin(a) copyout(b)\r\n    for (int j = 0; j < N; j++)\r\n        for (int i = 0; i < N; i++)\r\n            b[j][i] = a[i][j];\r\n}\r\n' > "$tmp/crlf.c"
"$bin" -q --fix --no-backup "$tmp/crlf.c" 2> "$tmp/crlf.err"
rc=$?
lines=$(wc -l < "$tmp/crlf.c")
if [ $rc -eq 0 ] && [ "$lines" -gt 9 ] && [ "$(grep -c $'\r$' "$tmp/crlf.c")" -eq "$lines" ]; then ok
else bad "--fix on a CRLF file: exit $rc"; cat -A "$tmp/crlf.c" "$tmp/crlf.err"; fi

# an omp target nest gets OpenMP directives, not OpenACC ones, and no OpenACC reduction code
cat > "$tmp/ompred.c" <<'EOF'
#define N 4096
static double a[N][N];
double f(void)
{
    double sum = 0.0;
#pragma omp target teams distribute parallel for collapse(2) reduction(+:sum) map(to: a)
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            sum += a[i][j] * a[i][j];
    return sum;
}
EOF
"$bin" --compiler gcc "$tmp/ompred.c" > "$tmp/ompred.out" 2>&1
rc=$?
if [ $rc -eq 0 ] && grep -q "recommended as OpenMP (rank" "$tmp/ompred.out" &&
   grep -q "#pragma omp target teams distribute.* num_teams([0-9]*) thread_limit([0-9]*) reduction(+:sum)" "$tmp/ompred.out" &&
   ! grep -q "#pragma acc" "$tmp/ompred.out" && ! grep -q "reduction code" "$tmp/ompred.out"; then ok
else bad "an omp target reduction: exit $rc"; cat "$tmp/ompred.out"; fi

echo "advice: $pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ] && [ $pass -gt 0 ]
