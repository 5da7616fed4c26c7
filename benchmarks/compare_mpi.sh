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
# selector's default choice of algorithm; HComm through its MPI face
# (mpi_compat: compiled with HComm's mpicc, unchanged, the same ranks and
# transport), whose difference from the first is the MPI layer's own cost;
# the MPIs compiled with their own mpicc and started by their own launchers,
# with their default transports.
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
# root), NRANKS (2), JSON (unset: none; a path: also write the table there
# as JSON, below), CFLAGS and LDFLAGS (added to the HComm build of the
# benchmark; a sanitized libhcomm needs the sanitizer's flags there),
# HCOMM_MPI (1: also HComm's MPI face, where BUILD has its mpicc; 0: not), MPIS
# ("openmpi mpich": the MPIs to compare against; a missing one's column is
# "-"), BENCH_DIR (unset: compile the benchmark here; a folder: take
# bench.hcomm, bench.hcomm_mpi, bench.openmpi and bench.mpich built beforehand, for a
# machine without the MPIs' compilers, as benchmarks/mpi/carry.sh packs
# them), MPIEXEC_MPICH (mpiexec.mpich) and MPIRUN_OPENMPI (mpirun.openmpi):
# their launchers. Run it on a quiet machine: small sizes are sensitive to load.
#
# JSON=PATH writes one object (benchmarks/plot.py plots it):
#   {"schema": "hcomm-compare-mpi/1",
#    "command": the command line, with the settings above that were set,
#    "date": "2026-12-07T10:00Z" (UTC),
#    "commit": `git describe --always --dirty` of the build's source tree
#              (CMakeCache.txt's HComm_SOURCE_DIR), or null,
#    "machine": {"cores": 2, "cpu": "...", "kernel": "...", "load_average": [1.0, 1.1, 1.2]},
#    "libraries": {"openmpi": "mpirun.openmpi (OpenRTE) 4.1.4", "mpich": "MPICH 4.0.2"},
#    "settings": {"collective", "ranks", "root", "inputs", "buffers", "warmup", "iters", "rounds", "max_bytes"},
#    "rows": [{"collective": "allreduce", "ranks": 2, "inputs": "reused", "buffers": "malloc",
#              "size_bytes": 8, "hcomm_us": 0.44, "openmpi_us": 0.68, "mpich_us": 1.31,
#              "hcomm_over_faster_mpi": 0.65, "hcomm_mpi_us": 0.47, "hcomm_mpi_over_faster_mpi": 0.69,
#              "hcomm_perf_mean_us": 0.55, "wrong": 0, "algorithm": "one_shot"}, ...]}
# Times are the markdown table's (the best round's median, us); "wrong" and
# "algorithm" are hcomm-perf's, null where it printed none; a library not
# run has null times.
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
json=${JSON:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for tool in "$build/bin/hcomm-run" "$build/bin/hcomm-perf" "$build/lib/libhcomm.so"; do
  [[ -e $tool ]] || { echo "compare_mpi.sh: $tool is missing: build HComm first (cmake --build $build)" >&2; exit 1; }
done
read -ra mpis <<<"${MPIS:-openmpi mpich}"
mpirun_openmpi=${MPIRUN_OPENMPI:-mpirun.openmpi}
mpiexec_mpich=${MPIEXEC_MPICH:-mpiexec.mpich}
bench_dir=${BENCH_DIR:-}
if [[ ${HCOMM_MPI:-1} == 1 ]] && { [[ -x $build/bin/mpicc ]] || [[ -x $bench_dir/bench.hcomm_mpi ]]; }; then
  mpis=(hcomm_mpi "${mpis[@]}")
fi
uses() { [[ " ${mpis[*]} " == *" $1 "* ]]; }
missing=()
for mpi in "${mpis[@]}"; do
  case $mpi in
    openmpi) launcher=$mpirun_openmpi compiler=mpicc.openmpi packages=(openmpi-bin libopenmpi-dev) ;;
    mpich) launcher=$mpiexec_mpich compiler=mpicc.mpich packages=(mpich libmpich-dev) ;;
    hcomm_mpi) continue ;;
    *) echo "compare_mpi.sh: MPIS names '$mpi': expected openmpi and/or mpich" >&2; exit 2 ;;
  esac
  command -v "$launcher" >/dev/null && { [[ -n $bench_dir ]] || command -v "$compiler" >/dev/null; } ||
    missing+=("${packages[@]}")
done
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
if [[ -n $json ]]; then
  [[ ! -d $json ]] || { echo "compare_mpi.sh: JSON=$json is a folder: give a file's path" >&2; exit 2; }
  json_dir=$(dirname "$json")
  [[ -d $json_dir && -w $json_dir ]] ||
    { echo "compare_mpi.sh: JSON=$json: cannot write into $json_dir (missing or not writable)" >&2; exit 2; }
fi
case $buffers in
  malloc) perf_buffers=malloc ;;
  alloc_mem) perf_buffers=alloc ;;
  *) echo "compare_mpi.sh: BUFFERS=$buffers: expected malloc or alloc_mem" >&2; exit 2 ;;
esac
perf_args=(--buffers "$perf_buffers" -r "$coll_root")
[[ $inputs == reused ]] || perf_args+=(--fresh-inputs)
if [[ -n $bench_dir ]]; then
  for lib in hcomm "${mpis[@]}"; do
    [[ -x $bench_dir/bench.$lib ]] || { echo "compare_mpi.sh: BENCH_DIR=$bench_dir has no bench.$lib" >&2; exit 1; }
    cp "$bench_dir/bench.$lib" "$work/"
  done
else
  cflags=(-std=c11 -O2 -Wall -Wextra)
  uses hcomm_mpi && "$build/bin/mpicc" "${cflags[@]}" -o "$work/bench.hcomm_mpi" "$bench"
  uses openmpi && mpicc.openmpi "${cflags[@]}" -o "$work/bench.openmpi" "$bench"
  uses mpich && mpicc.mpich "${cflags[@]}" -o "$work/bench.mpich" "$bench"
  read -ra hcomm_cflags <<<"${CFLAGS:-}"
  read -ra hcomm_ldflags <<<"${LDFLAGS:-}"
  cc "${cflags[@]}" "${hcomm_cflags[@]}" -DBENCH_HCOMM -I"$root/include" -I"$build/include" -o "$work/bench.hcomm" \
    "$bench" -L"$build/lib" -lhcomm -Wl,-rpath,"$build/lib" "${hcomm_ldflags[@]}"
fi

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
  uses hcomm_mpi && run hcomm_mpi.$round env HCOMM_TRANSPORTS=shm LD_LIBRARY_PATH="$build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    "$build/bin/hcomm-run" -n "$nranks" "$work/bench.hcomm_mpi" "${args[@]}"
  uses openmpi && run openmpi.$round "$mpirun_openmpi" "${ompi_flags[@]}" -n "$nranks" "$work/bench.openmpi" "${args[@]}"
  uses mpich && run mpich.$round "$mpiexec_mpich" -n "$nranks" "$work/bench.mpich" "${args[@]}"
done
run perf env HCOMM_TRANSPORTS=shm "$build/bin/hcomm-run" -n "$nranks" "$build/bin/hcomm-perf" -c "$coll" -d float32 -o sum \
  -b 8 -e "$max_bytes" -f 2 -w "$warmup" -n "$iters" "${perf_args[@]}"

cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)
read -r load1 load5 load15 _ </proc/loadavg
date=$(date -u +%Y-%m-%dT%H:%MZ)
openmpi_version="not run"
uses openmpi && openmpi_version=$("$mpirun_openmpi" --version | head -1)
mpich_version="not run"
uses mpich && mpich_version=MPICH\ $("$mpiexec_mpich" --version | sed -n 's/^[[:space:]]*Version:[[:space:]]*//p' | head -1)
echo "Machine: $(nproc) cores, $cpu, $(uname -r);" "load average $load1 $load5 $load15"
echo "Date: $date; $openmpi_version;" "$mpich_version"
echo "$nranks ranks, $coll of float32 (sum, root $coll_root where it has one), $inputs inputs, $buffers buffers; times in" \
  "microseconds, the median of $iters calls" \
  "after $warmup warm-ups (the slowest rank's), the best of $rounds rounds that run the three in turn."
echo
# Rows of each run, in sweep order: size and median (the benchmark); size,
# mean, wrong elements and algorithm (hcomm-perf).
# A library not run gives HComm's sizes with "-".
rows() {
  local files=() round
  for ((round = 1; round <= rounds; ++round)); do [[ -e $work/$1.$round ]] && files+=("$work/$1.$round"); done
  ((${#files[@]})) || { rows hcomm | awk '{ print $1, "-" }'; return; }
  awk '!/^#/ { if (!($1 in best) || $2 < best[$1]) best[$1] = $2; if (!seen[$1]++) order[++n] = $1 }
       END { for (i = 1; i <= n; ++i) print order[i], best[order[i]] }' "${files[@]}"
}
# The table's rows: size, HComm, Open MPI, MPICH, hcomm-perf mean, wrong,
# algorithm, HComm's MPI face.
paste -d' ' <(rows hcomm) <(rows openmpi) <(rows mpich) <(awk '!/^#/ && NF >= 9 { print $1, $6, $9, (NF >= 10 ? $10 : "-") }' "$work/perf") <(rows hcomm_mpi) |
  awk '$1 != $3 || $1 != $5 || $1 != $7 || $1 != $11 { print "compare_mpi.sh: the runs swept different sizes: " $0 > "/dev/stderr"; exit 1 }
       { print $1, $2, $4, $6, $8, $9, $10, $12 }' >"$work/table"
echo "| size (B) | HComm | HComm's MPI | Open MPI | MPICH | HComm / faster MPI | HComm's MPI / faster MPI | hcomm-perf mean (wrong) | algorithm |"
echo "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"
awk 'function faster() { return $3 == "-" ? $4 : $4 == "-" ? $3 : $3 < $4 ? $3 : $4 }
     function us(v) { return v == "-" ? "-" : sprintf("%.2f", v) }
     function ratio(v) { return v == "-" ? "-" : sprintf("%.2f", v / faster()) }
     { printf "| %s | %.2f | %s | %s | %s | %.2f | %s | %.2f (%s) | %s |\n", $1, $2, us($8), us($3), us($4), $2 / faster(),
         ratio($8), $5, $6, $7 }' "$work/table"

[[ -n $json ]] || exit 0
# json_string TEXT: TEXT as a JSON string (quotes, backslashes and control characters escaped).
json_string() {
  local s=$1
  s=${s//\\/\\\\}
  s=${s//\"/\\\"}
  s=${s//$'\t'/\\t}
  s=${s//$'\n'/\\n}
  s=${s//$'\r'/}
  printf '"%s"' "$s"
}
command_line=""
for setting in WARMUP ITERS MAX_BYTES ROUNDS INPUTS BUFFERS COLL ROOT NRANKS JSON MPIS HCOMM_MPI; do
  [[ -n ${!setting+set} ]] && command_line+="$setting=${!setting} "
done
command_line+="bash $0${1:+ $1}"
commit=null
source_dir=$(sed -n 's/^HComm_SOURCE_DIR:STATIC=//p' "$build/CMakeCache.txt" 2>/dev/null || true)
if [[ -n $source_dir ]] && described=$(git -C "$source_dir" describe --always --dirty 2>/dev/null); then
  commit=$(json_string "$described")
fi
{
  printf '{\n  "schema": "hcomm-compare-mpi/1",\n'
  printf '  "command": %s,\n' "$(json_string "$command_line")"
  printf '  "date": %s,\n' "$(json_string "$date")"
  printf '  "commit": %s,\n' "$commit"
  printf '  "machine": {"cores": %d, "cpu": %s, "kernel": %s, "load_average": [%s, %s, %s]},\n' \
    "$(nproc)" "$(json_string "$cpu")" "$(json_string "$(uname -r)")" "$load1" "$load5" "$load15"
  printf '  "libraries": {"openmpi": %s, "mpich": %s},\n' "$(json_string "$openmpi_version")" "$(json_string "$mpich_version")"
  printf '  "settings": {"collective": "%s", "ranks": %d, "root": %d, "inputs": "%s", "buffers": "%s", ' \
    "$coll" "$nranks" "$coll_root" "$inputs" "$buffers"
  printf '"warmup": %d, "iters": %d, "rounds": %d, "max_bytes": %s},\n' "$warmup" "$iters" "$rounds" "$(json_string "$max_bytes")"
  printf '  "rows": ['
  awk -v coll="$coll" -v nranks="$nranks" -v inputs="$inputs" -v buffers="$buffers" '
    function num(v) { return v ~ /^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$/ ? v : "null" }
    { faster = $3 == "-" ? $4 : $4 == "-" ? $3 : $3 < $4 ? $3 : $4
      printf "%s\n    {\"collective\": \"%s\", \"ranks\": %d, \"inputs\": \"%s\", \"buffers\": \"%s\", \"size_bytes\": %s, ", \
        NR == 1 ? "" : ",", coll, nranks, inputs, buffers, num($1)
      printf "\"hcomm_us\": %s, \"openmpi_us\": %s, \"mpich_us\": %s, \"hcomm_over_faster_mpi\": %s, ", \
        num($2), num($3), num($4), (faster > 0 ? sprintf("%.4f", $2 / faster) : "null")
      printf "\"hcomm_mpi_us\": %s, \"hcomm_mpi_over_faster_mpi\": %s, ", \
        num($8), (faster > 0 && $8 != "-" ? sprintf("%.4f", $8 / faster) : "null")
      printf "\"hcomm_perf_mean_us\": %s, \"wrong\": %s, \"algorithm\": %s}", \
        num($5), num($6), ($7 == "-" || $7 == "" ? "null" : "\"" $7 "\"") }' "$work/table"
  printf '\n  ]\n}\n'
} >"$work/json"
mv "$work/json" "$json"
echo "compare_mpi.sh: wrote $json" >&2
