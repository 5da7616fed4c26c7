#!/usr/bin/env bash
# The transports side by side on this machine, 2 processes, as markdown:
#  1. point to point through the ucx and ofi plugins (transport_bench, the
#     plugin ABI alone) against the raw libraries on the same links:
#     ucx_perftest tag_bw (streaming, as transport_bench's window) and
#     fi_pingpong (one message at a time, as transport_bench's ping-pong);
#     ucx in both of its error modes, the plugin in the library's;
#  2. allreduce through the core (hcomm-perf, float32 sum, every element
#     checked) over shm, tcp, ucx (sm, tcp) and ofi (shm, tcp).
#
#   benchmarks/transports.sh [BUILD]    (needs ucx-utils and libfabric-bin; ROUNDS, default 3)
set -euo pipefail

build=$(realpath "${1:-build}")
work=$(mktemp -d)
trap 'rm -rf "$work"; kill $(jobs -p) 2>/dev/null || true' EXIT
plugins=$build/lib/hcomm
export HCOMM_BOOTSTRAP_ADDR=127.0.0.1 HCOMM_TCP_IF_ADDR=127.0.0.1
for tool in ucx_perftest fi_pingpong "$build/bin/transport_bench"; do
  command -v "$tool" >/dev/null || { echo "transports.sh: $tool is missing (ucx-utils, libfabric-bin, a build)" >&2; exit 1; }
done
sizes=(1048576 4194304 16777216 67108864)
rounds=${ROUNDS:-3}
source "$(dirname "$0")/../tests/ports.sh"
port=$(unused_port)

# ucx_perftest tag_bw, one-way GB/s (it prints MB/s of 2^20 bytes); a
# first argument -e runs it in UCX's peer-failure mode.
ucx_raw() {
  local mode=()
  [[ $1 == -e ]] && mode=(-e) && shift
  local bytes=$1
  ucx_perftest "${mode[@]}" -p "$port" >/dev/null 2>&1 &
  sleep 0.5
  ucx_perftest 127.0.0.1 "${mode[@]}" -p "$port" -t tag_bw -s "$bytes" -n $((2 * 1024 * 1048576 / bytes + 20)) 2>/dev/null |
    awk '/^Final:/ { printf "%.2f", $7 * 1048576 / 1e9 }'
  wait
}
# fi_pingpong, one-way GB/s from its time per transfer.
ofi_raw() {
  local provider=$1 bytes=$2 iters=$((512 * 1048576 / $2 + 10))
  fi_pingpong -p "$provider" -e rdm -S "$bytes" -I "$iters" >/dev/null 2>&1 &
  sleep 0.5
  fi_pingpong -p "$provider" -e rdm -S "$bytes" -I "$iters" 127.0.0.1 2>/dev/null |
    awk 'NR == 2 { printf "%.2f", '"$bytes"' / ($7 * 1e3) }'
  wait
}
# transport_bench through a plugin: "bytes latency_us bandwidth_GBps" rows.
plugin() {
  local lib=$1
  shift
  env "$@" "$build/bin/transport_bench" --min 1M --max 64M --iters 200 "$plugins/libhcomm_transport_$lib.so" |
    awk '!/^#/'
}

echo "Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(uname -r);" \
  "load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "Date: $(date -u +%Y-%m-%dT%H:%MZ); $(ucx_info -v | sed -n 's/^# Version /UCX /p');" \
  "$(fi_info --version | sed -n 's/^libfabric: /libfabric /p')"
echo
# Streaming bandwidth (column 3) for ucx; ping-pong bytes / latency for ofi.
bw() { awk -v b="$2" '$1 == b { printf "%.2f", $3 }' "$work/$1"; }
pp() { awk -v b="$2" '$1 == b { printf "%.2f", b / ($2 * 1e3) }' "$work/$1"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }
better() { awk -v a="$1" -v b="${2:-0}" 'BEGIN { print (a > b ? a : b) }'; }

# in_env VAR=VALUE... COMMAND...: the command (a function too) with the variables set.
in_env() {
  local vars=()
  while [[ $1 == *=* ]]; do vars+=("$1") && shift; done
  (export "${vars[@]}" && "$@")
}
# The links compared, each "name;plugin run;library run": the plugin in the
# same mode as its library. UCX's peer-failure mode (the plugin's default,
# HCOMM_UCX_HOST_PEER_FAILURE=1; ucx_perftest -e, which over shared memory
# needs UCX_MM_ERROR_HANDLING=y) costs UCX itself: over sm it gives up
# cross-memory attach.
ucx_sm=(UCX_TLS=sm,self)
ucx_tcp=(UCX_TLS=tcp,self UCX_NET_DEVICES=lo)
links=(
  "ucx sm;plugin ucx ${ucx_sm[*]} HCOMM_UCX_HOST_PEER_FAILURE=0 | bw;in_env ${ucx_sm[*]} ucx_raw"
  "ucx sm, peer failure;plugin ucx ${ucx_sm[*]} | bw;in_env ${ucx_sm[*]} UCX_MM_ERROR_HANDLING=y ucx_raw -e"
  "ucx tcp;plugin ucx ${ucx_tcp[*]} HCOMM_UCX_HOST_PEER_FAILURE=0 | bw;in_env ${ucx_tcp[*]} ucx_raw"
  "ucx tcp, peer failure;plugin ucx ${ucx_tcp[*]} | bw;in_env ${ucx_tcp[*]} ucx_raw -e"
  "ofi shm;plugin ofi HCOMM_OFI_PROVIDER=shm | pp;ofi_raw shm"
  "ofi tcp;plugin ofi HCOMM_OFI_PROVIDER=tcp FI_TCP_IFACE=lo | pp;in_env FI_TCP_IFACE=lo ofi_raw tcp"
)

# ROUNDS rounds, plugin and library in turn within each, so that a slow
# spell of the machine hits both alike; per size, each one's best round.
p2p_tables() {
  declare -A best
  local round bytes i name mine lib value
  for ((round = 1; round <= rounds; ++round)); do
    for i in "${!links[@]}"; do
      IFS=';' read -r name mine lib <<<"${links[$i]}"
      # shellcheck disable=SC2086
      ${mine%% | *} >"$work/link.$i"
      for bytes in "${sizes[@]}"; do
        value=$(${mine##* | } "link.$i" "$bytes")
        best[p.$i.$bytes]=$(better "${value:-0}" "${best[p.$i.$bytes]:-0}")
        # shellcheck disable=SC2086
        value=$($lib "$bytes")
        best[l.$i.$bytes]=$(better "${value:-0}" "${best[l.$i.$bytes]:-0}")
      done
    done
  done
  echo "### Point to point, GB/s (10^9 bytes/s), plugin against its library, best of $rounds rounds"
  table "ucx_perftest" 0 1 2 3
  table "fi_pingpong" 4 5
}

# table LIBRARY LINK...: plugin, library and ratio per link, one row per size.
table() {
  local library=$1 header="| bytes |" rule="| ---: |" i name row bytes
  shift
  for i in "$@"; do
    name=${links[$i]%%;*}
    header+=" $name plugin | $library | ratio |"
    rule+=" ---: | ---: | ---: |"
  done
  printf '\n%s\n%s\n' "$header" "$rule"
  for bytes in "${sizes[@]}"; do
    row="| $bytes |"
    for i in "$@"; do
      row+=" ${best[p.$i.$bytes]} | ${best[l.$i.$bytes]} | $(ratio "${best[p.$i.$bytes]}" "${best[l.$i.$bytes]}") |"
    done
    echo "$row"
  done
}

allreduce_table() {
  echo "### Allreduce through the core, 2 ranks: time per call in us (algorithm)"
  echo
  names=(shm tcp "ucx sm" "ucx tcp" "ofi shm" "ofi tcp")
  envs=("HCOMM_TRANSPORTS=shm" "HCOMM_TRANSPORTS=tcp" "HCOMM_TRANSPORTS=ucx UCX_TLS=sm,self"
    "HCOMM_TRANSPORTS=ucx UCX_TLS=tcp,self UCX_NET_DEVICES=lo" "HCOMM_TRANSPORTS=ofi HCOMM_OFI_PROVIDER=shm"
    "HCOMM_TRANSPORTS=ofi HCOMM_OFI_PROVIDER=tcp FI_TCP_IFACE=lo")
  for i in "${!names[@]}"; do
    # shellcheck disable=SC2086
    env ${envs[$i]} "$build/bin/hcomm-run" -n 2 "$build/bin/hcomm-perf" -c allreduce -b 8 -e 64M -f 8 -w 3 -n 10 \
      >"$work/perf.$i"
  done
  header="| bytes |"
  rule="| ---: |"
  for name in "${names[@]}"; do header+=" $name |"; rule+=" ---: |"; done
  echo "$header"
  echo "$rule"
  paste -d' ' "$work"/perf.{0,1,2,3,4,5} | awk '!/^#/ {
      row = "| " $1 " |"
      for (i = 0; i < 6; ++i) { t = $(i * 10 + 6); w = $(i * 10 + 9); a = $(i * 10 + 10)
        row = row sprintf(" %s (%s)%s |", t, a, w == "0" ? "" : " WRONG") }
      print row }'
  echo
  echo "Commands: for each transport, \`env <settings> $build/bin/hcomm-run -n 2 $build/bin/hcomm-perf -c allreduce" \
    "-b 8 -e 64M -f 8 -w 3 -n 10\` with the settings: ${envs[*]/%/;}"
}

# The allreduces first: they share the cores with nothing else then.
allreduce_table
echo
p2p_tables
