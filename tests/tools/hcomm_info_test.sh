#!/usr/bin/env bash
# hcomm-info as a user and a script run it: --version, --parsable, the check
# of the HCOMM_* settings that are set, unknown HCOMM_* names, and a bad
# command line. One case per call:
#   hcomm_info_test.sh <hcomm-info> <project version> <folder of broken plugins> <case>
set -u

INFO=$1
VERSION=$2
FIXTURES=$3
CASE=$4
# shellcheck source=case_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/case_common.sh"
# The settings this test sets, and nothing else of the caller's HCOMM_*.
while read -r name; do unset "$name"; done < <(env | sed -n 's/^\(HCOMM_[A-Za-z0-9_]*\)=.*/\1/p')

# info [VAR=value...] -- [hcomm-info arguments...]: sets RC.
info() {
  local vars=()
  while [ "$1" != "--" ]; do vars+=("$1"); shift; done
  shift
  capture env "${vars[@]}" "$INFO" "$@"
}


case_version() {
  info -- --version
  expect_rc 0
  [ "$(cat "$WORK/out")" = "HComm $VERSION, plugin ABI $(sed -n 's/^plugin_abi://p' <("$INFO" --parsable))" ] ||
    fail "--version printed '$(cat "$WORK/out")', expected HComm $VERSION and the plugin ABI"
  info --
  expect_rc 0
  head -n1 "$WORK/out" | grep -q "^HComm $VERSION, plugin ABI [0-9]*\.[0-9]*$" || fail "the listing does not start with the version"
}

case_parsable() {
  info HCOMM_CHUNK_BYTES=64K -- --parsable
  expect_rc 0
  [ ! -s "$WORK/err" ] || fail "stderr is not empty"
  # Every line is key:value, the key made of known fields.
  bad=$(grep -Ev '^(version|plugin_abi|plugin:[a-z]+:[A-Za-z0-9_]+:(version|abi|status|path|error|algorithms)|setting:HCOMM_[A-Z0-9_]+:(type|owner|default|value|source|accepts|doc)):' "$WORK/out")
  [ -z "$bad" ] || fail "lines that are not key:value with a known key: $bad"
  expect_out "version:$VERSION"
  grep -qE '^plugin_abi:[0-9]+\.[0-9]+$' "$WORK/out" || fail "no plugin_abi line"
  for plugin in transport:tcp transport:shm algorithm:ring; do
    expect_out "plugin:$plugin:version:$VERSION"
    expect_out "plugin:$plugin:status:loaded"
    grep -qE "^plugin:$plugin:abi:[0-9]+\.[0-9]+$" "$WORK/out" || fail "no ABI for $plugin"
    grep -qE "^plugin:$plugin:path:/.*/libhcomm_${plugin/:/_}\.so$" "$WORK/out" || fail "no path for $plugin"
  done
  grep -qE '^plugin:algorithm:ring:algorithms:.*ring' "$WORK/out" || fail "no algorithms of the ring plugin"
  # A setting that is set, one that is not, and a plugin's.
  expect_out "setting:HCOMM_CHUNK_BYTES:default:512K"
  expect_out "setting:HCOMM_CHUNK_BYTES:value:64K"
  expect_out "setting:HCOMM_CHUNK_BYTES:source:environment"
  expect_out "setting:HCOMM_TIMEOUT:type:double"
  expect_out "setting:HCOMM_TIMEOUT:value:30"
  expect_out "setting:HCOMM_TIMEOUT:source:default"
  expect_out "setting:HCOMM_TIMEOUT:accepts:a number from 0.001 to 1000000"
  expect_out "setting:HCOMM_TCP_NSOCKS:owner:tcp"
  # Every setting hcomm-info lists for people is there for scripts.
  info --
  listed=$(grep -cE '^  HCOMM_[A-Z0-9_]+ ' "$WORK/out")
  info -- --parsable
  [ "$(grep -c ':default:' "$WORK/out")" -eq "$listed" ] || fail "$listed settings listed, not as many with --parsable"
  # A plugin that does not load: its status and its error.
  info HCOMM_PLUGIN_PATH="$FIXTURES" -- --parsable
  expect_rc 0
  expect_out "plugin:transport:wrongabi:status:error"
  expect_out "plugin:transport:wrongabi:abi:"
  grep -qE '^plugin:transport:wrongabi:error:.*ABI version 99\.0 unsupported' "$WORK/out" || fail "no error of wrongabi"
}

case_bad_setting() {
  info HCOMM_TIMEOUT=soon HCOMM_TCP_NSOCKS=99 HCOMM_CHUNK_BYTES=64K -- 
  expect_rc 1
  expect_err "hcomm-info: bad setting: HCOMM_TIMEOUT='soon' does not parse: expected a number from 0.001 to 1000000"
  expect_err "hcomm-info: bad setting: HCOMM_TCP_NSOCKS='99' is out of range: expected an integer from 1 to 16"
  expect_err "2 settings with a bad value"
  ! grep -q "HCOMM_CHUNK_BYTES" "$WORK/err" || fail "a good setting was reported"
  grep -q "^Settings" "$WORK/out" || fail "the listing was not printed"
  info HCOMM_DEBUG=LOUD -- --parsable
  expect_rc 1
  expect_err "hcomm-info: bad setting: HCOMM_DEBUG='LOUD' is not accepted: expected one of NONE, WARN, INFO, DEBUG, TRACE"
  expect_out "setting:HCOMM_DEBUG:error:HCOMM_DEBUG='LOUD' is not accepted: expected one of NONE, WARN, INFO, DEBUG, TRACE"
  info HCOMM_TIMEOUT=5 HCOMM_DEBUG=warn HCOMM_TCP_NSOCKS=4 -- --parsable
  expect_rc 0
  [ ! -s "$WORK/err" ] || fail "good settings drew a message"
}

case_unknown_setting() {
  info HCOMM_TIMOUT=5 HCOMM_FROBNICATE=1 HCOMM_TCP_NSOCKS=4 -- --parsable
  expect_rc 0
  expect_err "hcomm-info: unknown setting HCOMM_TIMOUT (communicators ignore it): did you mean HCOMM_TIMEOUT?"
  expect_err "hcomm-info: unknown setting HCOMM_FROBNICATE (communicators ignore it)"
  ! grep -q "HCOMM_FROBNICATE.*did you mean" "$WORK/err" || fail "a name far from every setting got a suggestion"
  ! grep -q "HCOMM_TCP_NSOCKS" "$WORK/err" || fail "a plugin's setting was called unknown"
  expect_out "setting:HCOMM_TIMOUT:unknown:HCOMM_TIMEOUT"
  expect_out "setting:HCOMM_FROBNICATE:unknown:"
}

case_bad_arguments() {
  info -- --bogus
  expect_rc 2
  expect_err "--bogus"
  info -- extra
  expect_rc 2
  info -- --help
  expect_rc 0
  grep -q -- "--parsable" "$WORK/out" || fail "--help does not name --parsable"
  grep -q -- "--version" "$WORK/out" || fail "--help does not name --version"
}

"case_$CASE" || exit 1
echo "PASS [$CASE]"
