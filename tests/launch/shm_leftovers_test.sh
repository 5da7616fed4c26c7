#!/usr/bin/env bash
# Ranks started without hcomm-run (HCOMM_BOOTSTRAP=env, this script is the
# launcher) and killed with SIGKILL during setup and after it leave nothing of
# the shm transport in /dev/shm: no launcher has to clean up after them.
#
#   shm_leftovers_test.sh <hcomm-perf>
set -u
PERF=$1
CASE=shm_leftovers WORK=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$WORK"' EXIT
source "$(dirname "$0")/common.sh"
export HCOMM_BOOTSTRAP=env HCOMM_TRANSPORTS=shm HCOMM_TIMEOUT=30

# start_rank <rank> <size> <hcomm-perf arguments...>: its pid in $started.
# The ranks run at the lowest priority, so that this script sees each step of
# their setup.
start_rank() {
  local rank=$1 size=$2
  shift 2
  HCOMM_RANK=$rank HCOMM_SIZE=$size nice -n 19 "$PERF" "$@" >>"$WORK/out" 2>>"$WORK/err" &
  started=$!
  pids+=("$started")
}

# Starts a 2-rank job of hcomm-perf with arguments "$@" on a new rendezvous;
# its processes are $first (rank 0) and $second (rank 1).
start_pair() {
  use_env_rendezvous
  start_rank 0 2 "$@"
  first=$started
  start_rank 1 2 "$@"
  second=$started
}

# Waits (up to 20 s, looking without a pause) until process $1 holds a file of
# /dev/shm open, named or not.
wait_for_segment() {
  local end=$((SECONDS + 20))
  while [ $SECONDS -lt $end ]; do
    [ -n "$(find "/proc/$1/fd" -lname '/dev/shm/*' 2>/dev/null)" ] && return 0
    kill -0 "$1" 2>/dev/null || fail "process $1 ended before it opened a segment"
  done
  fail "process $1 opened no segment in /dev/shm within 20 s"
}

kill_and_check() {
  local p
  for p in "$@"; do kill -9 "$p" 2>/dev/null; done
  for p in "$@"; do wait "$p" 2>/dev/null; done
  for p in "$@"; do
    if ls /dev/shm/hcomm-shm-"$p"-* >/dev/null 2>&1; then
      local left
      left=$(ls /dev/shm/hcomm-shm-"$p"-*)
      rm -f /dev/shm/hcomm-shm-"$p"-*
      fail "process $p, killed, left $left"
    fi
  done
}

# 1. Both ranks are killed as soon as one has made its segment, before the
#    other can have attached to it.
for _ in 1 2 3; do
  start_pair -c allreduce -b 8 -e 8 -w 1 -n 100000 --settle 0
  wait_for_segment "$first"
  kill_and_check "$first" "$second"
done

# 2. Both ranks start; one is killed at a point of its setup, then the other.
for delay in 0.05 0.1 0.2 0.3 0.4 0.6 0.8; do
  start_pair -c allreduce -b 8 -e 8 -w 1 -n 1 --settle 0
  sleep "$delay"
  kill_and_check "$second" "$first"
done

# 3. Both ranks are set up and busy with large messages.
start_pair -c allreduce -b 1M -e 1M -w 1 -n 100000 --settle 0
wait_for_segment "$first"
wait_for_segment "$second"
sleep 1
kill_and_check "$first" "$second"
exit 0
