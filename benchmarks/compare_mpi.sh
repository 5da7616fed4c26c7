#!/usr/bin/env bash
# HComm against Open MPI and MPICH on this machine: one collective of
# float32 (sum where it reduces; allreduce unless COLL says), 2 ranks (or
# NRANKS), 8 B to 64 MiB by powers of 2, printed as one markdown table.
#
#   benchmarks/compare_mpi.sh [BUILD]      (BUILD: HComm's build folder, default build)
#
# All three run benchmarks/mpi/collective_bench.c, the same timing loop (a
# second of small calls to settle, then per size WARMUP untimed calls and
# the median of ITERS calls timed one by one):
# HComm through its C API under hcomm-run over shared memory, with the
# selector's default choice of algorithm; the MPIs compiled with their own
# mpicc and started by their own launchers, with their default transports.
# hcomm-perf then runs the same sweep with every element checked; its columns
# are its own statistic (the mean of the timed calls, for reference), its
# wrong elements, and the algorithm the library chose.
#
# Installs nothing; needs Open MPI (Debian: openmpi-bin libopenmpi-dev) and
# MPICH (mpich libmpich-dev). Environment: WARMUP (10), ITERS (50),
# MAX_BYTES (64M), ROUNDS (3), INPUTS (reused: the same input every call;
# fresh: rewritten before each call, untimed, as a training step's gradients
# are; step: rewritten inside the timed part, the time of such a step; see
# the benchmark), BUFFERS (malloc, or alloc_mem: each library's
# allocator for communication buffers, MPI_Alloc_mem and hcomm_mem_alloc,
# whose memory HComm's ranks map: its zero-copy path), COLL (allreduce,
# reduce_scatter (MPI_Reduce_scatter_block), allgather, alltoall, broadcast,
# reduce, gather, scatter; sizes as hcomm-perf counts them: each rank's block
# where the collective has one per rank), ROOT (0: the rooted collectives'
# root), NRANKS (2). Run it on a quiet machine: small sizes are sensitive to
# load.
set -euo pipefail

build=$(realpath "${1:-build}")
root=$(cd "$(dirname "$0")/.." && pwd)
warmup=${WARMUP:-10}
rounds=${ROUNDS:-3}
iters=${ITERS:-50}
max_bytes=${MAX_BYTES:-64M}
inputs=${INPUTS:-reused}
buffers=${BUFFERS:-malloc}
coll=${COLL:-allreduce}
nranks=${NRANKS:-2}
coll_root=${ROOT:-0}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for tool in "$build/bin/hcomm-run" "$build/bin/hcomm-perf" "$build/lib/libhcomm.so"; do
  [[ -e $tool ]] || { echo "compare_mpi.sh: $tool is missing: build HComm first (cmake --build $build)" >&2; exit 1; }
done
missing=()
command -v mpicc.openmpi >/dev/null && command -v mpirun.openmpi >/dev/null || missing+=(openmpi-bin libopenmpi-dev)
command -v mpicc.mpich >/dev/null && command -v mpiexec.mpich >/dev/null || missing+=(mpich libmpich-dev)
if ((${#missing[@]})); then
  echo "compare_mpi.sh: missing MPI installations; on Debian: apt-get install ${missing[*]}" >&2
  exit 1
fi

bench=$root/benchmarks/mpi/collective_bench.c
args=(8 "$max_bytes" "$warmup" "$iters" "$inputs" "$buffers" "$coll" "$coll_root")
case $coll in
  allreduce | reduce_scatter | allgather | alltoall | broadcast | reduce | gather | scatter) ;;
  *) echo "compare_mpi.sh: COLL=$coll: expected allreduce, reduce_scatter, allgather, alltoall, broadcast," \
    "reduce, gather or scatter" >&2; exit 2 ;;
esac
[[ $coll_root =~ ^[0-9]+$ ]] && ((coll_root < nranks)) ||
  { echo "compare_mpi.sh: ROOT=$coll_root: expected a rank from 0 to $((nranks - 1))" >&2; exit 2; }
case $buffers in
  malloc) perf_buffers=malloc ;;
  alloc_mem) perf_buffers=alloc ;;
  *) echo "compare_mpi.sh: BUFFERS=$buffers: expected malloc or alloc_mem" >&2; exit 2 ;;
esac
perf_args=(--buffers "$perf_buffers" -r "$coll_root")
[[ $inputs == reused ]] || perf_args+=(--fresh-inputs)
cflags=(-std=c11 -O2 -Wall -Wextra)
mpicc.openmpi "${cflags[@]}" -o "$work/bench.openmpi" "$bench"
mpicc.mpich "${cflags[@]}" -o "$work/bench.mpich" "$bench"
cc "${cflags[@]}" -DBENCH_HCOMM -I"$root/include" -I"$build/include" -o "$work/bench.hcomm" "$bench" -L"$build/lib" -lhcomm \
  -Wl,-rpath,"$build/lib"

# Open MPI refuses root unless told, and ranks bound to cores would differ from the others' placement.
ompi_flags=(--bind-to none --oversubscribe)
[[ $(id -u) -eq 0 ]] && ompi_flags+=(--allow-run-as-root)

# run NAME COMMAND...: the command's output in $work/NAME; a failure stops the comparison.
run() {
  local name=$1
  shift
  "$@" >"$work/$name" 2>"$work/$name.err" || {
    echo "compare_mpi.sh: the $name run failed:" >&2
    cat "$work/$name.err" >&2
    exit 1
  }
}
# ROUNDS rounds, the three libraries in turn within each, so that a slow
# spell of the machine hits them alike; per size, each library's best round.
for ((round = 1; round <= rounds; ++round)); do
  run hcomm.$round env HCOMM_TRANSPORTS=shm "$build/bin/hcomm-run" -n "$nranks" "$work/bench.hcomm" "${args[@]}"
  run openmpi.$round mpirun.openmpi "${ompi_flags[@]}" -n "$nranks" "$work/bench.openmpi" "${args[@]}"
  run mpich.$round mpiexec.mpich -n "$nranks" "$work/bench.mpich" "${args[@]}"
done
run perf env HCOMM_TRANSPORTS=shm "$build/bin/hcomm-run" -n "$nranks" "$build/bin/hcomm-perf" -c "$coll" -d float32 -o sum \
  -b 8 -e "$max_bytes" -f 2 -w "$warmup" -n "$iters" "${perf_args[@]}"

echo "Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(uname -r);" \
  "load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "Date: $(date -u +%Y-%m-%dT%H:%MZ); $(mpirun.openmpi --version | head -1);" \
  "$(mpichversion 2>/dev/null | sed -n 's/^MPICH Version:[[:space:]]*//p' | sed 's/^/MPICH /')"
echo "$nranks ranks, $coll of float32 (sum, root $coll_root where it has one), $inputs inputs, $buffers buffers; times in" \
  "microseconds, the median of $iters calls" \
  "after $warmup warm-ups (the slowest rank's), the best of $rounds rounds that run the three in turn."
echo
echo "| size (B) | HComm | Open MPI | MPICH | HComm / faster MPI | hcomm-perf mean (wrong) | algorithm |"
echo "| ---: | ---: | ---: | ---: | ---: | ---: | --- |"
# Rows of each run, in sweep order: size and median (the benchmark); size,
# mean, wrong elements and algorithm (hcomm-perf).
rows() { awk '!/^#/ { if (!($1 in best) || $2 < best[$1]) best[$1] = $2; if (!seen[$1]++) order[++n] = $1 }
              END { for (i = 1; i <= n; ++i) print order[i], best[order[i]] }' "$work/$1".*; }
paste -d' ' <(rows hcomm) <(rows openmpi) <(rows mpich) <(awk '!/^#/ && NF >= 9 { print $1, $6, $9, (NF >= 10 ? $10 : "-") }' "$work/perf") |
  awk '$1 != $3 || $1 != $5 || $1 != $7 { print "compare_mpi.sh: the runs swept different sizes: " $0 > "/dev/stderr"; exit 1 }
       { faster = $4 < $6 ? $4 : $6
         printf "| %s | %.2f | %.2f | %.2f | %.2f | %.2f (%s) | %s |\n", $1, $2, $4, $6, $2 / faster, $8, $9, $10 }'
