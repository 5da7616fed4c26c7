# A TCP port for a rendezvous that a test names itself (HCOMM_ROOT). Sourced.
#
# The port lies below the kernel's ephemeral range, so no connection that an
# earlier run left in TIME_WAIT holds it (such a socket was bound without
# SO_REUSEADDR, so it blocks the listener's bind), and nothing uses it in any
# state now. $1 (optional): the network namespace to look in.
unused_port() {
  local ns=${1:-} low port in_ns=()
  [ -n "$ns" ] && in_ns=(ip netns exec "$ns")
  read -r low _ <"/proc/sys/net/ipv4/ip_local_port_range"
  [ "$low" -gt 12000 ] || low=32768
  while :; do
    port=$((10000 + RANDOM % (low - 10000)))
    [ -z "$("${in_ns[@]}" ss -Htan "sport = :$port")" ] && break
  done
  echo "$port"
}
