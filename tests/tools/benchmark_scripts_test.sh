#!/usr/bin/env bash
# benchmarks/plot.py and compare_mpi.sh's JSON, run as a user runs them on a
# few small sizes. One case per call:
#   benchmark_scripts_test.sh <build dir> <source dir> <case>
# Cases that need matplotlib or the MPIs skip (77) where they are missing.
set -u

BUILD=$1
SOURCE=$2
CASE=$3
# shellcheck source=case_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/case_common.sh"
PLOT=$SOURCE/benchmarks/plot.py

# A python3 that has matplotlib (Debian's, where another python3 comes first on PATH), or a skip.
plotting_python() {
  local python
  for python in python3 /usr/bin/python3; do
    if "$python" -c 'import matplotlib' 2>/dev/null; then
      PYTHON=$python
      return
    fi
  done
  echo "SKIP [$CASE]: no python3 with matplotlib (Debian: apt-get install python3-matplotlib)"
  exit 77
}

# plot <arguments...>: runs plot.py; sets RC.
plot() {
  capture "${PYTHON:-python3}" "$PLOT" "$@"
}

expect_png() {
  [ -s "$1" ] || fail "no plot at $1"
  [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ] || fail "$1 is not a PNG file"
}

perf_json() {
  "$BUILD/bin/hcomm-run" -n 2 --timeout 50 "$BUILD/bin/hcomm-perf" -b 8 -e 4K -f 8 -w 1 -n 3 --settle 0 "${@:2}" \
    --json "$1" >"$WORK/out" 2>"$WORK/err" || fail "hcomm-perf $*"
}

# Two hcomm-perf runs as two labelled series; one file, its plot named after it.
case_plot_perf() {
  plotting_python
  perf_json "$WORK/reused.json"
  perf_json "$WORK/fresh.json" --fresh-inputs
  plot "$WORK/reused.json" "$WORK/fresh.json" --label reused --label fresh -o "$WORK/both.png"
  expect_rc 0
  expect_png "$WORK/both.png"
  plot "$WORK/reused.json"
  expect_rc 0
  expect_png "$WORK/reused.png"
}

# Files it cannot plot, and command lines it cannot follow, each with its reason.
case_plot_errors() {
  plot --help
  expect_rc 0
  grep -qF "hcomm-compare-mpi/1" "$WORK/out" || fail "--help does not describe compare_mpi.sh's JSON"
  plot "$WORK/missing.json"
  expect_rc 2
  expect_err "missing.json: no such file"
  echo '[{"collective": "allreduce"' >"$WORK/broken.json"
  plot "$WORK/broken.json"
  expect_rc 2
  expect_err "broken.json: not JSON"
  echo '{"schema": "something-else/3", "rows": []}' >"$WORK/other.json"
  plot "$WORK/other.json"
  expect_rc 2
  expect_err "schema 'something-else/3' is not one this script reads"
  echo '[{"collective": "allreduce", "ranks": 2, "size_bytes": 8}]' >"$WORK/short.json"
  plot "$WORK/short.json"
  expect_rc 2
  expect_err "row 0: missing key(s) dtype, op, root"
  echo '{"schema": "hcomm-compare-mpi/1", "rows": [{"collective": "allreduce", "ranks": 2, "inputs": "reused",
    "buffers": "malloc", "size_bytes": 8, "hcomm_us": "fast", "openmpi_us": 1, "mpich_us": 1, "algorithm": null}]}' \
    >"$WORK/text.json"
  plot "$WORK/text.json"
  expect_rc 2
  expect_err "row 0: hcomm_us is 'fast', expected a number"
  echo '[]' >"$WORK/empty.json"
  plot "$WORK/empty.json" "$WORK/text.json"
  expect_rc 2
  expect_err "empty.json: hcomm-perf --json output has no rows"
  perf_json "$WORK/perf.json"
  plot "$WORK/perf.json" "$WORK/text.json" -o "$WORK/x.png"
  expect_rc 2
  expect_err "hcomm_us is 'fast'"
  sed 's/"fast"/2/' "$WORK/text.json" >"$WORK/mpi.json"
  plot "$WORK/perf.json" "$WORK/mpi.json" -o "$WORK/x.png"
  expect_rc 2
  expect_err "the files mix hcomm-perf and compare_mpi.sh results"
  plot "$WORK/perf.json" "$WORK/perf.json" --label one
  expect_rc 2
  expect_err "1 --label given for 2 files"
  plot "$WORK/perf.json" -o "$WORK/no-such-folder/x.png"
  expect_rc 2
  expect_err "the folder $WORK/no-such-folder does not exist"
  [ ! -e "$WORK/x.png" ] || fail "a plot was written from files it refused"
}

# compare_mpi.sh JSON=...: the markdown table's rows again, as JSON, then plotted.
case_compare_mpi_json() {
  local tool
  for tool in mpicc.openmpi mpirun.openmpi mpicc.mpich mpiexec.mpich; do
    command -v "$tool" >/dev/null || { echo "SKIP [$CASE]: $tool is missing (openmpi-bin libopenmpi-dev mpich libmpich-dev)"; exit 77; }
  done
  plotting_python
  COLL=reduce NRANKS=2 MAX_BYTES=64 ROUNDS=1 WARMUP=1 ITERS=3 JSON="$WORK/compare.json" \
    bash "$SOURCE/benchmarks/compare_mpi.sh" "$BUILD" >"$WORK/out" 2>"$WORK/err"
  RC=$?
  expect_rc 0
  expect_err "wrote $WORK/compare.json"
  # The JSON holds the table's rows: size, HComm, its MPI face, Open MPI and MPICH as printed there (2 decimals).
  "$PYTHON" - "$WORK/compare.json" "$WORK/out" <<'EOF' >>"$WORK/err" 2>&1 || fail "the JSON does not match the table"
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["schema"] == "hcomm-compare-mpi/1", doc["schema"]
assert doc["settings"]["collective"] == "reduce" and doc["settings"]["ranks"] == 2, doc["settings"]
assert "compare_mpi.sh" in doc["command"] and "COLL=reduce" in doc["command"], doc["command"]
assert doc["machine"]["cores"] >= 1 and len(doc["machine"]["load_average"]) == 3, doc["machine"]
table = [[c.strip() for c in line.strip().strip("|").split("|")]
         for line in open(sys.argv[2]) if line.startswith("| ") and not line.startswith(("| size", "| ---"))]
rows = [[str(r["size_bytes"])] + ["%.2f" % r[k] for k in ("hcomm_us", "hcomm_mpi_us", "openmpi_us", "mpich_us")]
        for r in doc["rows"]]
assert [t[:5] for t in table] == rows, (table, rows)
assert [int(t[0]) for t in table] == [8, 16, 32, 64], table
for r in doc["rows"]:
    assert (r["collective"], r["ranks"], r["inputs"], r["buffers"]) == ("reduce", 2, "reused", "malloc"), r
    assert r["wrong"] == 0 and isinstance(r["algorithm"], str), r
EOF
  plot "$WORK/compare.json"
  expect_rc 0
  expect_png "$WORK/compare.png"
  # Against MPICH alone, without the MPI face: their columns say "-", their JSON times null.
  MPIS=mpich HCOMM_MPI=0 COLL=broadcast NRANKS=2 MAX_BYTES=16 ROUNDS=1 WARMUP=1 ITERS=3 JSON="$WORK/mpich.json" \
    bash "$SOURCE/benchmarks/compare_mpi.sh" "$BUILD" >"$WORK/out" 2>"$WORK/err"
  RC=$?
  expect_rc 0
  "$PYTHON" - "$WORK/mpich.json" "$WORK/out" <<'EOF' >>"$WORK/err" 2>&1 || fail "MPIS=mpich: the JSON or table is wrong"
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["libraries"]["openmpi"] == "not run" and doc["libraries"]["mpich"].startswith("MPICH "), doc["libraries"]
table = [[c.strip() for c in line.strip().strip("|").split("|")]
         for line in open(sys.argv[2]) if line.startswith("| ") and not line.startswith(("| size", "| ---"))]
assert [t[0] for t in table] == ["8", "16"] and all(t[2] == "-" and t[3] == "-" for t in table), table
for r, t in zip(doc["rows"], table):
    assert r["openmpi_us"] is None and r["hcomm_mpi_us"] is None and r["mpich_us"] > 0, r
    assert t[5] == "%.2f" % (r["hcomm_us"] / r["mpich_us"]), (t, r)
EOF
  plot "$WORK/mpich.json"
  expect_rc 0
}

"case_$CASE"
