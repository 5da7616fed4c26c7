#!/usr/bin/env bash
# HComm programs started by MPICH's mpiexec.hydra, as a user starts them: no
# HCOMM_* job variables; the ranks find each other through hydra's PMI-1
# key-value store (PMI_FD). One case per call:
#   hydra_test.sh <case> <hcomm-perf> <hcomm_launch_bootstrap_check>
# Exits 77 (skipped) when mpiexec.hydra is not installed.
set -u

CASE=$1
PERF=$2
CHECK=$3
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

HYDRA=$(command -v mpiexec.hydra || true)
if [ -z "$HYDRA" ]; then
  echo "SKIP: MPICH's mpiexec.hydra is not installed (Debian: apt-get install mpich)"
  exit 77
fi

source "$(dirname "$0")/common.sh"

# run <ranks> <program and arguments...>: sets RC.
run() {
  local ranks=$1
  shift
  timeout 300 "$HYDRA" -n "$ranks" "$@" >"$WORK/out" 2>"$WORK/err"
  RC=$?
}

# Rank, size and locality as hydra set them, two bootstraps at once (two
# keys in the store).
case_bootstrap() {
  local ranks
  for ranks in 1 3 4; do
    run "$ranks" "$CHECK" 2 PMI_RANK PMI_SIZE MPI_LOCALRANKID MPI_LOCALNRANKS
    expect_rc 0
    [ "$(grep -c "bootstraps checked" "$WORK/out")" -eq "$ranks" ] || fail "$ranks ranks did not all report"
  done
}

# The nccl-tests-style sweep, every element checked by hcomm-perf.
case_perf() {
  run 3 "$PERF" -c allreduce -b 8 -e 1M
  expect_rc 0
  head -1 "$WORK/out" | grep -qF "allreduce: dtype float32, op sum, 3 ranks" || fail "header"
  grep -v '^#' "$WORK/out" | awk '$(NF-1) != "0" { exit 1 }' || fail "a row has wrong elements"
}

# Errors that say what is wrong and what to do.
case_errors() {
  expect_error "no PMI-1 process manager started this process (PMI_FD is unset)" \
    env HCOMM_BOOTSTRAP=pmi "$CHECK" 1 PATH PATH
  # PMI variables without a manager behind them.
  expect_error "PMI_FD=1000 is not an open descriptor" env PMI_FD=1000 PMI_RANK=0 PMI_SIZE=1 "$CHECK" 1 PMI_RANK PMI_SIZE
  # A rank that never creates its communicator: the others give up, naming
  # the wait, and their failure stops the job (the sleeper is not waited for).
  local start=$SECONDS
  run 2 env HCOMM_TIMEOUT=2 bash -c '[ "$PMI_RANK" = 1 ] && exec sleep 60; exec "$0" 1 PMI_RANK PMI_SIZE' "$CHECK"
  [ "$RC" -ne 0 ] || fail "a job with a rank that never joined exited 0"
  grep -qF "no answer to 'cmd=barrier_in'" "$WORK/err" || fail "the waiting rank did not say what it waited for"
  ((SECONDS - start < 30)) || fail "the job ran $((SECONDS - start)) s: the failing rank did not stop it"
}

"case_$CASE"
echo "PASS [$CASE]"
