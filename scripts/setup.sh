#!/usr/bin/env bash
# Installs what a fresh Debian 12 machine lacks and builds HComm into build/
# (or the build folder of HCOMM_PRESET).
# Sourced by run-demo.sh and run-tests.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

packages=(build-essential cmake ninja-build pkg-config libboost-dev libgtest-dev iproute2 procps)
packages+=(libhwloc-dev)  # the topology module: CPU bindings, NUMA nodes, NICs
packages+=(libssl-dev)  # libcrypto's HMAC-SHA256: the handshakes' challenge and response
packages+=(libcli11-dev)  # CLI11: the tools' command lines
packages+=(nlohmann-json3-dev)  # nlohmann/json: topology files (HCOMM_TOPO_FILE, hcomm-topo) and hcomm-perf --json
packages+=(python3)  # tests/tools reads hcomm-perf's --json file back with a JSON reader
packages+=(libpmix-dev openmpi-bin)  # the PMIx bootstrap; tests/launch starts ranks with mpirun
packages+=(libibverbs-dev rdma-core)  # the verbs transport (skipped without libibverbs)
packages+=(libfabric-dev libfabric-bin)  # the ofi transport (skipped without libfabric); fi_pingpong
packages+=(libucx-dev)  # the ucx transport (skipped without UCX)
packages+=(mpich libmpich-dev)  # tests/mpi: the MPI tests also on MPICH, and MPICH-built binaries on HComm's libmpi
packages+=(clang libclang-rt-14-dev)  # scripts/run-fuzz.sh: libFuzzer targets (tests/fuzz)
packages+=(slurmctld slurmd slurm-client munge)  # tests/launch starts a one-host Slurm cluster for srun
packages+=(libjemalloc2 libgoogle-perftools4)  # tests/allocators preloads jemalloc and tcmalloc (skipped without)
packages+=(python3-matplotlib)  # benchmarks/plot.py: PNG plots of the benchmarks' JSON
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "installing: ${missing[*]}"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

werror=OFF
[ "${CI:-}" = "true" ] && werror=ON
# HCOMM_PRESET (CMakePresets.json): default builds build/, asan build-asan/, tsan build-tsan/.
preset=${HCOMM_PRESET:-default}
cmake --preset "$preset" -DHCOMM_WERROR=$werror
cmake --build --preset "$preset" -j "$(nproc)"
