#!/usr/bin/env bash
# Installs HComm into a fresh prefix, builds a program against it with
# find_package(HComm) and with pkg-config, runs both on 2 ranks, and checks
# that the installed hcomm-info finds the installed plugins.
set -euo pipefail
build=$1
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" > /dev/null
libdir=$(dirname "$(find "$prefix" -name 'libhcomm.so' | head -n1)")

mkdir -p "$prefix/app"
cat > "$prefix/app/app.cpp" << 'SRC'
#include <hcomm/hcomm.hpp>
#include <cstdio>
#include <vector>
int main() {
  auto comm = hcomm::Communicator::from_env();
  std::vector<int64_t> v(1001, comm.rank() + 1);
  comm.allreduce(std::span<int64_t>(v), HCOMM_SUM);
  int64_t n = comm.size(), want = n * (n + 1) / 2;
  for (int64_t x : v)
    if (x != want) return std::fprintf(stderr, "got %lld, expected %lld\n", (long long)x, (long long)want), 1;
  return 0;
}
SRC
cat > "$prefix/app/CMakeLists.txt" << 'SRC'
cmake_minimum_required(VERSION 3.22)
project(app CXX)
set(CMAKE_CXX_STANDARD 20)
find_package(HComm REQUIRED)
add_executable(app app.cpp)
target_link_libraries(app PRIVATE HComm::hcomm)
SRC
cmake -S "$prefix/app" -B "$prefix/app/build" -DCMAKE_PREFIX_PATH="$prefix" > /dev/null
cmake --build "$prefix/app/build" > /dev/null
"$prefix/bin/hcomm-run" -n 2 "$prefix/app/build/app"

export PKG_CONFIG_PATH="$libdir/pkgconfig"
# shellcheck disable=SC2046
g++ -std=c++20 "$prefix/app/app.cpp" $(pkg-config --cflags --libs hcomm) -Wl,-rpath,"$libdir" -o "$prefix/app/app-pc"
"$prefix/bin/hcomm-run" -n 2 "$prefix/app/app-pc"

info=$("$prefix/bin/hcomm-info")
for plugin in transport_tcp transport_shm algorithm_ring algorithm_tree algorithm_recursive; do
  grep -q "loaded .*$libdir/hcomm/libhcomm_$plugin.so" <<< "$info" || {
    echo "the installed hcomm-info does not load $libdir/hcomm/libhcomm_$plugin.so:"
    echo "$info"
    exit 1
  }
done
# The installed library never looks into the build tree: a plugin missing
# from the installation is not found there.
rm "$libdir/hcomm/libhcomm_algorithm_tree.so"
info=$("$prefix/bin/hcomm-info")
if grep -qF "$build" <<< "$info"; then
  echo "the installed hcomm-info finds plugins in the build tree $build:"
  echo "$info"
  exit 1
fi
echo "installed HComm works through find_package and pkg-config"
