#!/usr/bin/env bash
# An algorithm plugin against an installed HComm: installs the build into a
# fresh prefix, builds examples/algorithm-plugin out of tree with
# find_package(HComm), and runs its allgather check on 3 ranks with the
# plugin loaded through HCOMM_PLUGIN_PATH and forced by HCOMM_TUNE, then
# installed into HComm's plugin folder.
#   algorithm_plugin.sh <HComm build dir> <HComm source dir> [<CMake generator>]
set -euo pipefail
build=$1
source=$2
generator=${3:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# Loopback only, as every test of the project.
export HCOMM_BOOTSTRAP_ADDR=127.0.0.1 HCOMM_TCP_IF_ADDR=127.0.0.1 HCOMM_TIMEOUT=60
unset HCOMM_PLUGIN_PATH HCOMM_TRANSPORTS HCOMM_TUNE

prefix=$work/hcomm
cmake --install "$build" --prefix "$prefix" > /dev/null || fail "cmake --install $build failed (build its default target first)"
plugin_dir=$(dirname "$(find "$prefix" -name 'libhcomm_algorithm_ring.so' | head -n1)")

echo "== build the example against $prefix"
example=$work/example
cmake -S "$source/examples/algorithm-plugin" -B "$example" ${generator:+-G "$generator"} \
  -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_FLAGS="-Wall -Wextra -Werror" > "$work/configure.log" ||
  { cat "$work/configure.log"; fail "configuring the example against the installed HComm"; }
cmake --build "$example" > "$work/build.log" || { cat "$work/build.log"; fail "building the example"; }
plugin=$example/libhcomm_algorithm_naive.so
[ -f "$plugin" ] || fail "the build made no $plugin"
# A plugin never links libhcomm: it is loaded into it.
if readelf -d "$plugin" | grep -q 'NEEDED.*libhcomm'; then fail "$plugin links libhcomm"; fi

echo "== hcomm-info finds it through HCOMM_PLUGIN_PATH"
info=$(HCOMM_PLUGIN_PATH=$example "$prefix/bin/hcomm-info")
grep -q "loaded .*$plugin" <<< "$info" || { echo "$info"; fail "hcomm-info does not load $plugin"; }
grep -q "algorithms: naive" <<< "$info" || { echo "$info"; fail "hcomm-info does not list its algorithm"; }

echo "== allgathers forced onto it, 3 ranks"
HCOMM_PLUGIN_PATH=$example HCOMM_TUNE=allgather:@naive \
  "$prefix/bin/hcomm-run" -n 3 --timeout 120 "$example/hcomm_example_allgather_check" naive ||
  fail "the allgather check over the example failed"

echo "== cmake --install puts it beside HComm's plugins"
cmake --install "$example" > /dev/null
[ -f "$plugin_dir/libhcomm_algorithm_naive.so" ] || fail "not installed into $plugin_dir"
HCOMM_TUNE=allgather:@naive "$prefix/bin/hcomm-run" -n 2 --timeout 120 "$example/hcomm_example_allgather_check" naive ||
  fail "the installed example does not serve allgather"

echo "the example algorithm builds against the installed HComm and serves allgathers"
