#!/usr/bin/env bash
# Packs MPICH's runtime (mpiexec.hydra, libmpich, the UCX it runs on) and
# the MPI benchmark built against it, against HComm's C API and against
# HComm's MPI face into one folder, for
# a machine without MPICH (the GPU host), where compare_mpi.sh then runs
# against it:
#
#   bash benchmarks/mpi/carry.sh [BUILD] [FOLDER]     (default: build, build-dev/mpi)
#   # there, with FOLDER.tar.xz and HComm's bundle (scripts/gpu-bundle.sh)
#   # carried, after tar -xJf FOLDER.tar.xz -C "$(dirname FOLDER)":
#   PATH=$FOLDER/bin:$PATH LD_LIBRARY_PATH=$FOLDER/lib:build-dev/deps:build-dev/lib \
#     MPIS=mpich BENCH_DIR=$FOLDER bash benchmarks/compare_mpi.sh build-dev
set -euo pipefail
build=$(realpath "${1:-build}")
out=${2:-build-dev/mpi}
root=$(cd "$(dirname "$0")/../.." && pwd)
rm -rf "$out"
mkdir -p "$out/bin" "$out/lib/ucx"
bench=$root/benchmarks/mpi/collective_bench.c
cflags=(-std=c11 -O2 -Wall -Wextra)
mpicc.mpich "${cflags[@]}" -o "$out/bench.mpich" "$bench"
# HComm's MPI face: its libmpi.so.12 is in BUILD/lib, which comes first for it alone.
"$build/bin/mpicc" "${cflags[@]}" -o "$out/bench.hcomm_mpi" "$bench"
# HComm's finds libhcomm through LD_LIBRARY_PATH there.
cc "${cflags[@]}" -DBENCH_HCOMM -I"$root/include" -I"$build/include" -o "$out/bench.hcomm" "$bench" \
  -L"$build/lib" -lhcomm
hydra=$(command -v mpiexec.hydra)
cp "$hydra" "$out/bin/mpiexec.mpich"
cp "$(dirname "$hydra")/hydra_pmi_proxy" "$out/bin/"
# Every library they load that is not the C library's, and UCX's cross-memory-attach module.
for program in "$out/bench.mpich" "$out/bin/mpiexec.mpich" "$out/bin/hydra_pmi_proxy"; do
  ldd "$program" | awk '$3 ~ /^\// && $1 !~ /^(libc|libm|libresolv|libpthread|libdl|librt)\.so|^ld-linux/ { print $3 }'
done | sort -u | xargs -I{} cp -L {} "$out/lib/"
ucx_modules=$(dirname "$(ldd "$out/bench.mpich" | awk '/libucs/ { print $3 }')")/ucx
cp -L "$ucx_modules/libuct_cma.so.0" "$out/lib/ucx/"
strip --strip-debug "$out"/bench.* "$out"/bin/* "$out"/lib/*.so* "$out"/lib/ucx/* 2>/dev/null || true
# libmpich alone is 40 MB: the folder travels packed, as FOLDER.tar.xz.
tar -cJf "$out.tar.xz" -C "$(dirname "$out")" "$(basename "$out")"
du -sh "$out" "$out.tar.xz"
