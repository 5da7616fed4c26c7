#!/usr/bin/env bash
# CTest fixture of the launch.slurm tests: starts a one-host Slurm cluster
# (slurm_local_cluster.sh) under DIR when none answers and this machine can
# run one (root, Debian's slurmctld, slurmd and munge), and stops the one it
# started. It never fails: where no cluster answers, the tests skip.
#   slurm_fixture.sh start|stop DIR
set -u

ACTION=$1
DIR=$2
HERE=$(dirname "$0")

if [ "$ACTION" = stop ]; then
  [ -f "$DIR/slurm.conf" ] && bash "$HERE/slurm_local_cluster.sh" stop "$DIR"
  exit 0
fi
if command -v sinfo >/dev/null && timeout 20 sinfo -h >/dev/null 2>&1; then
  echo "a Slurm cluster answers already: the tests use it"
  exit 0
fi
if [ "$(id -u)" -ne 0 ] || ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null ||
  ! command -v munged >/dev/null; then
  echo "no local Slurm cluster: needs root and Debian's slurmctld, slurmd and munge"
  exit 0
fi
rm -rf "$DIR"
if ! bash "$HERE/slurm_local_cluster.sh" start "$DIR"; then
  echo "the local Slurm cluster did not start; see $DIR/log"
  bash "$HERE/slurm_local_cluster.sh" stop "$DIR"
  rm -f "$DIR/slurm.conf"
fi
exit 0
