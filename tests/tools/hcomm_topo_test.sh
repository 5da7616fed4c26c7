#!/usr/bin/env bash
# hcomm-topo run under hcomm-run at 3 ranks, as a user runs it; each case
# checks its matrices, hierarchy and JSON. One case per call:
#   hcomm_topo_test.sh <hcomm-run> <hcomm-topo> <case>
set -u

RUN=$1
TOPO=$2
CASE=$3
# shellcheck source=case_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/case_common.sh"

# topo <ranks> <hcomm-topo arguments...>: sets RC.
topo() {
  local ranks=$1
  shift
  capture "$RUN" -n "$ranks" --timeout 50 "$TOPO" "$@"
}


# topo_alone <hcomm-topo arguments...>: without a launcher; sets RC.
topo_alone() {
  capture "$TOPO" "$@"
}

# The rows of a table: the lines after its title up to the next blank line,
# without the header, squeezed to single spaces.
table() { awk -v t="$1" '$0 == t { on = 1; getline; next } on && $0 == "" { exit } on' "$WORK/out" | tr -s ' '; }

# The matrix of transports (or link classes) as rows "r<i> <cell> <cell> ...",
# expected to hold `cell` off the diagonal and `diag` on it.
expect_matrix() {
  local title=$1 n=$2 diag=$3 cell=$4
  [ "$(table "$title" | wc -l)" -eq "$n" ] || fail "$title: expected $n rows"
  table "$title" | awk -v n="$n" -v d="$diag" -v c="$cell" '
    { if ($1 != "r" (NR - 1)) exit 1
      for (j = 0; j < n; ++j) if ($(j + 2) !~ ("^(" (j == NR - 1 ? d : c) ")$")) exit 1 }' ||
    fail "$title: expected $diag on the diagonal and $cell elsewhere"
}

# One line per link in the JSON document: "a-b class transport".
links() {
  grep -o '"ranks": \[[0-9]*, [0-9]*\], "class": "[a-z]*", "transport": "[a-z]*"' "$1" |
    sed -E 's/"ranks": \[([0-9]+), ([0-9]+)\], "class": "([a-z]+)", "transport": "([a-z]+)"/\1-\2 \3 \4/'
}

# One host, shm between every pair when shm is allowed (NUMA or HOST: this
# machine's ranks may be bound to one NUMA node or not at all).
case_shm() {
  topo 3
  expect_rc 0
  expect_out "hcomm-topo: 3 ranks on 1 host"
  expect_matrix "Transports" 3 self shm
  expect_matrix "Link classes" 3 SELF "NUMA|HOST"
  table "Link classes" | awk '$5 != "0" { exit 1 }' || fail "every rank is on host 0"
  grep -qE "^host 0 .*: ranks 0,1,2, leader 0$" "$WORK/out" || fail "no line for host 0"
  expect_out "leaders: 0"
  [ ! -s "$WORK/err" ] || fail "hcomm-topo wrote to stderr"
}

case_tcp() {
  HCOMM_TRANSPORTS=tcp topo 3
  expect_rc 0
  expect_matrix "Transports" 3 self tcp
  expect_matrix "Link classes" 3 SELF "NUMA|HOST"
}

# The communicator's hcomm_config_t chooses the transports, unless
# HCOMM_TRANSPORTS is set: then the variable wins and says so.
case_config() {
  topo 3 --transports tcp
  expect_rc 0
  expect_matrix "Transports" 3 self tcp
  HCOMM_TRANSPORTS=shm HCOMM_DEBUG=INFO HCOMM_DEBUG_SUBSYS=INIT topo 3 --transports tcp
  expect_rc 0
  expect_matrix "Transports" 3 self shm
  [ "$(grep -c "HCOMM_TRANSPORTS=shm overrides transports = 'tcp' of the communicator's hcomm_config_t" "$WORK/err")" \
    -eq 3 ] || fail "not one override line per rank"
  topo 3 --transports nosuch
  expect_rc 1
  grep -qF "hcomm_config_t.transports='nosuch' names transport 'nosuch', which was not found" "$WORK/err" ||
    fail "no message for an unknown transport"
}

# --json prints the document, --dump writes the same; HCOMM_TOPO_FILE reads
# it back and gives the same topology.
case_json() {
  topo 3 --json --dump "$WORK/dump.json"
  expect_rc 0
  cmp -s "$WORK/out" "$WORK/dump.json" || fail "--json and --dump differ"
  cp "$WORK/out" "$WORK/first.json"
  [ "$(links "$WORK/first.json" | wc -l)" -eq 3 ] || fail "expected 3 links"
  links "$WORK/first.json" | awk '$1 !~ /^(0-1|0-2|1-2)$/ || $2 !~ /^(numa|host)$/ || $3 != "shm" { exit 1 }' ||
    fail "links: $(links "$WORK/first.json" | tr '\n' ';')"
  grep -qF '"node_of": [0, 0, 0]' "$WORK/first.json" || fail "node_of"
  grep -qF '"leaders": [0]' "$WORK/first.json" || fail "leaders"
  grep -qF '"format": "hcomm-topology"' "$WORK/first.json" || fail "format"
  HCOMM_TOPO_FILE="$WORK/dump.json" topo 3 --json
  expect_rc 0
  cmp -s "$WORK/out" "$WORK/first.json" || fail "the topology read from the file differs from the one discovered"
}

# A described topology of two hosts: ranks 0 and 2 on host a, rank 1 on
# host b. shm serves only the pair the file puts on one host, though all
# three ranks run here; the file's bandwidths come back in the document.
# The in-tree transports only: ucx and ofi, where built, may also serve the
# pairs between hosts.
case_file_hosts() {
  export HCOMM_TRANSPORTS=shm,tcp
  cat >"$WORK/hosts.json" <<'JSON'
{"format": "hcomm-topology", "version": 1,
 "hosts": [{"name": "a", "boot_id": "boot-a", "net_ns": 1, "nics": [{"name": "eth0", "kind": "network", "pci": null, "numa": 0}],
            "gpus": [{"pci": "0000:3b:00.0", "name": "cuda0", "numa": 1}]},
           {"name": "b", "boot_id": "boot-b", "net_ns": 2, "nics": []}],
 "ranks": [{"rank": 0, "host": 0, "numa": 0, "cpus": "0", "last_cpu": 0, "gpu": null},
           {"rank": 1, "host": 1, "numa": 0, "cpus": "0", "last_cpu": 0, "gpu": null},
           {"rank": 2, "host": 0, "numa": 1, "cpus": "1", "last_cpu": 1, "gpu": null}],
 "links": [{"ranks": [0, 1], "class": "net", "bandwidth_gbps": 1.5, "latency_us": 25},
           {"ranks": [1, 2], "bandwidth_gbps": 1.25, "latency_us": 30}]}
JSON
  HCOMM_TOPO_FILE="$WORK/hosts.json" topo 3
  expect_rc 0
  expect_out "hcomm-topo: 3 ranks on 2 hosts"
  [ "$(table Transports)" = "$(printf 'r0 self tcp shm\nr1 tcp self tcp\nr2 shm tcp self')" ] ||
    fail "transports: $(table Transports | tr '\n' ';')"
  [ "$(table "Link classes" | cut -d' ' -f1-8)" = "$(printf 'r0 SELF NET HOST 0 0 - 0\nr1 NET SELF NET 1 0 - 0\nr2 HOST NET SELF 0 1 - 1')" ] ||
    fail "classes: $(table "Link classes" | tr '\n' ';')"
  expect_out "host 0 a: ranks 0,2, leader 0"
  expect_out "host 1 b: ranks 1, leader 1"
  expect_out "  NUMA 1: ranks 2"
  expect_out "  NIC eth0 (network, PCI -, NUMA 0)"
  expect_out "  GPU 0000:3b:00.0 (cuda0, NUMA 1)"
  expect_out "leaders: 0,1"
  HCOMM_TOPO_FILE="$WORK/hosts.json" topo 3 --json
  expect_rc 0
  grep -qF '{"ranks": [0, 1], "class": "net", "transport": "tcp", "bandwidth_gbps": 1.5, "latency_us": 25}' \
    "$WORK/out" || fail "link 0-1 lost the file's bandwidth"
  grep -qF '{"ranks": [1, 2], "class": "net", "transport": "tcp", "bandwidth_gbps": 1.25, "latency_us": 30}' \
    "$WORK/out" || fail "link 1-2 lost the file's bandwidth"
  grep -qF '"node_of": [0, 1, 0]' "$WORK/out" || fail "node_of"
  grep -qF '"gpus": [{"pci": "0000:3b:00.0", "name": "cuda0", "numa": 1}]' "$WORK/out" || fail "host a's GPU"
  grep -qF '"gpus": []' "$WORK/out" || fail "host b has no GPU"
}

# Ranks of one host under different last-level caches count as apart
# (HCOMM_CACHES_APART=auto: they evict what they read in place from each
# other and store into each other past their caches), others not; the
# setting overrides the topology either way.
case_file_caches() {
  topo 3 --dump "$WORK/here.json"
  expect_rc 0
  # Rank 2 under another last-level cache than ranks 0 and 1.
  sed -E 's/"llc": -?[0-9]+/"llc": 0/g; s/("rank": 2, [^}]*"llc": )0/\11/' "$WORK/here.json" >"$WORK/caches.json"
  grep -qF '"rank": 2, "host": 0' "$WORK/caches.json" && grep -q '"rank": 2,[^}]*"llc": 1' "$WORK/caches.json" ||
    fail "could not place rank 2 under another cache: $(grep '"ranks"' "$WORK/caches.json")"
  export HCOMM_TRANSPORTS=shm HCOMM_DEBUG=INFO HCOMM_DEBUG_SUBSYS=INIT
  # apart <setting>: each rank's count of peers its caches are apart from, in rank order.
  apart() {
    HCOMM_CACHES_APART=$1 HCOMM_TOPO_FILE="$WORK/caches.json" topo 3
    expect_rc 0
    sed -nE 's/.*rank ([0-9]) maps the windows.*apart from ([0-9]) of them.*/\1 \2/p' "$WORK/err" | sort |
      cut -d' ' -f2 | tr -d '\n'
  }
  [ "$(apart auto)" = 112 ] || fail "auto: ranks 0 and 1 apart from rank 2, rank 2 from both: $(apart auto)"
  [ "$(apart off)" = 000 ] || fail "off: no rank apart from another"
  [ "$(apart on)" = 222 ] || fail "on: every rank apart from every peer"
  table "Link classes" | awk '{ print $1, $7 }' | tr '\n' ';' | grep -qx 'r0 0;r1 0;r2 1;' ||
    fail "the llc column: $(table "Link classes" | tr '\n' ';')"
}

case_file_errors() {
  printf '{"format": "hcomm-topology",\n "version": 1,\n "hosts": [,]}\n' >"$WORK/bad.json"
  HCOMM_TOPO_FILE="$WORK/bad.json" topo 3
  expect_rc 1
  grep -qF "topology file $WORK/bad.json: line 3, column 12: syntax error while parsing value - unexpected ','" \
    "$WORK/err" ||
    fail "no line and column for bad JSON"
  HCOMM_TOPO_FILE="$WORK/bad.json" topo 1
  expect_rc 1
  topo 2 --dump "$WORK/two.json"
  expect_rc 0
  HCOMM_TOPO_FILE="$WORK/two.json" topo 3
  expect_rc 1
  grep -qF "HCOMM_TOPO_FILE $WORK/two.json describes 2 ranks, this communicator has 3" "$WORK/err" ||
    fail "no message for a file of another size"
  topo 1 --dump "$WORK/no-such-folder/x.json"
  expect_rc 1
  grep -qF -- "--dump: cannot write $WORK/no-such-folder/x.json" "$WORK/err" || fail "no message for a bad --dump path"
  topo 1 --nosuch
  expect_rc 2
}

# A command line that cannot run: exit 2 before any communicator, one line
# that names what is wrong and the hint to --help.
case_bad_arguments() {
  local -a cases=(
    "The following argument was not expected: --nosuch|--nosuch"
    "The following argument was not expected: extra|--json extra"
    "--dump: 1 required FILE missing|--dump"
    "--transports: 1 required LIST missing|--json --transports"
    "--json takes no value|--json=yes"
  )
  usage_error_cases hcomm-topo topo_alone "${cases[@]}"
  topo_alone --help
  expect_rc 0
  expect_out "Usage: hcomm-topo [OPTIONS]"
  local want
  for want in "--json" "--dump FILE" "--transports LIST"; do
    grep -qF -- "$want" "$WORK/out" || fail "--help does not show $want"
  done
}

"case_$CASE" || exit 1
echo "PASS [$CASE]"
