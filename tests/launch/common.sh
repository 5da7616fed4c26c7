# What the launch tests share; sourced after CASE and WORK are set.

export HCOMM_BOOTSTRAP_ADDR=127.0.0.1 HCOMM_TCP_IF_ADDR=127.0.0.1 HCOMM_TIMEOUT=60
unset HCOMM_RANK HCOMM_SIZE HCOMM_LOCAL_RANK HCOMM_LOCAL_SIZE HCOMM_ROOT HCOMM_SECRET HCOMM_BOOTSTRAP

source "$(dirname "${BASH_SOURCE[0]}")/../ports.sh"

fail() {
  echo "FAIL [$CASE]: $*" >&2
  echo "--- stdout" >&2; cat "$WORK/out" >&2 2>/dev/null
  echo "--- stderr" >&2; cat "$WORK/err" >&2 2>/dev/null
  exit 1
}

expect_rc() { [ "$RC" -eq "$1" ] || fail "exit status $RC, expected $1"; }

# expect_error <text> <command...>: the command fails saying <text>.
expect_error() {
  local text=$1
  shift
  "$@" >"$WORK/out" 2>"$WORK/err"
  RC=$?
  [ "$RC" -ne 0 ] || fail "'$*' succeeded, expected an error saying: $text"
  grep -qF "$text" "$WORK/err" || fail "'$*' did not say: $text"
}

# A fresh rendezvous for ranks that find each other without PMIx: a free
# port and a random secret.
use_env_rendezvous() {
  local port
  port=$(unused_port)
  export HCOMM_ROOT=127.0.0.1:$port HCOMM_SECRET=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
}
