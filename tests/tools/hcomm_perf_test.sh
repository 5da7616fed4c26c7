#!/usr/bin/env bash
# hcomm-perf run under hcomm-run, as a user runs it. hcomm-perf checks every
# element of every result itself; these cases check its exit status, its
# table and its JSON file. One case per call:
#   hcomm_perf_test.sh <hcomm-run> <hcomm-perf> <case>
set -u

RUN=$1
PERF=$2
CASE=$3
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

fail() {
  echo "FAIL [$CASE]: $*" >&2
  echo "--- stdout" >&2; cat "$WORK/out" >&2 2>/dev/null
  echo "--- stderr" >&2; cat "$WORK/err" >&2 2>/dev/null
  exit 1
}

# perf <ranks> <hcomm-perf arguments...>: sets RC.
perf() {
  local ranks=$1
  shift
  "$RUN" -n "$ranks" --timeout 50 "$PERF" "$@" >"$WORK/out" 2>"$WORK/err"
  RC=$?
}

expect_rc() { [ "$RC" -eq "$1" ] || fail "exit status $RC, expected $1"; }

# The table's data rows (not comments), and their #wrong column.
rows() { grep -v '^#' "$WORK/out"; }
expect_rows() {
  [ "$(rows | wc -l)" -eq "$1" ] || fail "expected $1 table rows"
  rows | awk '$NF != "0" { exit 1 }' || fail "a row has wrong elements"
}

case_allreduce() {
  # Odd sizes (1, 7, 49, ... bytes) and an odd rank count, across dtypes and
  # ops: "dtype op rows [options]". Sizes round down to whole elements, so
  # 1 B is a row of count 0 and, for 8-byte types, 7 B repeats it.
  local spec
  for spec in "float32 sum 6" "int8 prod 6" "bfloat16 avg 6" "float16 min 6 --inplace" "uint64 max 5 --nonblocking" \
              "int32 sum 6 --inplace --nonblocking"; do
    # shellcheck disable=SC2086
    set -- $spec
    local dtype=$1 op=$2 nrows=$3
    shift 3
    perf 3 -c allreduce -d "$dtype" -o "$op" -b 1 -e 20000 -f 7 -w 1 -n 2 "$@"
    expect_rc 0
    head -1 "$WORK/out" | grep -qF "allreduce: dtype $dtype, op $op, 3 ranks" || fail "header of $spec"
    rows | awk -v dtype="$dtype" -v op="$op" '$3 != dtype || $4 != op || $5 != "-" { exit 1 }' ||
      fail "columns of $spec"
    expect_rows "$nrows"
  done
}

case_broadcast() {
  perf 3 -c broadcast -r 2 -d float64 -b 0 -e 100000 -f 10 -w 1 -n 2
  expect_rc 0
  expect_rows 6
  rows | awk '$5 != "2" || $4 != "-" { exit 1 }' || fail "root or redop column"
  perf 4 -c broadcast -r 1 -d uint8 -b 3 -e 3000 -f 10 -w 1 -n 2 --inplace --nonblocking
  expect_rc 0
  expect_rows 4
}

case_barrier() {
  perf 4 -c barrier -w 1 -n 5
  expect_rc 0
  [ "$(rows | wc -l)" -eq 1 ] || fail "a barrier has one row"
  rows | awk '$1 != "0" || $NF != "-" { exit 1 }' || fail "barrier row"
  perf 2 -c barrier --nonblocking -w 0 -n 1
  expect_rc 0
}

case_json() {
  perf 2 -c allreduce -d int64 -o sum -b 8 -e 64 -w 0 -n 1 --json "$WORK/rows.json"
  expect_rc 0
  local json
  json=$(tr -d '\n' <"$WORK/rows.json")
  [ "$(grep -o '"size_bytes": [0-9]*' "$WORK/rows.json" | awk '{print $2}' | tr '\n' ' ')" = "8 16 32 64 " ] ||
    fail "JSON sizes: $json"
  [ "$(grep -c '"wrong": 0}' "$WORK/rows.json")" -eq 4 ] || fail "JSON wrong counts: $json"
  grep -qF '"collective": "allreduce", "dtype": "int64", "op": "sum", "root": null, "ranks": 2' "$WORK/rows.json" ||
    fail "JSON fields: $json"
  [[ $json == \[*\] ]] || fail "not a JSON array: $json"
}

case_bad_arguments() {
  perf 2 -c alltoall
  expect_rc 2
  grep -qF "expected one of allreduce, broadcast, barrier" "$WORK/err" || fail "no list of collectives"
  perf 2 -c broadcast -r 2 -w 0 -n 1
  expect_rc 2
  grep -qF -- "--root 2: this job has 2 ranks (use 0 to 1)" "$WORK/err" || fail "no message for a bad root"
  perf 1 --json "$WORK/no-such-folder/rows.json"
  expect_rc 1
  grep -qF -- "--json: cannot write" "$WORK/err" || fail "no message for a bad JSON path"
  "$PERF" --help >"$WORK/out" 2>"$WORK/err"
  RC=$?
  expect_rc 0
  grep -qF "usage:" "$WORK/out" || fail "--help printed no usage"
}

"case_$CASE" || exit 1
echo "PASS [$CASE]"
