# Sourced by the shell tests (run from the repository root): expect(), counting into pass and
# fail, running "$bin".
pass=0 fail=0

# expect CODE PATTERN -- ARGS...: exit status CODE and PATTERN (grep -E) in stdout+stderr
expect() {
  local code=$1 pattern=$2
  shift 3
  local out rc
  out=$("$bin" "$@" 2>&1)
  rc=$?
  if [ "$rc" -eq "$code" ] && grep -Eq -- "$pattern" <<<"$out"; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1))
    echo "FAIL: $(basename "$bin") $* -> exit $rc (want $code), output:"
    head -5 <<<"$out"
    echo "  (wanted /$pattern/)"
  fi
}
