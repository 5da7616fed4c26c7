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
# shellcheck source=example_plugin.sh
source "$(dirname "${BASH_SOURCE[0]}")/example_plugin.sh"
build_example vendor-transport libhcomm_transport_example.so -DCMAKE_CXX_FLAGS=-Werror

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
