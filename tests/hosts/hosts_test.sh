#!/usr/bin/env bash
# Ranks on several emulated hosts (network namespaces, tests/hosts/hosts.sh):
# 2 hosts x 2 ranks and 4 hosts x 1 rank. One case per call:
#   hosts_test.sh <case> <hcomm-topo> <hcomm_collectives_test> <hcomm-perf>
# Exits 77 (skipped) where namespaces cannot be made (not root).
set -u

CASE=$1
TOPO=$2
COLLECTIVES=$3
PERF=$4
source "$(dirname "$0")/hosts.sh"

if ! why=$(hosts_supported); then
  echo "SKIP: $why"
  exit 77
fi
export HCOMM_TIMEOUT=60
unset HCOMM_TRANSPORTS HCOMM_TUNE HCOMM_ALGO

fail() {
  echo "FAIL [$CASE]: $*" >&2
  local f
  for f in "$HOSTS_DIR"/out.* "$HOSTS_DIR"/err.*; do
    [ -s "$f" ] && { echo "--- ${f##*/}" >&2; tail -40 "$f" >&2; }
  done
  exit 1
}

expect_rc() { [ "$RC" -eq "$1" ] || fail "exit status $RC, expected $1"; }
expect_in() { grep -qF -- "$2" "$HOSTS_DIR/$1" || fail "$1 lacks: $2"; }

# One line per link of rank 0's JSON document: "a-b class transport".
links() {
  grep -o '"ranks": \[[0-9]*, [0-9]*\], "class": "[a-z]*", "transport": "[a-z]*"' "$HOSTS_DIR/out.0" |
    sed -E 's/"ranks": \[([0-9]+), ([0-9]+)\], "class": "([a-z]+)", "transport": "([a-z]+)"/\1-\2 \3 \4/'
}

# Every pair whose ranks share a host is shm with class numa or host, every
# other pair a network transport with class net. $1: ranks per host.
expect_links() {
  local per_host=$1 n=$((HOSTS_COUNT * $1))
  [ "$(links | wc -l)" -eq $((n * (n - 1) / 2)) ] || fail "expected $((n * (n - 1) / 2)) links: $(links | tr '\n' ';')"
  links | awk -v k="$per_host" '{
      split($1, r, "-"); same = int(r[1] / k) == int(r[2] / k)
      if (same && ($2 !~ /^(numa|host)$/ || $3 != "shm")) exit 1
      if (!same && ($2 != "net" || $3 !~ /^(tcp|ucx|ofi)$/)) exit 1 }' ||
    fail "links: $(links | tr '\n' ';')"
}

# Hosts found from the namespaces and hostnames; shm inside a host, a network
# transport across; one leader per host. The text form names the hosts.
case_topology_2x2() {
  hosts_up 2 || fail "hosts_up"
  hosts_run 2 60 "$TOPO" --json
  expect_rc 0
  expect_in out.0 '"node_of": [0, 0, 1, 1]'
  expect_in out.0 '"leaders": [0, 2]'
  expect_in out.0 '"name": "hcomm-host-0"'
  expect_in out.0 '"name": "hcomm-host-1"'
  expect_links 2
  hosts_run 2 60 "$TOPO"
  expect_rc 0
  expect_in out.0 "hcomm-topo: 4 ranks on 2 hosts"
  expect_in out.0 "host 0 hcomm-host-0: ranks 0,1, leader 0"
  expect_in out.0 "host 1 hcomm-host-1: ranks 2,3, leader 2"
  expect_in out.0 "leaders: 0,2"
}

case_topology_4x1() {
  hosts_up 4 || fail "hosts_up"
  hosts_run 1 60 "$TOPO" --json
  expect_rc 0
  expect_in out.0 '"node_of": [0, 1, 2, 3]'
  expect_in out.0 '"leaders": [0, 1, 2, 3]'
  expect_links 1
}

# Every collective under every algorithm that serves it (the hierarchical
# ones among them, on 2 hosts), every element checked; allreduce also at a
# large count.
collectives() {
  local hosts=$1 per_host=$2 group large
  hosts_up "$hosts" || fail "hosts_up"
  for group in allreduce broadcast reduce allgather allgatherv reduce_scatter reduce_scatter_v alltoall alltoallv \
    gather scatter barrier sendrecv mixed scan exscan; do
    large=()
    [ "$group" = allreduce ] && large=(--large 1048581)
    hosts_run "$per_host" 600 "$COLLECTIVES" "$group" --counts 0,1,7,1027 "${large[@]}"
    [ "$RC" -eq 0 ] || fail "$group: exit status $RC"
  done
}
case_collectives_2x2() {
  collectives 2 2
  # The hierarchical algorithms served and ran.
  hosts_run 2 600 "$COLLECTIVES" allreduce --counts 7
  grep -q "hier_ring" "$HOSTS_DIR/out.0" || fail "hier_ring did not run on 2 hosts"
}
case_collectives_4x1() { collectives 4 1; }

# hcomm-perf's checked sweep over a shaped link (tc, 1 Gbit/s), as the
# hierarchical benchmark runs it.
case_shaped() {
  hosts_up 2 1gbit || fail "hosts_up"
  hosts_run 2 300 "$PERF" -c allreduce -b 8 -e 4M
  expect_rc 0
  grep -v '^#' "$HOSTS_DIR/out.0" | awk 'NF && $(NF-1) != "0" { exit 1 }' || fail "a row has wrong elements"
  [ "$(grep -vc '^#' "$HOSTS_DIR/out.0")" -eq 20 ] || fail "expected 20 rows (8 B to 4 MiB)"
}

# --calibrate across hosts measures the link within a host and the shaped one
# between hosts apart, and a later job's score map takes both.
case_calibrate_2x2() {
  hosts_up 2 1gbit || fail "hosts_up"
  hosts_run 2 300 "$PERF" --calibrate "$HOSTS_DIR/link.tune" -w 1 -n 3
  expect_rc 0
  local tune=$HOSTS_DIR/link.tune key
  grep -qx "hosts = 2" "$tune" || fail "no host count in $(cat "$tune")"
  for key in intra.alpha_us intra.beta_us_per_byte inter.alpha_us inter.beta_us_per_byte; do
    grep -qE "^$key = [0-9]" "$tune" || fail "no $key in $(cat "$tune")"
  done
  # 1 Gbit/s between hosts against shared memory within: beta at least 5x.
  awk '$1 == "intra.beta_us_per_byte" { i = $3 } $1 == "inter.beta_us_per_byte" { e = $3 }
       END { exit !(i > 0 && e > 5 * i) }' "$tune" || fail "inter not slower than intra: $(cat "$tune")"
  HCOMM_TUNE_FILE=$tune HCOMM_DEBUG=INFO HCOMM_DEBUG_SUBSYS=ALGO hosts_run 2 300 "$PERF" -c allreduce -b 8 -e 1M -f 32
  expect_rc 0
  expect_in err.0 "HCOMM_TUNE_FILE $tune (measured on 4 ranks over "
  # The job's levels are the file's figures, not the transports' (the log prints them with %.3g).
  expect_in err.0 "HCOMM_TUNE_FILE $tune across 2 hosts: $(awk '{ v[$1] = $3 }
    END { printf "within a host alpha %.3g us, beta %.3g us/B; between hosts alpha %.3g us, beta %.3g us/B",
          v["intra.alpha_us"], v["intra.beta_us_per_byte"], v["inter.alpha_us"], v["inter.beta_us_per_byte"] }' "$tune")"
  grep -v '^#' "$HOSTS_DIR/out.0" | awk 'NF && $(NF-1) != "0" { exit 1 }' || fail "a row has wrong elements"
}

# A host whose link goes down mid-job (no reset reaches anyone): every rank
# fails with an error within the timeout, none hangs.
case_link_down() {
  hosts_up 2 || fail "hosts_up"
  local start
  start=$(date +%s)
  export HCOMM_TIMEOUT=5
  (sleep 3 && ip -n "$HOSTS_PREFIX-hub" link set port1 down) &
  hosts_run 2 60 "$PERF" -c allreduce -b 1M -e 1M -n 100000 -w 1
  local took=$(($(date +%s) - start))
  [ "$RC" -ne 0 ] && [ "$RC" -ne 124 ] || fail "exit status $RC: expected an error, not success or a hang"
  [ "$took" -lt 40 ] || fail "the ranks took $took s to fail"
  for r in 0 1 2 3; do
    grep -qiE "timeout|no progress|closed|reset|lost" "$HOSTS_DIR/err.$r" || fail "rank $r did not say what failed"
  done
}

# The namespaces go away when the script using them fails.
case_cleanup() {
  local prefix
  prefix=$(bash -c 'source "$1"; hosts_up 2 >/dev/null || exit 3; echo "$HOSTS_PREFIX"; exit 1' _ \
    "$(dirname "$0")/hosts.sh")
  [ -n "$prefix" ] || fail "hosts_up failed in the child"
  if ip netns list | grep -q "^$prefix-"; then
    fail "namespaces left behind: $(ip netns list | grep "^$prefix-" | tr '\n' ' ')"
  fi
}

"case_$CASE" || exit 1
echo "PASS [$CASE]"
