# Several hosts on one machine: network namespaces joined by veth pairs to a
# bridge, each host with its own hostname, its ranks started in it. Sourced by
# the tests and the hierarchical benchmark; needs root, iproute2 and unshare.
#
#   hosts_up <hosts> [rate]   create the hosts; rate (e.g. 1gbit) shapes each
#                             host's link with tc's token bucket, both ways
#   hosts_run <ranks-per-host> <seconds> <program> <args...>
#                             one job over every host; sets RC (the first
#                             failing rank's status, 124 on timeout) and
#                             writes each rank's output to $HOSTS_DIR/out.<r>
#                             and err.<r>
#   hosts_down                remove everything hosts_up made (hosts_up traps
#                             EXIT to call it)
#
# Host h is namespace $HOSTS_PREFIX-h with hostname hcomm-host-h and address
# 10.77.0.(h+1) on its link eth0; the bridge lives in $HOSTS_PREFIX-hub. No
# address outside these namespaces is used.

source "$(dirname "${BASH_SOURCE[0]}")/../ports.sh"

HOSTS_PREFIX=hc$$
HOSTS_COUNT=0
HOSTS_DIR=""

hosts_supported() {
  if [ "$(id -u)" -ne 0 ]; then
    echo "needs root (network namespaces)"
    return 1
  fi
  for tool in ip unshare tc; do
    command -v "$tool" >/dev/null || { echo "needs $tool (Debian: iproute2, util-linux)"; return 1; }
  done
  if ! ip netns add "$HOSTS_PREFIX-probe" 2>/dev/null; then
    echo "cannot create a network namespace here"
    return 1
  fi
  ip netns del "$HOSTS_PREFIX-probe"
}

hosts_addr() { echo "10.77.0.$(($1 + 1))"; }

hosts_up() {
  local count=$1 rate=${2:-} h ns
  HOSTS_COUNT=$count
  HOSTS_DIR=$(mktemp -d)
  trap hosts_down EXIT
  ip netns add "$HOSTS_PREFIX-hub" || return 1
  ip -n "$HOSTS_PREFIX-hub" link add br0 type bridge || return 1
  ip -n "$HOSTS_PREFIX-hub" link set br0 up
  for ((h = 0; h < count; ++h)); do
    ns=$HOSTS_PREFIX-$h
    ip netns add "$ns" || return 1
    ip link add eth0 netns "$ns" type veth peer name port$h netns "$HOSTS_PREFIX-hub" || return 1
    ip -n "$HOSTS_PREFIX-hub" link set port$h master br0
    ip -n "$HOSTS_PREFIX-hub" link set port$h up
    ip -n "$ns" addr add "$(hosts_addr $h)/24" dev eth0
    ip -n "$ns" link set eth0 up
    ip -n "$ns" link set lo up
    if [ -n "$rate" ]; then
      # Egress from the host, and egress from the bridge port towards it.
      ip netns exec "$ns" tc qdisc add dev eth0 root tbf rate "$rate" burst 256kb latency 50ms || return 1
      ip netns exec "$HOSTS_PREFIX-hub" tc qdisc add dev port$h root tbf rate "$rate" burst 256kb latency 50ms ||
        return 1
    fi
  done
}

hosts_down() {
  local ns pid
  for ns in $(ip netns list 2>/dev/null | awk -v p="$HOSTS_PREFIX-" 'index($1, p) == 1 { print $1 }'); do
    for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$pid" 2>/dev/null; done
    ip netns del "$ns" 2>/dev/null
  done
  [ -n "$HOSTS_DIR" ] && rm -rf "$HOSTS_DIR"
  HOSTS_DIR=""
}

# One shell per host enters the host's namespaces once (ip netns exec also
# gives it a mount namespace of its own, which its ranks must share for shm)
# and starts that host's ranks; each rank's exit status goes to rc.<r>.
hosts_run() {
  local per_host=$1 seconds=$2 h r secret port pids=() status
  shift 2
  secret=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
  port=$(unused_port "$HOSTS_PREFIX-0")
  rm -f "$HOSTS_DIR"/out.* "$HOSTS_DIR"/err.* "$HOSTS_DIR"/rc.*
  for ((h = 0; h < HOSTS_COUNT; ++h)); do
    ip netns exec "$HOSTS_PREFIX-$h" unshare --uts \
      env HCOMM_SIZE=$((HOSTS_COUNT * per_host)) HCOMM_LOCAL_SIZE="$per_host" HCOMM_ROOT="$(hosts_addr 0):$port" \
      HCOMM_SECRET="$secret" HCOMM_BOOTSTRAP=env HCOMM_BOOTSTRAP_ADDR="$(hosts_addr $h)" \
      HCOMM_TCP_IF_ADDR="$(hosts_addr $h)" \
      bash -c '
        dir=$1 host=$2 per_host=$3 seconds=$4
        shift 4
        hostname "hcomm-host-$host" || exit 1
        pids=()
        for ((l = 0; l < per_host; ++l)); do
          r=$((host * per_host + l))
          HCOMM_RANK=$r HCOMM_LOCAL_RANK=$l timeout "$seconds" "$@" >"$dir/out.$r" 2>"$dir/err.$r" </dev/null &
          pids+=($!)
        done
        for ((l = 0; l < per_host; ++l)); do
          wait "${pids[$l]}"
          echo $? >"$dir/rc.$((host * per_host + l))"
        done' _ "$HOSTS_DIR" "$h" "$per_host" "$seconds" "$@" </dev/null &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid"; done
  RC=0
  for ((r = 0; r < HOSTS_COUNT * per_host; ++r)); do
    status=$(cat "$HOSTS_DIR/rc.$r" 2>/dev/null || echo 125)
    [ "$RC" -eq 0 ] && RC=$status
  done
}
