#!/usr/bin/env bash
# HComm programs started by Open MPI's mpirun, as a user starts them: no
# HCOMM_* job variables, loopback only. With PMIx built in, the ranks find
# each other through mpirun's PMIx server; without it, through HCOMM_ROOT
# (HCOMM_BOOTSTRAP=env) and Open MPI's rank variables. One case per call:
#   mpirun_test.sh <case> <pmix|nopmix> <hcomm-perf> <hcomm_collectives_test> <hcomm_launch_bootstrap_check>
# Exits 77 (skipped) when Open MPI's mpirun is not installed and the case needs it.
set -u

CASE=$1
PMIX=$2
PERF=$3
COLLECTIVES=$4
CHECK=$5
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

MPIRUN=""
for candidate in mpirun.openmpi mpirun; do
  if command -v "$candidate" >/dev/null && "$candidate" --version 2>&1 | grep -q "Open MPI"; then
    MPIRUN=$candidate
    break
  fi
done
if [ -z "$MPIRUN" ] && [ "$CASE" != errors ]; then
  echo "SKIP: Open MPI's mpirun is not installed (Debian: apt-get install openmpi-bin)"
  exit 77
fi

source "$(dirname "$0")/common.sh"

# Without PMIx: HCOMM_ROOT and Open MPI's rank variables.
use_env_bootstrap() {
  use_env_rendezvous
  export HCOMM_BOOTSTRAP=env
}
[ "$PMIX" = pmix ] || use_env_bootstrap

# run <ranks> <program and arguments...>: sets RC.
run() {
  local ranks=$1
  shift
  timeout 300 "$MPIRUN" --allow-run-as-root --oversubscribe --bind-to none --mca btl self,vader \
    --mca oob_tcp_if_include lo -n "$ranks" "$@" >"$WORK/out" 2>"$WORK/err"
  RC=$?
}

# The nccl-tests-style sweep: 8 B to 4 MiB, every element checked by hcomm-perf.
case_perf() {
  run 4 "$PERF" -c allreduce -b 8 -e 4M
  expect_rc 0
  head -1 "$WORK/out" | grep -qF "allreduce: dtype float32, op sum, 4 ranks" || fail "header"
  [ "$(grep -vc '^#' "$WORK/out")" -eq 20 ] || fail "expected 20 rows (8 B to 4 MiB)"
  grep -v '^#' "$WORK/out" | awk '$(NF-1) != "0" { exit 1 }' || fail "a row has wrong elements"
}

# collectives_<group>: one group of the multirank test under every algorithm.
case_collectives() {
  local ranks=$1 group=$2
  run "$ranks" "$COLLECTIVES" "$group" --counts 0,1,7,1027
  expect_rc 0
  grep -q "cases on $ranks ranks .*: all correct" "$WORK/out" || fail "no report of $ranks ranks, all correct"
}

# Rank, size and locality as mpirun set them, two bootstraps at once (one on
# the env path, where HCOMM_ROOT serves one at a time).
case_bootstrap() {
  local count=2 ranks
  [ "$PMIX" = pmix ] || count=1
  for ranks in 1 3 4; do
    run "$ranks" "$CHECK" "$count" OMPI_COMM_WORLD_RANK OMPI_COMM_WORLD_SIZE OMPI_COMM_WORLD_LOCAL_RANK \
      OMPI_COMM_WORLD_LOCAL_SIZE
    expect_rc 0
    [ "$(grep -c "bootstraps checked" "$WORK/out")" -eq "$ranks" ] || fail "$ranks ranks did not all report"
  done
}

# The fallback without PMIx: Open MPI's rank variables and HCOMM_ROOT.
case_env_fallback() {
  use_env_bootstrap
  run 3 "$CHECK" 1 OMPI_COMM_WORLD_RANK OMPI_COMM_WORLD_SIZE OMPI_COMM_WORLD_LOCAL_RANK OMPI_COMM_WORLD_LOCAL_SIZE
  expect_rc 0
  [ "$(grep -c "bootstraps checked" "$WORK/out")" -eq 3 ] || fail "3 ranks did not all report"
}

# Errors that say what is wrong and what to do.
case_errors() {
  expect_error "HCOMM_BOOTSTRAP='mpi' is not accepted: expected one of auto, pmix, pmi, env" \
    env HCOMM_BOOTSTRAP=mpi "$CHECK" 1 PATH PATH
  if [ "$PMIX" = pmix ]; then
    expect_error "no PMIx server started this process" env HCOMM_BOOTSTRAP=pmix "$CHECK" 1 PATH PATH
    # PMIx variables without a server behind them.
    expect_error "but PMIx_Init failed" env PMIX_NAMESPACE=hcomm-test PMIX_RANK=0 "$CHECK" 1 PMIX_RANK PMIX_RANK
    grep -qF "HCOMM_BOOTSTRAP=env" "$WORK/err" || fail "the PMIx_Init error does not say what to do"
  else
    expect_error "built without PMIx" env HCOMM_BOOTSTRAP=pmix "$CHECK" 1 PATH PATH
  fi
}

case "$CASE" in
  collectives_*)
    group=${CASE#collectives_}
    ranks=${group%%_*}
    case_collectives "$ranks" "${group#*_}"
    ;;
  *) "case_$CASE" ;;
esac
echo "PASS [$CASE]"
