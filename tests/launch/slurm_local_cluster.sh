#!/usr/bin/env bash
# Starts a one-host Slurm cluster for slurm_test.sh (root; Debian's slurmctld,
# slurmd, slurm-client and munge): munged, then slurmctld and slurmd on
# 127.0.0.1 with ports 16817/16818, state and logs under DIR.
#   slurm_local_cluster.sh start DIR   prints the SLURM_CONF to export
#   slurm_local_cluster.sh stop DIR
set -eu

ACTION=$1
DIR=$(realpath -m "$2")
CONF=$DIR/slurm.conf

if [ "$ACTION" = stop ]; then
  for daemon in slurmd slurmctld; do
    [ -f "$DIR/run/$daemon.pid" ] && kill "$(cat "$DIR/run/$daemon.pid")" 2>/dev/null || true
  done
  exit 0
fi

mkdir -p "$DIR"/{spool/ctld,spool/d,log,run}
cat >"$CONF" <<CONF
ClusterName=hcomm
SlurmctldHost=$(hostname)(127.0.0.1)
AuthType=auth/munge
CredType=cred/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
ReturnToService=2
SlurmUser=root
SlurmdUser=root
SlurmctldPort=16817
SlurmdPort=16818
SlurmctldPidFile=$DIR/run/slurmctld.pid
SlurmdPidFile=$DIR/run/slurmd.pid
SlurmdSpoolDir=$DIR/spool/d
StateSaveLocation=$DIR/spool/ctld
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
NodeName=$(hostname) NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=debug Nodes=$(hostname) Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
CONF

if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
  mkdir -p /run/munge && chown munge:munge /run/munge
  runuser -u munge -- /usr/sbin/munged
fi
/usr/sbin/slurmctld -f "$CONF"
/usr/sbin/slurmd -f "$CONF"
for _ in $(seq 30); do
  SLURM_CONF=$CONF sinfo -h -o %T 2>/dev/null | grep -q idle && { echo "$CONF"; exit 0; }
  sleep 1
done
echo "slurm_local_cluster.sh: the node did not become idle; see $DIR/log" >&2
exit 1
