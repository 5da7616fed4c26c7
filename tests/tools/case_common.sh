# Sourced by the tools' case scripts once $CASE is set: $WORK (removed at
# exit), where each case's command leaves its stdout and stderr ($WORK/out,
# $WORK/err) and sets RC; fail, which shows both; and the checks on them.
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

fail() {
  echo "FAIL [$CASE]: $*" >&2
  echo "--- stdout" >&2; cat "$WORK/out" >&2 2>/dev/null
  echo "--- stderr" >&2; cat "$WORK/err" >&2 2>/dev/null
  exit 1
}

expect_rc() { [ "$RC" -eq "$1" ] || fail "exit status $RC, expected $1"; }
expect_out() { grep -qxF -- "$1" "$WORK/out" || fail "stdout lacks the line: $1"; }
expect_err() { grep -qF -- "$1" "$WORK/err" || fail "stderr lacks: $1"; }
