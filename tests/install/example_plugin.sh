# Sourced by the tests of the example plugins against an installed HComm,
# after `set -euo pipefail` and with $build, $source and $generator set:
# installs the build into a fresh $prefix (removed at exit), with $plugin_dir
# where HComm's own plugins went, and gives fail and build_example.

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

# build_example <folder of examples/> <plugin file> [cmake -D arguments...]:
# builds it out of tree with find_package(HComm) into $example, and sets
# $plugin to the plugin it made, which must not link libhcomm (a plugin is
# loaded into it).
build_example() {
  local folder=$1 file=$2
  shift 2
  echo "== build examples/$folder against $prefix"
  example=$work/example
  cmake -S "$source/examples/$folder" -B "$example" ${generator:+-G "$generator"} -DCMAKE_PREFIX_PATH="$prefix" "$@" \
    > "$work/configure.log" || { cat "$work/configure.log"; fail "configuring the example against the installed HComm"; }
  cmake --build "$example" > "$work/build.log" || { cat "$work/build.log"; fail "building the example"; }
  plugin=$example/$file
  [ -f "$plugin" ] || fail "the build made no $plugin"
  if readelf -d "$plugin" | grep -q 'NEEDED.*libhcomm'; then fail "$plugin links libhcomm"; fi
}
