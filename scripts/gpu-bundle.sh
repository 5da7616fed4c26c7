#!/usr/bin/env bash
# Packs what the GPU tests and benchmarks need from a build into one folder,
# for a GPU machine that lacks this one's packages (hwloc, PMIx): the test and
# benchmark programs, libhcomm, the plugins, the shared libraries they use
# that such a machine may not have, and run-gpu-tests.sh, which runs there
#
#   bash BUNDLE/run-gpu-tests.sh       # the plugin's tests, then every collective on
#                                      # device buffers, 2 and 3 ranks on one GPU
#
#   bash scripts/gpu-bundle.sh [BUILD] [BUNDLE]   (default: build, build-dev)
set -euo pipefail
build=$(realpath "${1:-build}")
bundle=${2:-build-dev}
[ -f "$build/lib/hcomm/libhcomm_device_cuda.so" ] || {
  echo "gpu-bundle.sh: $build has no CUDA device plugin (no CUDA Toolkit at configure time)" >&2
  exit 1
}
rm -rf "$bundle/bin" "$bundle/lib" "$bundle/deps"
mkdir -p "$bundle/bin" "$bundle/lib/hcomm" "$bundle/deps"
cp "$build"/bin/{hcomm-run,hcomm-info,hcomm-perf,hcomm_cuda_tests,hcomm_stream_order_test,hcomm_device_reduce_bench,hcomm_device_allreduce_bench,hcomm_collectives_test} \
  "$bundle/bin/"
cp -a "$build"/lib/libhcomm.so* "$build"/lib/libmpi.so* "$bundle/lib/"
cp "$build"/lib/hcomm/*.so "$bundle/lib/hcomm/"
# The libraries of this machine's packages that an Ubuntu GPU host lacks.
for lib in $(ldd "$build/lib/libhcomm.so" | awk '/hwloc|pmix|munge|libevent/ {print $3}'); do cp "$lib" "$bundle/deps/"; done
strip --strip-debug "$bundle"/bin/* "$bundle"/lib/*.so* "$bundle"/lib/hcomm/*.so 2>/dev/null || true
cat > "$bundle/run-gpu-tests.sh" <<'RUN'
#!/usr/bin/env bash
# The GPU tests: the CUDA device plugin's, the stream-ordered calls' (order,
# nonblocking requests, a peer that dies), then every collective on device buffers on 2 and 3 ranks of one GPU,
# blocking, stream-ordered and graph-captured, then hcomm-perf on device
# buffers.
# Exits non-zero if any failed.
here=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH=$here/lib:$here/deps HCOMM_PLUGIN_PATH=$here/lib/hcomm
export HCOMM_TIMEOUT=60 HCOMM_BOOTSTRAP_ADDR=127.0.0.1 HCOMM_TCP_IF_ADDR=127.0.0.1
fails=0
"$here/bin/hcomm_cuda_tests" || fails=$((fails + 1))
"$here/bin/hcomm_stream_order_test" --gtest_filter="*/cuda" || fails=$((fails + 1))
# ORDERS: host (blocking), stream (stream-ordered, in 64 KiB pieces where the
# collective is elementwise), graph (captured and replayed); RANKS likewise.
for order in ${ORDERS:-host stream graph}; do
  for n in ${RANKS:-2 3}; do
    for group in ${GROUPS:-allreduce broadcast reduce allgather allgatherv reduce_scatter reduce_scatter_v alltoall \
      alltoallv gather scatter scan exscan}; do
      out=$(HCOMM_STAGING_CHUNK_BYTES=64K "$here/bin/hcomm-run" -n "$n" --timeout 600 \
        "$here/bin/hcomm_collectives_test" "$group" --counts 0,1,7,1027 --large 1048581 --memory cuda \
        --order "$order" 2>&1)
      rc=$?
      echo "collectives.cuda.$order.${n}ranks.$group: exit $rc: $(echo "$out" | grep -m1 'device memory')"
      [ "$rc" -eq 0 ] || { fails=$((fails + 1)); echo "$out" | grep -m5 -E 'WRONG|rror'; }
    done
  done
done
# hcomm-perf on device buffers, when the repository's tests are beside the bundle.
perf_test=$here/../tests/tools/hcomm_perf_test.sh
if [ -f "$perf_test" ]; then
  bash "$perf_test" "$here/bin/hcomm-run" "$here/bin/hcomm-perf" memory_cuda || fails=$((fails + 1))
fi
echo "groups failed: $fails"
[ "$fails" -eq 0 ]
RUN
chmod +x "$bundle/run-gpu-tests.sh"
echo "gpu-bundle.sh: $(du -sh "$bundle" | cut -f1) in $bundle"
