#!/usr/bin/env bash
# hcomm-perf run under hcomm-run, as a user runs it. hcomm-perf checks every
# element of every result itself; these cases check its exit status, its
# table and its JSON file. One case per call:
#   hcomm_perf_test.sh <hcomm-run> <hcomm-perf> <case>
set -u

RUN=$1
PERF=$2
CASE=$3
# shellcheck source=case_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/case_common.sh"

# perf <ranks> <hcomm-perf arguments...>: sets RC.
perf() {
  local ranks=$1
  shift
  capture "$RUN" -n "$ranks" --timeout 50 "$PERF" "$@"
}


# The table's data rows (not comments); the #wrong column is the one before
# the algorithm's name.
rows() { grep -v '^#' "$WORK/out"; }
expect_rows() {
  [ "$(rows | wc -l)" -eq "$1" ] || fail "expected $1 table rows"
  rows | awk '$(NF-1) != "0" { exit 1 }' || fail "a row has wrong elements"
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

# Every other collective at an odd rank count with a root that is not 0,
# out of place and in place; each row's results checked by hcomm-perf.
case_collectives() {
  local coll inplace
  for coll in reduce allgather allgatherv reduce_scatter reduce_scatter_v alltoall alltoallv gather scatter scan \
    exscan; do
    for inplace in "" --inplace; do
      # shellcheck disable=SC2086
      perf 3 -c "$coll" -r 2 -d int32 -o max -b 1 -e 20000 -f 7 -w 1 -n 2 $inplace
      expect_rc 0
      head -1 "$WORK/out" | grep -qF "$coll: dtype int32" || fail "header of $coll $inplace"
      expect_rows 6
    done
  done
}

case_barrier() {
  perf 4 -c barrier -w 1 -n 5
  expect_rc 0
  [ "$(rows | wc -l)" -eq 1 ] || fail "a barrier has one row"
  rows | awk '$1 != "0" || $(NF-1) != "-" || $NF == "" { exit 1 }' || fail "barrier row"
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
  [ "$(grep -c '"wrong": 0, "algorithm": "[a-z_]*", "forced": null}' "$WORK/rows.json")" -eq 4 ] ||
    fail "JSON wrong counts and algorithms: $json"
  grep -qF '"collective": "allreduce", "dtype": "int64", "op": "sum", "root": null, "ranks": 2' "$WORK/rows.json" ||
    fail "JSON fields: $json"
  [[ $json == \[*\] ]] || fail "not a JSON array: $json"
  [ "$(grep -c '"iterations": 1,' "$WORK/rows.json")" -eq 4 ] || fail "JSON iterations (-n 1): $json"
  # A JSON reader takes the file: every row's keys in order, and their values.
  python3 - "$WORK/rows.json" <<'PY' || fail "JSON rows as a JSON reader sees them: $json"
import json, sys
rows = json.load(open(sys.argv[1]))
keys = ["collective", "dtype", "op", "root", "ranks", "inplace", "blocking", "stream", "buffers", "memory",
        "fresh_inputs", "size_bytes", "count", "iterations", "time_us", "algbw_gbps", "busbw_gbps", "wrong", "algorithm", "forced"]
assert [list(row) for row in rows] == [keys] * 4, rows
assert [(row["size_bytes"], row["count"]) for row in rows] == [(8, 1), (16, 2), (32, 4), (64, 8)], rows
for row in rows:
    assert {k: row[k] for k in keys[:11] + ["iterations", "wrong", "forced"]} == {
        "collective": "allreduce", "dtype": "int64", "op": "sum", "root": None, "ranks": 2, "inplace": False,
        "blocking": True, "stream": False, "buffers": "malloc", "memory": "host", "fresh_inputs": False,
        "iterations": 1, "wrong": 0, "forced": None}, row
    assert row["time_us"] > 0 and row["algbw_gbps"] > 0 and row["busbw_gbps"] > 0 and row["algorithm"], row
PY
}

# --min-time: short calls are timed more often than -n, up to the cap, and
# never less often.
case_min_time() {
  perf 2 -c allreduce -b 8 -e 2M -f 512 -w 2 -n 3 --min-time 40 --json "$WORK/rows.json"
  expect_rc 0
  expect_rows 3
  head -1 "$WORK/out" | grep -qF "iterations 3 or as many as take about 40 ms" || fail "the header does not say --min-time"
  local iterations
  iterations=$(grep -o '"iterations": [0-9]*' "$WORK/rows.json" | awk '{print $2}' | tr '\n' ' ')
  read -r small middle large <<<"$iterations"
  [ "$small" -gt 3 ] && [ "$small" -le 100000 ] || fail "8 B calls timed $small times ($iterations)"
  [ "$middle" -ge 3 ] && [ "$large" -ge 3 ] && [ "$small" -ge "$large" ] || fail "iterations per size: $iterations"
}

# --algo forces an algorithm at every size it serves; the last column names
# the one that ran.
case_algo() {
  perf 3 -c allreduce -d int32 -o sum -b 1 -e 300000 -f 9 -w 1 -n 2 --algo ring --json "$WORK/rows.json"
  expect_rc 0
  head -1 "$WORK/out" | grep -qF "algorithm ring forced" || fail "header does not name the forced algorithm"
  expect_rows 6
  rows | awk '$NF != "ring" { exit 1 }' || fail "a size did not run ring"
  [ "$(grep -c '"algorithm": "ring", "forced": "ring"}' "$WORK/rows.json")" -eq 6 ] || fail "JSON algorithms"
  perf 3 -c broadcast -r 1 -d float64 -b 8 -e 80000 -f 10 -w 1 -n 2 --algo binomial --nonblocking
  expect_rc 0
  expect_rows 5
  rows | awk '$NF != "binomial" { exit 1 }' || fail "a size did not run binomial"
  local name
  for name in nosuch dissemination; do
    perf 3 -c allreduce -w 0 -n 1 --algo "$name"
    expect_rc 2
    grep -qF -- "--algo $name: algorithm '$name' does not serve allreduce on this communicator of 3 ranks; algorithms that do: " \
      "$WORK/err" || fail "no message for --algo $name"
    grep -qE "algorithms that do: .*ring" "$WORK/err" || fail "the message does not list ring"
  done
}

# --sweep-algos: a column per algorithm that serves the collective, then
# auto's name and time, and the two closing figures.
case_sweep_algos() {
  perf 3 -c allreduce -d float32 -o sum -b 4 -e 40000 -f 10 -w 1 -n 2 --sweep-algos
  expect_rc 0
  local header
  header=$(grep '^#  *size(B)' "$WORK/out")
  grep -qw ring <<<"$header" || fail "no ring column: $header"
  ! grep -qw dissemination <<<"$header" || fail "a barrier algorithm among allreduce's: $header"
  # Header: '#', size, count, type, redop, root, one name per algorithm, auto,
  # time, #wrong. A row: a time (a median call, above 0) or '-' per
  # algorithm, auto's choice (one of the algorithms), its time, and no wrong
  # elements.
  [ "$(rows | wc -l)" -eq 5 ] || fail "expected 5 rows"
  rows | awk -v header="$header" '
    BEGIN { n = split(header, h, " "); if (n < 10) exit 1; for (i = 7; i <= n - 3; ++i) names[h[i]] = 1 }
    NF != n - 1 || $NF != "0" || !($(NF - 2) in names) || $(NF - 1) !~ /^[0-9]+\.[0-9]+$/ || $(NF - 1) <= 0 { exit 1 }
    { for (i = 6; i <= NF - 3; ++i) if ($i != "-" && ($i !~ /^[0-9]+\.[0-9]+$/ || $i <= 0)) exit 1 }' ||
    fail "the rows do not match the header"
  grep -qF "# times in us, the slowest rank's median call:" "$WORK/out" || fail "the header does not name the median"
  grep -qE '^# auto within 10% of the best forced algorithm at [0-5] of 5 sizes$' "$WORK/out" ||
    fail "no closeness figure"
  grep -qE "^# auto's choice, forced, within 10% of the best forced algorithm at [0-5] of 5 sizes$" "$WORK/out" ||
    fail "no closeness figure of auto's choice"
  grep -qE '^# auto against ring forced: sum\(auto\) / sum\(ring\) - 1 = [-+][0-9]+\.[0-9]% over the 5 sizes ring serves$' \
    "$WORK/out" || fail "no figure against ring"
  grep -qE '^# the best forced algorithm at each of those sizes against ring: [-+][0-9]+\.[0-9]%$' "$WORK/out" ||
    fail "no figure of the best forced algorithms against ring"
  perf 2 -c allreduce -b 8 -e 8K -f 32 -w 0 -n 1 --sweep-algos --rounds 3
  expect_rc 0
  grep -qF "; 3 rounds of them all, each one's best round" "$WORK/out" || fail "no rounds in the header"
  [ "$(rows | wc -l)" -eq 3 ] || fail "expected 3 rows with --rounds 3"
  perf 2 -c barrier -w 0 -n 2 --sweep-algos
  expect_rc 0
  grep -q '^#  *size(B).* dissemination ' "$WORK/out" || fail "no dissemination column for barrier"
  grep -qF "# auto against ring forced: ring serves no size of this sweep" "$WORK/out" || fail "ring for barrier"
}

# --buffers alloc and register: the mapped buffers' zero-copy paths where the
# ranks map each other's memory (shm), plain messages where they do not (tcp);
# every element checked by hcomm-perf, the header and the JSON name the kind.
case_buffers() {
  local kind transport coll
  for kind in alloc register; do
    for transport in shm tcp; do
      for coll in allreduce broadcast allgather reduce_scatter; do
        HCOMM_TRANSPORTS=$transport perf 3 -c "$coll" -r 1 -d int32 -o sum -b 1 -e 300000 -f 9 -w 1 -n 2 \
          --buffers "$kind" --json "$WORK/rows.json"
        expect_rc 0
        expect_rows 6
        head -1 "$WORK/out" | grep -qE "blocking, buffers (from hcomm_mem_alloc|registered with hcomm_mem_register);" ||
          fail "the header does not name the buffers of $kind $transport $coll"
        [ "$(grep -c "\"buffers\": \"$kind\"" "$WORK/rows.json")" -eq 6 ] || fail "JSON buffers of $kind"
      done
    done
  done
  HCOMM_TRANSPORTS=shm perf 2 -c allreduce -b 8 -e 2M -f 64 -w 1 -n 2 --buffers register --inplace --sweep-algos
  expect_rc 0
  [ "$(rows | wc -l)" -eq 4 ] || fail "expected 4 rows of the registered sweep"
}

gpu_present() { [ -e /dev/nvidiactl ] || [ -e /dev/nvidia0 ]; }

# --memory cuda on device buffers from cudaMalloc and hcomm_mem_alloc_device,
# out of place and in place, every element checked (skipped without a GPU).
case_memory_cuda() {
  gpu_present || { echo "SKIP [$CASE]: no GPU here"; exit 77; }
  local kind coll ranks
  for ranks in 2 3; do
    for kind in malloc alloc; do
      for coll in allreduce broadcast reduce allgather reduce_scatter alltoall; do
        perf "$ranks" -c "$coll" -d float32 -b 4 -e 4M -f 16 -w 1 -n 2 --memory cuda --buffers "$kind" \
          --json "$WORK/rows.json"
        expect_rc 0
        expect_rows 6
        head -1 "$WORK/out" | grep -qE "device buffers from (cudaMalloc|hcomm_mem_alloc_device);" ||
          fail "the header does not name the device buffers ($kind, $coll)"
        [ "$(grep -c '"memory": "cuda"' "$WORK/rows.json")" -eq 6 ] || fail "JSON memory of $kind $coll"
      done
      perf "$ranks" -c allreduce -b 4 -e 1M -f 32 -w 1 -n 2 --memory cuda --buffers "$kind" --inplace
      expect_rc 0
      expect_rows 5
    done
    # Stream-ordered, every element checked, the header and the JSON saying so.
    for coll in allreduce allgather alltoall; do
      perf "$ranks" -c "$coll" -d float32 -b 4 -e 16M -f 64 -w 1 -n 2 --memory cuda --stream --json "$WORK/rows.json"
      expect_rc 0
      expect_rows 5
      head -1 "$WORK/out" | grep -qF "stream-ordered" || fail "the header does not say stream-ordered ($coll)"
      [ "$(grep -c '"stream": true' "$WORK/rows.json")" -eq 5 ] || fail "JSON stream of $coll"
    done
  done
}

# Without a GPU (or a CUDA build), --memory cuda says why it cannot run.
case_memory_cuda_absent() {
  gpu_present && { echo "SKIP [$CASE]: a GPU is here (memory_cuda runs there)"; exit 77; }
  perf 2 -b 8 -e 64 --memory cuda --buffers alloc
  expect_rc 1
  expect_err "hcomm_mem_alloc_device: no device plugin sees a device"
  perf 2 -b 8 -e 64 --memory cuda
  expect_rc 1
  grep -qE "cudaMalloc failed|built without CUDA" "$WORK/err" || fail "--memory cuda without a GPU did not say why"
  perf 1 -b 8 -e 64 --memory cuda --buffers register
  expect_rc 2
  expect_err "with --memory cuda take malloc (cudaMalloc) or alloc (hcomm_mem_alloc_device)"
  perf 1 -b 8 -e 64 --stream
  expect_rc 2
  expect_err "--stream queues the calls on a CUDA stream: it needs --memory cuda"
  perf 1 -b 8 -e 64 --memory cuda --stream --nonblocking
  expect_rc 2
  expect_err "a call is stream-ordered or nonblocking, not both"
}

# --fresh-inputs: the inputs written before every call (peers that read them
# in place then find them just written); every element still checked, and
# the header and the JSON say so.
case_fresh_inputs() {
  local kind transport
  for kind in malloc register; do
    for transport in shm tcp; do
      HCOMM_TRANSPORTS=$transport perf 3 -c allreduce -d int32 -o sum -b 1 -e 4M -f 32 -w 1 -n 3 \
        --buffers "$kind" --fresh-inputs --json "$WORK/rows.json"
      expect_rc 0
      expect_rows 5
      head -1 "$WORK/out" | grep -qF ", inputs written before each call;" ||
        fail "the header does not say the inputs are written ($kind $transport)"
      [ "$(grep -c '"fresh_inputs": true' "$WORK/rows.json")" -eq 5 ] || fail "JSON fresh_inputs ($kind $transport)"
    done
  done
}

# Every rank line of the score map that rank 0 logs once.
case_score_map() {
  HCOMM_DEBUG=INFO HCOMM_DEBUG_SUBSYS=ALGO perf 3 -c barrier -w 0 -n 1
  expect_rc 0
  [ "$(grep -c "algorithm map of this communicator (3 ranks)" "$WORK/err")" -eq 1 ] || fail "not one map"
  grep -qE "HCOMM INFO ALGO   allreduce host: 0-[0-9KMG]+ [a-z_]+" "$WORK/err" || fail "no allreduce line"
  grep -qE "HCOMM INFO ALGO   barrier host: 0-inf [a-z_]+$" "$WORK/err" || fail "no barrier line"
  HCOMM_TUNE=profile:thresholds HCOMM_DEBUG=INFO HCOMM_DEBUG_SUBSYS=ALGO perf 2 -c barrier -w 0 -n 1
  expect_rc 0
  grep -qF "allreduce host: 0-128K ring, 128K-8M double_binary_tree, 8M-inf halving_doubling" "$WORK/err" ||
    fail "the thresholds profile is not the map"
}

# Each rank measures how much a reduction costs against a copy; every rank's
# cost model takes the slowest rank's figure, whatever its own (over shm, and
# over tcp, which maps nothing).
case_reduction_cost() {
  local transport
  for transport in shm tcp; do
    HCOMM_TRANSPORTS=$transport HCOMM_DEBUG=INFO HCOMM_DEBUG_SUBSYS=INIT perf 3 -c barrier -w 0 -n 1
    expect_rc 0
    grep -E "a reduction costs [0-9.]+x a copy" "$WORK/err" |
      sed -E 's/.*rank ([0-9]+): a reduction costs ([0-9.]+)x a copy .*this rank measured ([0-9.]+)x.*/\1 \2 \3/' \
      >"$WORK/costs"
    [ "$(wc -l <"$WORK/costs")" -eq 3 ] || fail "not one reduction cost per rank ($transport)"
    [ "$(cut -d' ' -f1 "$WORK/costs" | sort -u | wc -l)" -eq 3 ] || fail "a rank logged twice ($transport)"
    [ "$(cut -d' ' -f2 "$WORK/costs" | sort -u | wc -l)" -eq 1 ] || fail "the ranks disagree ($transport)"
    awk '{ if ($2 + 0 < 0.5 || $2 + 0 > 4) exit 1; if ($3 > max) max = $3; agreed = $2 }
         END { exit !(agreed == max) }' "$WORK/costs" || fail "not the slowest rank's figure in [0.5, 4] ($transport)"
  done
}

# Ranks that outnumber the cores they may run on (here all on one) make every
# synchronisation cost a time slice in the cost model, on every rank alike.
case_oversubscribed() {
  local line="a host has more ranks than cores: a synchronisation costs 3 us more in the cost model"
  HCOMM_DEBUG=INFO HCOMM_DEBUG_SUBSYS=INIT perf 2 -c barrier -w 0 -n 1
  expect_rc 0
  if [ "$(nproc)" -ge 2 ]; then
    ! grep -qF "$line" "$WORK/err" || fail "2 ranks on $(nproc) cores taken for oversubscribed"
  fi
  local cpu  # the first CPU this process may run on
  cpu=$(awk '/^Cpus_allowed_list:/ { split($2, a, /[,-]/); print a[1] }' /proc/self/status)
  HCOMM_DEBUG=INFO HCOMM_DEBUG_SUBSYS=INIT taskset -c "$cpu" "$RUN" -n 2 --timeout 50 "$PERF" -c allreduce -b 8 -e 1K \
    -f 2 -w 0 -n 1 >"$WORK/out" 2>"$WORK/err"
  RC=$?
  expect_rc 0
  expect_rows 8
  [ "$(grep -cF "$line" "$WORK/err")" -eq 2 ] || fail "not every rank took its synchronisations as oversubscribed"
}

# --calibrate writes a tune file that every later communicator takes.
case_calibrate() {
  perf 2 --calibrate "$WORK/link.tune" -w 1 -n 5
  expect_rc 0
  local key value
  for key in alpha_us beta_us_per_byte gamma_us_per_byte mapped.beta_us_per_byte mapped.gamma_us_per_byte; do
    value=$(awk -v k="$key" '$1 == k && $2 == "=" { print $3 }' "$WORK/link.tune")
    awk -v v="$value" 'BEGIN { exit !(v + 0 > 0 && v + 0 < 1e6) }' || fail "$key = '$value'"
    grep -qE "^  $key +[0-9.e+-]+  " "$WORK/out" || fail "$key not printed"
  done
  grep -qx "ranks = 2" "$WORK/link.tune" || fail "no rank count"
  grep -qE "^transports = [a-z,]+$" "$WORK/link.tune" || fail "no transports"
  HCOMM_TUNE_FILE="$WORK/link.tune" HCOMM_DEBUG=INFO HCOMM_DEBUG_SUBSYS=ALGO \
    perf 3 -c allreduce -d float64 -b 8 -e 8000 -f 10 -w 1 -n 2
  expect_rc 0
  expect_rows 4
  grep -qF "HCOMM_TUNE_FILE $WORK/link.tune (measured on 2 ranks over " "$WORK/err" || fail "the file was not used"
  printf 'alpha_us = 3\nbeta_us_per_byte = fast\n' >"$WORK/bad.tune"
  HCOMM_TUNE_FILE="$WORK/bad.tune" perf 2 -c allreduce -w 0 -n 1
  expect_rc 1
  grep -qF "HCOMM_TUNE_FILE $WORK/bad.tune line 2: key 'beta_us_per_byte': 'fast' is not a finite number >= 0" \
    "$WORK/err" || fail "no message for a bad tune file"
  perf 1 --calibrate "$WORK/one.tune"
  expect_rc 2
  grep -qF "run it on at least 2 ranks" "$WORK/err" || fail "no message for one rank"
  perf 2 --calibrate "$WORK/no-such-folder/link.tune" -w 0 -n 1
  expect_rc 1
  grep -qF -- "--calibrate: cannot write" "$WORK/err" || fail "no message for a bad path"
}

# --select writes each size's fastest algorithm as rules from 0 to no end; a
# communicator of the file's ranks and transports takes them before its cost
# model (its map is the rules), one of another shape does not.
case_calibrate_select() {
  local tune=$WORK/select.tune coll
  HCOMM_TRANSPORTS=shm perf 2 --calibrate "$tune" --select allreduce,broadcast -b 8 -e 64K -f 8 -w 1 -n 2
  expect_rc 0
  grep -qx "transports = shm" "$tune" || fail "no transports in $(cat "$tune")"
  for coll in allreduce broadcast; do
    # Each rule starts where the one before ends, the first at 0, the last runs to inf.
    grep "^select = $coll:" "$tune" | sed -E "s/^select = $coll:(([^:]*):)?@.*/\2/" |
      awk -F- '{ lo = NF ? $1 : "0"; hi = NF ? $2 : "inf" }
               NR == 1 && lo != "0" { exit 1 } NR > 1 && lo != last { exit 1 } { last = hi }
               END { exit !(NR > 0 && last == "inf") }' || fail "the $coll rules do not cover every size: $(cat "$tune")"
    grep -qE "^  select = $coll:" "$WORK/out" || fail "the $coll rules are not printed"
  done
  grep -qF "and its select rules to those of 2 ranks on 1 host over shm, for host memory" "$WORK/out" ||
    fail "no word of the rules' communicators"
  local map
  map=$(grep "^select = allreduce:" "$tune" | sed -E 's/^select = allreduce:(([^:]*):)?@(.*)/\2 \3/; s/^ /0-inf /' |
        paste -sd, | sed 's/,/, /g')
  HCOMM_TUNE_FILE=$tune HCOMM_TRANSPORTS=shm HCOMM_DEBUG=INFO HCOMM_DEBUG_SUBSYS=ALGO perf 2 -c allreduce -b 8 -e 64K \
    -f 8 -w 0 -n 1
  expect_rc 0
  expect_rows 5
  grep -qE "HCOMM_TUNE_FILE $tune: [0-9]+ measured choices of algorithm for host memory" "$WORK/err" ||
    fail "the rules were not taken"
  grep -qF "allreduce host: $map" "$WORK/err" || fail "the map is not the rules ($map)"
  HCOMM_TUNE_FILE=$tune HCOMM_TRANSPORTS=shm HCOMM_DEBUG=INFO HCOMM_DEBUG_SUBSYS=ALGO perf 3 -c barrier -w 0 -n 1
  expect_rc 0
  grep -qF "its measured choices of algorithm are not taken (measured on 2 ranks, this communicator has 3)" \
    "$WORK/err" || fail "3 ranks took the rules of 2"
  HCOMM_TUNE_FILE=$tune HCOMM_TRANSPORTS=tcp HCOMM_DEBUG=INFO HCOMM_DEBUG_SUBSYS=ALGO perf 2 -c barrier -w 0 -n 1
  expect_rc 0
  grep -qF "(measured over transports shm, this communicator's are tcp)" "$WORK/err" || fail "tcp took the rules of shm"
}

# A /dev/shm too small for the shm transport's segments (a 1M tmpfs in a
# mount namespace of the test's own, so the real /dev/shm is untouched): a
# clear error on every rank, never SIGBUS.
case_full_shm() {
  if ! unshare -m true 2>/dev/null; then echo "SKIP [$CASE]: no mount namespace (needs root)"; exit 77; fi
  unshare -m sh -c 'mount -t tmpfs -o size=1M tmpfs /dev/shm && exec "$@"' sh \
    env HCOMM_TRANSPORTS=shm HCOMM_SHM_FIFO_BYTES=4M HCOMM_SHM_CMA=0 "$RUN" -n 2 --timeout 50 "$PERF" -c allreduce -b 8M -e 8M -w 1 \
    -n 2 >"$WORK/out" 2>"$WORK/err"
  RC=$?
  [ "$RC" -ne 0 ] || fail "the job succeeded with segments larger than /dev/shm"
  [ "$RC" -ne $((128 + 7)) ] && ! grep -q "signal 7" "$WORK/err" || fail "a rank died of SIGBUS"
  grep -q "/dev/shm, is full" "$WORK/err" || fail "no rank said that /dev/shm is full"
}

# At INFO, each process logs the library's version once, before anything else
# of its start (EXPECTED_HCOMM_VERSION: the project's version).
case_version_log() {
  HCOMM_DEBUG=INFO HCOMM_DEBUG_SUBSYS=INIT perf 2 -c allreduce -b 8 -e 8 -w 0 -n 1
  expect_rc 0
  local lines
  lines=$(grep -c "HComm ${EXPECTED_HCOMM_VERSION:?} (plugin ABI [0-9]*\.[0-9]*)$" "$WORK/err")
  [ "$lines" -eq 2 ] || fail "$lines lines with the version HComm $EXPECTED_HCOMM_VERSION, expected one per rank"
}

# expect_rank_usage_error <error>: exit 2, and the ranks' stderr holds the error
# (after "hcomm-perf: ") and the hint to --help, nothing else but the
# launcher's lines.
expect_rank_usage_error() {
  expect_rc 2
  expect_err "hcomm-perf: $1"
  expect_err "Run hcomm-perf --help for the options."
  grep -v -e '^hcomm-run: ' -e '^Run hcomm-perf --help for the options\.$' "$WORK/err" | grep -qvF "hcomm-perf: $1" &&
    fail "stderr has more than the error and the hint"
  return 0
}

case_bad_arguments() {
  perf 2 -c nosuch
  expect_rank_usage_error "--collective: expected one of allreduce, broadcast, "
  grep -qF "barrier, got 'nosuch'" "$WORK/err" || fail "no list of collectives"
  perf 2 --frobnicate
  expect_rank_usage_error "The following argument was not expected: --frobnicate"
  perf 1 -n 2 -b
  expect_rank_usage_error "--minbytes: 1 required SIZE missing"
  perf 1 -n 0
  expect_rank_usage_error "--iters: expected an integer from 1 to 1000000000, got '0'"
  perf 1 -e 1T
  expect_rank_usage_error "--maxbytes: expected a number of bytes, optionally with a K, M or G suffix, got '1T'"
  perf 1 --inplace=yes
  expect_rank_usage_error "--inplace takes no value"
  perf 2 -c broadcast -r 2 -w 0 -n 1
  expect_rc 2
  grep -qF -- "--root 2: this job has 2 ranks (use 0 to 1)" "$WORK/err" || fail "no message for a bad root"
  perf 2 -c exscan -o avg -w 0 -n 1
  expect_rc 2
  grep -qF -- "-o avg: exscan reduces in rank order" "$WORK/err" || fail "no message for avg in a scan"
  perf 2 --sweep-algos --algo ring
  expect_rank_usage_error "--sweep-algos forces every algorithm in turn: it does not combine with --algo"
  perf 2 --select allreduce
  expect_rank_usage_error "--select measures choices of algorithm into a tune file: it needs --calibrate FILE"
  perf 2 --calibrate "$WORK/x.tune" --json "$WORK/x.json"
  expect_rank_usage_error "--calibrate measures the links, not a collective: it does not combine with --algo, --sweep-algos or --json"
  perf 1 --buffers pinned
  expect_rank_usage_error "--buffers: expected one of malloc, alloc, register, got 'pinned'"
  perf 1 --json "$WORK/no-such-folder/rows.json"
  expect_rc 1
  grep -qF -- "--json: cannot write" "$WORK/err" || fail "no message for a bad JSON path"
  local option want
  for option in --help -h; do
    capture "$PERF" "$option"
    expect_rc 0
    expect_out "Usage: hcomm-perf [OPTIONS]"
    for want in "-c,--collective NAME=allreduce" "-b,--minbytes SIZE=8" "--select COLLS" "--fresh-inputs"; do
      grep -qF -- "$want" "$WORK/out" || fail "$option does not show $want"
    done
  done
}

"case_$CASE" || exit 1
echo "PASS [$CASE]"
