#!/usr/bin/env bash
# hcomm-transport-check's command line, one case per call:
#   transport_check_cli_test.sh <hcomm-transport-check> <a transport plugin> <case>
set -u

CHECK=$1
PLUGIN=$2
CASE=$3
# shellcheck source=../tools/case_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../tools/case_common.sh"

check() {
  capture "$CHECK" "$@"
}

# A command line that cannot run: exit 2 before any test, one line that
# names what is wrong, then the hint to --help.
case_bad_arguments() {
  local -a cases=(
    "PLUGIN.so is required|"
    "PLUGIN.so is required|--ranks 2"
    "The following argument was not expected: --bogus|--bogus $PLUGIN"
    "The following argument was not expected: second.so|$PLUGIN second.so"
    "--ranks: 1 required N missing|$PLUGIN --ranks"
    "--ranks: expected an integer from 2 to 64, got '1'|--ranks 1 $PLUGIN"
    "--ranks: expected an integer from 2 to 64, got '65'|--ranks=65 $PLUGIN"
    "--timeout: expected seconds from 1 to 3600, got '0.5'|--timeout 0.5 $PLUGIN"
    "--timeout: expected seconds from 1 to 3600, got '3601'|--timeout 3601 $PLUGIN"
    "--seed: expected an unsigned 64-bit integer, got '-1'|--seed -1 $PLUGIN"
    "--seed: expected an unsigned 64-bit integer, got '18446744073709551616'|--seed 18446744073709551616 $PLUGIN"
  )
  usage_error_cases hcomm-transport-check check "${cases[@]}"
  check --only abi,nosuch "$PLUGIN"
  expect_rc 2
  expect_err "hcomm-transport-check: --only: expected some of abi, connect, comm-key, "
  expect_err "separated by commas, got 'abi,nosuch': 'nosuch' is none of them"
  check --only abi, "$PLUGIN"
  expect_rc 2
  expect_err "got 'abi,': an empty name"
}

# --help lists every option and every test; the options given reach the run.
case_options() {
  local option want
  for option in --help -h; do
    check "$option"
    expect_rc 0
    expect_out "Usage: hcomm-transport-check [OPTIONS] PLUGIN.so"
    for want in "--ranks N" "--only LIST" "--timeout S=60" "--seed S" "  abi " "  memory-death "; do
      grep -qF -- "$want" "$WORK/out" || fail "$option does not show '$want'"
    done
  done
  check --ranks 3 --only abi,connect --timeout=30 --seed 0x10 "$PLUGIN"
  expect_rc 0
  expect_out "plugin   $PLUGIN"
  expect_out "ranks    3"
  expect_out "timeout  30 s per test"
  expect_out "seed     16 (--seed repeats this run)"
  grep -qE '^connect +3 +PASS' "$WORK/out" || fail "connect did not pass with 3 ranks"
  grep -qE '^sizes ' "$WORK/out" && fail "--only ran a test it does not name"
  return 0
}

"case_$CASE" || exit 1
echo "PASS [$CASE]"
