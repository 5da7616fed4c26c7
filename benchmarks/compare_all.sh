#!/usr/bin/env bash
# compare_mpi.sh for every collective it knows and every rank count in
# RANKS, each table printed and written as JSON into OUT_DIR
# (<collective>-<n>ranks-<inputs>.json), then hcomm-perf --sweep-algos for
# each collective and rank count (the selector's choice against every
# algorithm forced, no calibration file), printed.
#
#   benchmarks/compare_all.sh [BUILD]
#   (environment: RANKS (2 4), COLLS (all eight), OUT_DIR (.), SWEEP (1: also the sweeps), and
#    compare_mpi.sh's: INPUTS, ROUNDS, MAX_BYTES, MPIS, BENCH_DIR, ...)
set -uo pipefail
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
out_dir=${OUT_DIR:-.}
colls=${COLLS:-broadcast reduce gather scatter allgather alltoall reduce_scatter allreduce}
inputs=${INPUTS:-reused}
status=0
for n in ${RANKS:-2 4}; do
  for coll in $colls; do
    echo
    echo "### $coll, $n ranks"
    echo
    COLL=$coll NRANKS=$n JSON=$out_dir/$coll-${n}ranks-$inputs.json bash "$here/compare_mpi.sh" "$build" || status=1
  done
done
[ "${SWEEP:-1}" = 1 ] || exit $status
sweep_args=(-b 8 -e "${MAX_BYTES:-64M}" -f 2 -w 3 -n 10 --min-time 20 --rounds 2 --sweep-algos)
[ "$inputs" = fresh ] && sweep_args+=(--fresh-inputs)
for n in ${RANKS:-2 4}; do
  for coll in $colls; do
    echo
    echo "### selector sweep: $coll, $n ranks, shm, no calibration"
    echo
    echo "\`HCOMM_TRANSPORTS=shm $build/bin/hcomm-run -n $n $build/bin/hcomm-perf -c $coll ${sweep_args[*]}\`"
    echo
    HCOMM_TRANSPORTS=shm "$build/bin/hcomm-run" -n "$n" "$build/bin/hcomm-perf" -c "$coll" "${sweep_args[@]}" ||
      status=1
  done
done
exit $status
