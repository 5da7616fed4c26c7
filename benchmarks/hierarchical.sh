#!/usr/bin/env bash
# Hierarchical against flat COLL (allreduce) on 2 emulated hosts x RANKS_PER_HOST
# ranks (default 2): network namespaces (tests/hosts/hosts.sh) whose links tc
# shapes to RATE, shared memory inside each host. Runs `hcomm-perf --sweep-algos` (every algorithm
# forced in turn, then the library's choice, every element checked) and
# prints its table, then per size the best flat algorithm, the best
# hierarchical one, and their ratio.
#
#   sudo benchmarks/hierarchical.sh [BUILD] [RATE]   (default: build, 1gbit)
#
# Environment: COLL (allreduce), MAX_BYTES (64M), WARMUP (2), ITERS (5), ROUNDS (1),
# RANKS_PER_HOST (2). Needs root.
set -euo pipefail

build=$(realpath "${1:-build}")
rate=${2:-1gbit}
root=$(cd "$(dirname "$0")/.." && pwd)
source "$root/tests/hosts/hosts.sh"
if ! why=$(hosts_supported); then
  echo "hierarchical.sh: $why" >&2
  exit 1
fi

hosts_up 2 "$rate"
export HCOMM_TIMEOUT=120
per_host=${RANKS_PER_HOST:-2}
hosts_run "$per_host" 3000 "$build/bin/hcomm-perf" -c "${COLL:-allreduce}" -b 8 -e "${MAX_BYTES:-64M}" -f 2 -w "${WARMUP:-2}" \
  -n "${ITERS:-5}" --sweep-algos --rounds "${ROUNDS:-1}"
if [ "$RC" -ne 0 ]; then
  echo "hierarchical.sh: the sweep failed (exit status $RC)" >&2
  cat "$HOSTS_DIR"/err.* >&2
  exit 1
fi

echo "Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(uname -r);" \
  "load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "Date: $(date -u +%Y-%m-%dT%H:%MZ); ${COLL:-allreduce}, 2 hosts x $per_host ranks, links shaped to $rate (tc tbf, both directions)"
echo
cat "$HOSTS_DIR/out.0"
echo
# Columns of the sweep: size, count, type, redop, root, one per algorithm,
# auto's algorithm and time, wrong. The header's names say which is which.
awk '
  /^# +size\(B\)/ { for (i = 3; i <= NF; ++i) name[i - 1] = $i; n = NF - 1; next }
  /^#/ || NF == 0 { next }
  {
    flat = ""; hier = ""
    for (i = 6; i <= n - 3; ++i) {
      if ($i == "-") continue
      if (name[i] ~ /^hier_/) { if (hier == "" || $i + 0 < hier + 0) { hier = $i; hname = name[i] } }
      else if (flat == "" || $i + 0 < flat + 0) { flat = $i; fname = name[i] }
    }
    if (!header++) {
      print "| size (B) | best flat (us) | algorithm | best hierarchical (us) | algorithm | flat / hierarchical | auto (us) |"
      print "| ---: | ---: | --- | ---: | --- | ---: | --- |"
    }
    printf "| %s | %s | %s | %s | %s | %s | %s |\n", $1, flat, fname, hier == "" ? "-" : hier,
      hier == "" ? "-" : hname, hier == "" ? "-" : sprintf("%.2f", flat / hier), $(NF - 2) " " $(NF - 1)
  }' "$HOSTS_DIR/out.0"
