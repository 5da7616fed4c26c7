#!/usr/bin/env bash
# A vendor's transport plugin against an installed HComm: installs the build
# into a fresh prefix, builds examples/vendor-transport out of tree with
# find_package(HComm), checks it with the installed hcomm-transport-check (2
# and 4 ranks), and runs an allreduce over it alone on 3 ranks with the
# installed hcomm-run and hcomm-perf (which checks every element).
#   vendor_plugin.sh <HComm build dir> <HComm source dir> [<CMake generator>]
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
unset HCOMM_PLUGIN_PATH HCOMM_TRANSPORTS

prefix=$work/hcomm
cmake --install "$build" --prefix "$prefix" > /dev/null || fail "cmake --install $build failed (build its default target first)"
plugin_dir=$(dirname "$(find "$prefix" -name 'libhcomm_transport_tcp.so' | head -n1)")

echo "== build the example against $prefix"
example=$work/example
cmake -S "$source/examples/vendor-transport" -B "$example" ${generator:+-G "$generator"} \
  -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_CXX_FLAGS=-Werror > "$work/configure.log" ||
  { cat "$work/configure.log"; fail "configuring the example against the installed HComm"; }
cmake --build "$example" > "$work/build.log" || { cat "$work/build.log"; fail "building the example"; }
plugin=$example/libhcomm_transport_example.so
[ -f "$plugin" ] || fail "the build made no $plugin"
# A plugin never links libhcomm: it is loaded into it, and checked without it.
if readelf -d "$plugin" | grep -q 'NEEDED.*libhcomm'; then fail "$plugin links libhcomm"; fi

echo "== hcomm-transport-check (2 and 4 ranks)"
"$prefix/bin/hcomm-transport-check" "$plugin" || fail "the example does not pass hcomm-transport-check"

echo "== hcomm-info finds it through HCOMM_PLUGIN_PATH"
info=$(HCOMM_PLUGIN_PATH=$example "$prefix/bin/hcomm-info")
grep -q "loaded .*$plugin" <<< "$info" || { echo "$info"; fail "hcomm-info does not load $plugin"; }
grep -q "HCOMM_EXAMPLE_MAX_SENDS" <<< "$info" || { echo "$info"; fail "hcomm-info does not list its setting"; }

echo "== allreduce over the example alone, 3 ranks"
# HCOMM_TRANSPORTS=example: no other transport may serve any pair.
HCOMM_PLUGIN_PATH=$example HCOMM_TRANSPORTS=example \
  "$prefix/bin/hcomm-run" -n 3 --timeout 120 "$prefix/bin/hcomm-perf" -c allreduce -b 8 -e 1M ||
  fail "the allreduce over the example failed"

echo "== cmake --install puts it beside HComm's plugins"
cmake --install "$example" > /dev/null
[ -f "$plugin_dir/libhcomm_transport_example.so" ] || fail "not installed into $plugin_dir"
info=$("$prefix/bin/hcomm-info")
grep -q "loaded .*$plugin_dir/libhcomm_transport_example.so" <<< "$info" ||
  { echo "$info"; fail "the installed hcomm-info does not find the installed example"; }

echo "the example transport builds against the installed HComm, passes the kit and carries an allreduce"
