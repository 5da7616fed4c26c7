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
# shellcheck source=example_plugin.sh
source "$(dirname "${BASH_SOURCE[0]}")/example_plugin.sh"
build_example algorithm-plugin libhcomm_algorithm_naive.so -DCMAKE_C_FLAGS="-Wall -Wextra -Werror"

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
