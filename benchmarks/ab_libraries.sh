#!/bin/bash
# Two builds of libhcomm against each other: interleaved rounds of one
# collective at a few sizes, the same hcomm-perf and plugins, each library
# chosen by LD_LIBRARY_PATH (hcomm-perf finds libhcomm by RUNPATH, which the
# variable overrides). One line per round, library and size: round, label,
# size, time (us), algorithm.
#
#   benchmarks/ab_libraries.sh BUILD BASE_LIBDIR NEW_LIBDIR [ROUNDS]
# Environment: RANKS (2), SIZES ("8 64K 16M"), COLL (allreduce),
# MIN_TIME (ms of calls per size, 200), and the HCOMM_* settings (e.g.
# HCOMM_TRANSPORTS=shm) the ranks should see.
set -euo pipefail
build=$1 base=$2 new=$3 rounds=${4:-10}
ranks=${RANKS:-2} sizes=${SIZES:-"8 64K 16M"} coll=${COLL:-allreduce} min_time=${MIN_TIME:-200}
export HCOMM_BOOTSTRAP_ADDR=${HCOMM_BOOTSTRAP_ADDR:-127.0.0.1}
for r in $(seq 1 "$rounds"); do
  if ((r % 2)); then order="base new"; else order="new base"; fi
  for label in $order; do
    if [ "$label" = base ]; then lib=$base; else lib=$new; fi
    for s in $sizes; do
      row=$(LD_LIBRARY_PATH=$lib "$build/bin/hcomm-run" -n "$ranks" "$build/bin/hcomm-perf" -c "$coll" -b "$s" -e "$s" \
            -w 20 --min-time "$min_time" 2>&1 | awk '$1 ~ /^[0-9]+$/ {print $6, $10}')
      echo "$r $label $s $row"
    done
  done
done
