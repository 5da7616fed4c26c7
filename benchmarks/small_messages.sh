#!/usr/bin/env bash
# Where the time of a message of a few KiB goes between two processes of one
# host: the shm transport alone (transport_bench: ping-pong latency and
# windowed bandwidth, 256 B to 256 KiB), then 2-rank collectives whose
# messages are that size (hcomm-perf --sweep-algos: every algorithm forced
# in turn, then auto, each one's best of ROUNDS rounds), once per value of
# the cross-memory-attach threshold in CMA (HCOMM_SHM_CMA_BYTES). The calls
# are timed unchecked (--no-check): hcomm-perf times each call on its own and
# checks between calls, so a rank whose check is shorter (a rooted
# collective's non-root) would count the other's check in its next call.
#
#   benchmarks/small_messages.sh [BUILD]
#   (environment: COLLS (broadcast reduce allgather alltoall gather scatter),
#    CMA (64K: the default), ROUNDS (3), MIN (256), MAX (256K), MIN_TIME (20))
set -euo pipefail
build=${1:-build}
run=$build/bin/hcomm-run
perf=$build/bin/hcomm-perf
for tool in "$run" "$perf" "$build/bin/transport_bench" "$build/lib/hcomm/libhcomm_transport_shm.so"; do
  [ -e "$tool" ] || { echo "small_messages.sh: $tool is missing: build HComm first (cmake --build $build)" >&2; exit 1; }
done
echo "Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(uname -r);" \
  "load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "Date: $(date -u +%Y-%m-%dT%H:%MZ)"
min=${MIN:-256}
max=${MAX:-256K}
for cma in ${CMA:-64K}; do
  echo
  echo "### shm transport alone, HCOMM_SHM_CMA_BYTES=$cma"
  echo
  echo "\`HCOMM_SHM_CMA_BYTES=$cma $build/bin/transport_bench --min $min --max $max $build/lib/hcomm/libhcomm_transport_shm.so\`"
  echo
  HCOMM_SHM_CMA_BYTES=$cma "$build/bin/transport_bench" --min "$min" --max "$max" \
    "$build/lib/hcomm/libhcomm_transport_shm.so"
  for coll in ${COLLS:-broadcast reduce allgather alltoall gather scatter}; do
    args=(-c "$coll" -b "$min" -e "$max" -w 5 -n 20 --min-time "${MIN_TIME:-20}" --no-check --sweep-algos
      --rounds "${ROUNDS:-3}")
    echo
    echo "### $coll, 2 ranks, shm, HCOMM_SHM_CMA_BYTES=$cma"
    echo
    echo "\`HCOMM_TRANSPORTS=shm HCOMM_SHM_CMA_BYTES=$cma $run -n 2 $perf ${args[*]}\`"
    echo
    HCOMM_TRANSPORTS=shm HCOMM_SHM_CMA_BYTES=$cma "$run" -n 2 "$perf" "${args[@]}"
  done
done
