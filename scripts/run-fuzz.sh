#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz with clang into build-fuzz/ and
# runs each for SECONDS (default 30) from a scratch copy of its seed corpus
# (tests/fuzz/corpus/<target>), one after another. Fails when a target finds
# a crash, a hang or a sanitizer report; the input that did it is kept as
# build-fuzz/findings/<target>-crash-* (or leak-*, timeout-*).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}

CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHCOMM_FUZZ=ON \
  -DHCOMM_BUILD_TESTS=OFF -DHCOMM_WERROR=ON >/dev/null
# Only the fuzz targets and the core objects they link.
cmake --build build-fuzz --target hcomm_fuzz -j "$(nproc)"

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p build-fuzz/findings
failed=()
for seeds in tests/fuzz/corpus/*/; do
  target=$(basename "$seeds")
  mkdir -p "$scratch/$target"
  cp "$seeds"* "$scratch/$target/"
  echo "== fuzz_$target: $seconds s"
  # -timeout: one input running 10 s is a hang; -rss_limit_mb: the default 2 GiB.
  if ! build-fuzz/bin/fuzz_"$target" -max_total_time="$seconds" -timeout=10 -print_final_stats=1 \
      -artifact_prefix=build-fuzz/findings/"$target"- "$scratch/$target" >"$scratch/$target.log" 2>&1; then
    tail -n 40 "$scratch/$target.log"
    failed+=("$target")
  fi
  grep -E '^#[0-9]+ +DONE|^stat::' "$scratch/$target.log" || true
done
if ((${#failed[@]})); then
  echo "fuzzing found problems in: ${failed[*]} (inputs in build-fuzz/findings/)" >&2
  exit 1
fi
