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

# capture <command...>: runs it with stdout and stderr in $WORK/out and
# $WORK/err; sets RC.
capture() {
  "$@" >"$WORK/out" 2>"$WORK/err"
  RC=$?
}

expect_rc() { [ "$RC" -eq "$1" ] || fail "exit status $RC, expected $1"; }
expect_out() { grep -qxF -- "$1" "$WORK/out" || fail "stdout lacks the line: $1"; }
expect_err() { grep -qF -- "$1" "$WORK/err" || fail "stderr lacks: $1"; }

# expect_usage_error <tool> <error> <arguments>: the command line (given as
# <arguments>, for the message) could not run: exit 2, nothing on stdout,
# and on stderr only "<tool>: <error>" and the hint to --help.
expect_usage_error() {
  expect_rc 2
  [ "$(cat "$WORK/err")" = "$1: $2"$'\n'"Run $1 --help for the options." ] ||
    fail "'$1 $3': expected the error '$2' and the hint to --help, nothing else"
  if [ -s "$WORK/out" ]; then fail "'$1 $3' printed to stdout"; fi
}

# usage_error_cases <tool> <run> "<error>|<arguments>"...: `<run> <arguments>`
# (split at spaces; <run> a function that sets RC) ends in that usage error.
usage_error_cases() {
  local tool=$1 run=$2 entry
  shift 2
  for entry in "$@"; do
    # shellcheck disable=SC2086
    "$run" ${entry#*|}
    expect_usage_error "$tool" "${entry%%|*}" "${entry#*|}"
  done
}
