#!/usr/bin/env bash
# Allreduce (float32 sum, 8 B to 64 MiB) on 2 and 4 ranks over shm and tcp:
# `hcomm-perf --sweep-algos`, every algorithm that serves allreduce forced in
# turn and then the library's own choice, every element checked; printed as
# the tool's tables with the command above each. Over shm once per buffer
# kind in BUFFERS (hcomm-perf --buffers; "malloc register" runs both the
# copy by address and the zero-copy path); tcp maps nothing, so malloc only.
# INPUTS=fresh writes the input before each call (hcomm-perf --fresh-inputs).
# Short calls are timed for about MIN_TIME ms per contender and size
# (hcomm-perf --min-time), at least ITERS times.
#
#   benchmarks/allreduce_sweep.sh [BUILD]
#   (environment: WARMUP (3), ITERS (10), MIN_TIME (20), ROUNDS (1), BUFFERS (malloc), INPUTS (reused))
set -euo pipefail
build=${1:-build}
cd "$(dirname "$0")/.."
echo "Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(uname -r);" \
  "load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "Date: $(date -u +%Y-%m-%dT%H:%MZ)"
read -ra kinds <<<"${BUFFERS:-malloc}"
for n in 2 4; do
  for t in shm tcp; do
    [ "$t" = shm ] && runs=("${kinds[@]}") || runs=(malloc)
    for b in "${runs[@]}"; do
      args=(-c allreduce -b 8 -e 64M -f 2 -w "${WARMUP:-3}" -n "${ITERS:-10}" --min-time "${MIN_TIME:-20}" --sweep-algos --rounds "${ROUNDS:-1}")
      [ "$b" = malloc ] || args+=(--buffers "$b")
      [ "${INPUTS:-reused}" = fresh ] && args+=(--fresh-inputs)
      echo
      echo "### $n ranks, $t$([ "$b" = malloc ] || echo ", --buffers $b")"
      echo
      echo "\`HCOMM_TRANSPORTS=$t $build/bin/hcomm-run -n $n $build/bin/hcomm-perf ${args[*]}\`"
      echo
      echo '```'
      env HCOMM_TRANSPORTS=$t "$build/bin/hcomm-run" -n $n "$build/bin/hcomm-perf" "${args[@]}"
      echo '```'
    done
  done
done
