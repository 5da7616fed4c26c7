#!/usr/bin/env bash
# A job starts while hundreds of silent clients hold connections open against
# its rendezvous (HCOMM_BOOTSTRAP=env, rank 0 serving HCOMM_ROOT):
#
#   flood_test.sh <hcomm-perf> <hcomm_launch_flood> [ranks] [idle] [timeout]
#
# The flood keeps <idle> connections open (each one the rendezvous closes is
# opened again at once) from the moment rank 0 listens; a second later the
# other ranks start, and all run one 8-byte allreduce. Every rank must finish within HCOMM_TIMEOUT, and
# the ranks' logs together stay within a bounded number of lines. Prints the
# seconds from the start of the late ranks to the end of the job (the figure
# benchmarks/history/2026-12-06.md records).
set -u
PERF=$1 FLOOD=$2 RANKS=${3:-4} IDLE=${4:-400} TIMEOUT=${5:-20}
CASE=flood WORK=$(mktemp -d)
trap 'kill $flood_pid 2>/dev/null; wait 2>/dev/null; rm -rf "$WORK"' EXIT
source "$(dirname "$0")/common.sh"
export HCOMM_TIMEOUT=$TIMEOUT HCOMM_TRANSPORTS=tcp,shm
use_env_rendezvous

start_rank() {
  HCOMM_RANK=$1 HCOMM_SIZE=$RANKS timeout $((TIMEOUT + 15)) "$PERF" -c allreduce -b 8 -e 8 -w 1 -n 1 --settle 0 \
    >"$WORK/out.$1" 2>"$WORK/err.$1" &
  pids+=($!)
}

# The flood outlives the job; it connects (retrying) once rank 0 listens, and
# holds its connections before the other ranks start.
"$FLOOD" "$HCOMM_ROOT" "$IDLE" $((TIMEOUT + 10)) >"$WORK/flood" &
flood_pid=$!
pids=()
start_rank 0
sleep 1
start=$(date +%s.%N)
for ((r = 1; r < RANKS; ++r)); do start_rank $r; done
failed=0
for r in "${!pids[@]}"; do
  wait "${pids[$r]}" || { echo "rank $r failed with status $?" >&2; failed=1; }
done
seconds=$(echo "$(date +%s.%N) - $start" | bc)
cat "$WORK"/err.* >"$WORK/err"
cat "$WORK"/out.0 >"$WORK/out"
lines=$(wc -l <"$WORK/err")
echo "$RANKS ranks started and finished in $seconds s with $IDLE idle connections open; $lines log lines"

[ "$failed" -eq 0 ] || fail "the job failed under the flood"
awk -v s="$seconds" -v t="$TIMEOUT" 'BEGIN { exit !(s < t) }' || fail "the job took $seconds s, HCOMM_TIMEOUT is $TIMEOUT s"
# A handful per kind of refusal and per rate-limit interval, not one per client.
[ "$lines" -le 40 ] || fail "$lines log lines: the flood's warnings are not rate-limited"
exit 0
