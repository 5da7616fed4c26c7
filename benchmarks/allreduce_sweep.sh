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
# CALIBRATE=1 first measures each communicator's choices
# (hcomm-perf --calibrate FILE --select allreduce, with the same sizes,
# rounds and inputs) and sweeps with HCOMM_TUNE_FILE=FILE, so that auto is
# the calibrated selection (the calibration's own tables and rules printed
# first); the default is the cost model's.
# RANKS and TRANSPORTS narrow the runs (default "2 4" and "shm tcp").
#
#   benchmarks/allreduce_sweep.sh [BUILD]
#   (environment: WARMUP (3), ITERS (10), MIN_TIME (20), ROUNDS (1), BUFFERS (malloc), INPUTS (reused), CALIBRATE (0),
#    RANKS (2 4), TRANSPORTS (shm tcp))
set -euo pipefail
build=${1:-build}
cd "$(dirname "$0")/.."
echo "Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(uname -r);" \
  "load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "Date: $(date -u +%Y-%m-%dT%H:%MZ)"
read -ra kinds <<<"${BUFFERS:-malloc}"
common=(-b 8 -e 64M -f 2 -w "${WARMUP:-3}" -n "${ITERS:-10}" --min-time "${MIN_TIME:-20}" --rounds "${ROUNDS:-1}")
[ "${INPUTS:-reused}" = fresh ] && common+=(--fresh-inputs)
tune_dir=$(mktemp -d)
trap 'rm -rf "$tune_dir"' EXIT
for n in ${RANKS:-2 4}; do
  for t in ${TRANSPORTS:-shm tcp}; do
    tune=()
    if [ "${CALIBRATE:-0}" = 1 ]; then
      file=$tune_dir/$n-$t.tune
      echo
      echo "### $n ranks, $t: calibrated choices"
      echo
      echo "\`HCOMM_TRANSPORTS=$t $build/bin/hcomm-run -n $n $build/bin/hcomm-perf --calibrate $n-$t.tune --select allreduce ${common[*]}\`"
      echo
      echo '```'
      env HCOMM_TRANSPORTS=$t "$build/bin/hcomm-run" -n $n "$build/bin/hcomm-perf" --calibrate "$file" --select allreduce \
        "${common[@]}"
      echo '```'
      tune=(HCOMM_TUNE_FILE="$file")
    fi
    [ "$t" = shm ] && runs=("${kinds[@]}") || runs=(malloc)
    for b in "${runs[@]}"; do
      args=(-c allreduce "${common[@]}" --sweep-algos)
      [ "$b" = malloc ] || args+=(--buffers "$b")
      echo
      echo "### $n ranks, $t$([ "$b" = malloc ] || echo ", --buffers $b")"
      echo
      echo "\`${tune[*]:+HCOMM_TUNE_FILE=$n-$t.tune }HCOMM_TRANSPORTS=$t $build/bin/hcomm-run -n $n $build/bin/hcomm-perf ${args[*]}\`"
      echo
      echo '```'
      env "${tune[@]}" HCOMM_TRANSPORTS=$t "$build/bin/hcomm-run" -n $n "$build/bin/hcomm-perf" "${args[@]}"
      echo '```'
    done
  done
done
