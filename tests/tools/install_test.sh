#!/usr/bin/env bash
# Installs HComm into a fresh prefix, builds a program against it with
# find_package(HComm <major.minor>) and with pkg-config, runs both on 2 ranks,
# and checks that the installed hcomm-info finds the installed plugins; that
# every installed part carries the project's version; that C++ built with the
# compiler's default standard or C++17 gets the C++20 that hcomm.hpp needs
# from the imported target; and that hcomm-transport-check is installed
# without the tests.
#   install_test.sh <build dir> <project version> <source dir> [<CMake generator>]
set -euo pipefail
build=$1
version=$2
source=$3
generator=${4:-}
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
cmake --install "$build" --prefix "$prefix" > /dev/null
libdir=$(dirname "$(find "$prefix" -name 'libhcomm.so' | head -n1)")

echo "== the installed parts say version $version"
[ -f "$libdir/libhcomm.so.$version" ] || fail "no $libdir/libhcomm.so.$version: $(ls "$libdir")"
readelf -d "$libdir/libhcomm.so" | grep -q "SONAME.*\[libhcomm.so.${version%%.*}\]" ||
  fail "libhcomm's soname is not libhcomm.so.${version%%.*}: $(readelf -d "$libdir/libhcomm.so" | grep SONAME)"
grep -q "^#define HCOMM_VERSION_STRING \"$version\"$" "$prefix/include/hcomm/version.h" ||
  fail "the installed hcomm/version.h does not say $version"
[ "$("$prefix/bin/hcomm-info" --version | cut -d, -f1)" = "HComm $version" ] ||
  fail "the installed hcomm-info --version says '$("$prefix/bin/hcomm-info" --version)', not HComm $version"
PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config --exact-version="$version" hcomm ||
  fail "pkg-config --modversion hcomm says '$(PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config --modversion hcomm)', not $version"
[ -x "$prefix/bin/hcomm-transport-check" ] || fail "hcomm-transport-check is not installed"

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
# No C++ standard set: the imported target asks for the C++20 hcomm.hpp needs.
cat > "$prefix/app/CMakeLists.txt" << SRC
cmake_minimum_required(VERSION 3.22)
project(app CXX)
find_package(HComm ${version%.*} REQUIRED)
if(NOT HComm_VERSION STREQUAL "$version")
  message(FATAL_ERROR "find_package(HComm) found version \${HComm_VERSION}, not $version")
endif()
add_executable(app app.cpp)
target_link_libraries(app PRIVATE HComm::hcomm)
SRC
echo "== find_package(HComm ${version%.*} REQUIRED), the compiler's default C++ standard, then C++17"
for standard in "" 17; do
  rm -rf "$prefix/app/build"
  cmake -S "$prefix/app" -B "$prefix/app/build" -DCMAKE_PREFIX_PATH="$prefix" ${standard:+-DCMAKE_CXX_STANDARD=$standard} \
    > "$prefix/configure.log" 2>&1 || { cat "$prefix/configure.log"; fail "configuring the app against the installed HComm"; }
  cmake --build "$prefix/app/build" > "$prefix/build.log" 2>&1 ||
    { cat "$prefix/build.log"; fail "building the app with CMAKE_CXX_STANDARD='$standard'"; }
  "$prefix/bin/hcomm-run" -n 2 "$prefix/app/build/app"
done

export PKG_CONFIG_PATH="$libdir/pkgconfig"
# shellcheck disable=SC2046
g++ -std=c++20 ${CXXFLAGS:-} "$prefix/app/app.cpp" $(pkg-config --cflags --libs hcomm) ${LDFLAGS:-} -Wl,-rpath,"$libdir" -o "$prefix/app/app-pc"
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

echo "== examples/ on its own against the installed HComm"
cmake -S "$source/examples" -B "$prefix/examples" ${generator:+-G "$generator"} -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_C_FLAGS="-Wall -Wextra -Werror ${CFLAGS:-}" -DCMAKE_CXX_FLAGS="-Wall -Wextra -Werror ${CXXFLAGS:-}" > "$prefix/examples.log" 2>&1 &&
  cmake --build "$prefix/examples" >> "$prefix/examples.log" 2>&1 ||
  { cat "$prefix/examples.log"; fail "building examples/ against the installed HComm"; }
for example in allreduce allreduce_cxx; do
  "$prefix/bin/hcomm-run" -n 2 "$prefix/examples/hcomm_example_$example" || fail "hcomm_example_$example failed"
done

echo "== without the tests, hcomm-transport-check is still built and installed"
cmake -S "$source" -B "$prefix/notests" ${generator:+-G "$generator"} -DHCOMM_BUILD_TESTS=OFF > "$prefix/notests.log" 2>&1 ||
  { cat "$prefix/notests.log"; fail "configuring $source without the tests"; }
grep -rqsF '/bin/hcomm-transport-check"' "$prefix/notests" --include=cmake_install.cmake ||
  fail "a build without the tests does not install hcomm-transport-check"
echo "installed HComm works through find_package and pkg-config"
