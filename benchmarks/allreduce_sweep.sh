#!/usr/bin/env bash
# Allreduce sweeps (float32 sum, 8 B to 64 MiB) on 2 and 4 ranks over shm and
# tcp, written as markdown tables. Usage: benchmarks/allreduce_sweep.sh [BUILD]
set -euo pipefail
build=${1:-build}
cd "$(dirname "$0")/.."
echo "Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(uname -r)"
echo "Date: $(date -u +%Y-%m-%d)"
for n in 2 4; do
  for t in shm tcp; do
    cmd="HCOMM_TRANSPORTS=$t $build/bin/hcomm-run -n $n $build/bin/hcomm-perf -b 8 -e 64M -f 2 -w 5 -n 20"
    echo
    echo "### $n ranks, $t"
    echo
    echo "\`$cmd\`"
    echo
    echo "| size (B) | time (us) | algbw (GB/s) | busbw (GB/s) | wrong |"
    echo "| ---: | ---: | ---: | ---: | ---: |"
    env HCOMM_TRANSPORTS=$t "$build/bin/hcomm-run" -n $n "$build/bin/hcomm-perf" -b 8 -e 64M -f 2 -w 5 -n 20 |
      awk '!/^#/ && NF >= 9 { printf "| %s | %s | %s | %s | %s |\n", $1, $6, $7, $8, $9 }'
  done
done
