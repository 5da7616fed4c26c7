#!/usr/bin/env bash
# HComm programs started by Slurm's srun on the cluster that SLURM_CONF (or
# /etc/slurm/slurm.conf) names; slurm_local_cluster.sh starts one on this host.
# With --mpi=pmix the ranks find each other through slurmd's PMIx server;
# with --mpi=none through SLURM_PROCID/SLURM_NTASKS and HCOMM_ROOT. One case
# per call:
#   slurm_test.sh <case> <hcomm-perf> <hcomm_launch_bootstrap_check> [LOCAL_CLUSTER_DIR]
# Without SLURM_CONF, the cluster that slurm_fixture.sh started under
# LOCAL_CLUSTER_DIR, if it did. Exits 77 (skipped) when srun is not installed
# or no Slurm cluster answers.
set -u

CASE=$1
PERF=$2
CHECK=$3
LOCAL_CLUSTER=${4:-}
WORK=$(mktemp -d)
if [ -z "${SLURM_CONF:-}" ] && [ -n "$LOCAL_CLUSTER" ] && [ -f "$LOCAL_CLUSTER/slurm.conf" ]; then
  export SLURM_CONF=$LOCAL_CLUSTER/slurm.conf
fi
trap 'rm -rf "$WORK"' EXIT

if ! command -v srun >/dev/null; then
  echo "SKIP: Slurm's srun is not installed"
  exit 77
fi
if ! timeout 20 sinfo -h >/dev/null 2>&1; then
  echo "SKIP: no Slurm cluster answers (sinfo failed); tests/launch/slurm_local_cluster.sh starts one on this host"
  exit 77
fi
if [ "$CASE" != env_fallback ] && ! srun --mpi=list 2>&1 | grep -qw pmix; then
  echo "SKIP: this Slurm has no PMIx plugin (srun --mpi=list)"
  exit 77
fi

source "$(dirname "$0")/common.sh"

# run <mpi plugin> <ranks> <program and arguments...>: sets RC. All ranks on
# one host, so SLURM_NTASKS is the local size too.
run() {
  local mpi=$1 ranks=$2
  shift 2
  timeout 300 srun --mpi="$mpi" --overcommit -N 1 -n "$ranks" "$@" >"$WORK/out" 2>"$WORK/err"
  RC=$?
}

expect_reports() {
  [ "$RC" -eq 0 ] || fail "exit status $RC"
  [ "$(grep -c "bootstraps checked" "$WORK/out")" -eq "$1" ] || fail "$1 ranks did not all report"
}

case_bootstrap() {
  local ranks
  for ranks in 1 3 4; do
    run pmix "$ranks" "$CHECK" 2 SLURM_PROCID SLURM_NTASKS SLURM_LOCALID SLURM_NTASKS
    expect_reports "$ranks"
  done
}

case_perf() {
  run pmix 4 "$PERF" -c allreduce -b 8 -e 4M
  [ "$RC" -eq 0 ] || fail "exit status $RC"
  [ "$(grep -vc '^#' "$WORK/out")" -eq 20 ] || fail "expected 20 rows (8 B to 4 MiB)"
  grep -v '^#' "$WORK/out" | awk '$(NF-1) != "0" { exit 1 }' || fail "a row has wrong elements"
}

case_env_fallback() {
  use_env_rendezvous
  run none 3 "$CHECK" 1 SLURM_PROCID SLURM_NTASKS
  expect_reports 3
}

"case_$CASE"
echo "PASS [$CASE]"
