// Throughput of the CUDA device plugin's reduction kernels: SUM of two
// buffers of ARRAY_BYTES (default 1 GiB) into a third, for float32 and
// bfloat16 (and every other dtype with --all), beside a device-to-device copy
// of the same bytes in the same run. Figures are GB/s of memory traffic: a
// reduction reads two arrays and writes one (3 x the bytes of one array), a
// copy reads and writes one (2 x). Each figure is the median of 9 event-timed
// runs, kernels and copies interleaved.
//
//   hcomm_device_reduce_bench [--all] [ARRAY_BYTES]
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/common/error.hpp"
#include "core/common/names.hpp"
#include "core/plugin/loader.hpp"
#include "core/plugin/services.hpp"
#include "hcomm/hcomm.h"
#include "hcomm/plugin/device.h"

namespace {

constexpr int kRuns = 9;

void check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
  std::exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  bool all = false;
  size_t bytes = size_t{1} << 30;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--all") == 0) all = true;
    else bytes = std::strtoull(argv[i], nullptr, 0);
  }
  const hcomm_device_v1_t* dev = nullptr;
  for (const hcomm::plugin::PluginInfo& p : hcomm::plugin::load_all())
    if (p.expected_kind == HCOMM_PLUGIN_DEVICE && p.expected_name == "cuda" && p.loaded())
      dev = static_cast<const hcomm_device_v1_t*>(p.header->iface);
  if (!dev || dev->init(hcomm::plugin::services()) != HCOMM_SUCCESS || dev->device_count() < 1) {
    std::fprintf(stderr, "no CUDA device plugin or no device: %s\n", hcomm::last_error());
    return 77;
  }
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  std::printf("# %s, %d SMs; arrays of %zu bytes; GB/s of traffic (reduce 3x, copy 2x the array), median of %d\n",
              prop.name, prop.multiProcessorCount, bytes, kRuns);
  std::printf("# %-9s %12s %12s %10s\n", "dtype", "reduce", "copy", "reduce/copy");
  void *a = nullptr, *b = nullptr, *d = nullptr;
  for (void** p : {&a, &b, &d})
    if (dev->alloc(bytes, HCOMM_DEVICE_ALLOC_DEVICE, p) != HCOMM_SUCCESS) {
      std::fprintf(stderr, "%s\n", hcomm::last_error());
      return 1;
    }
  check(cudaMemset(a, 0, bytes), "cudaMemset");
  check(cudaMemset(b, 0, bytes), "cudaMemset");
  cudaStream_t stream = nullptr;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  cudaEvent_t start = nullptr, stop = nullptr;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  auto time_ms = [&](auto&& work) {
    check(cudaEventRecord(start, stream), "cudaEventRecord");
    work();
    check(cudaEventRecord(stop, stream), "cudaEventRecord");
    check(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    return static_cast<double>(ms);
  };
  std::vector<hcomm_dtype_t> dtypes = {HCOMM_FLOAT32, HCOMM_BFLOAT16};
  if (all) {
    dtypes.clear();
    for (int t = 0; t < HCOMM_NUM_DTYPES; ++t) dtypes.push_back(static_cast<hcomm_dtype_t>(t));
  }
  for (hcomm_dtype_t t : dtypes) {
    const size_t count = bytes / hcomm::dtype_size(t);
    std::vector<double> reduce_ms, copy_ms;
    for (int run = -1; run < kRuns; ++run) {  // run -1 warms up
      const double r = time_ms([&] { dev->reduce(t, HCOMM_SUM, d, a, b, count, 1, stream); });
      const double c = time_ms([&] { dev->copy(d, a, count * hcomm::dtype_size(t), stream); });
      if (run >= 0) reduce_ms.push_back(r), copy_ms.push_back(c);
    }
    std::sort(reduce_ms.begin(), reduce_ms.end());
    std::sort(copy_ms.begin(), copy_ms.end());
    const double gb = static_cast<double>(count * hcomm::dtype_size(t)) / 1e9;
    const double reduce_rate = 3 * gb / (reduce_ms[kRuns / 2] / 1e3), copy_rate = 2 * gb / (copy_ms[kRuns / 2] / 1e3);
    std::printf("  %-9s %12.1f %12.1f %10.3f\n", hcomm_dtype_name(t), reduce_rate, copy_rate, reduce_rate / copy_rate);
  }
  for (void* p : {a, b, d}) dev->free(p, HCOMM_DEVICE_ALLOC_DEVICE);
  return 0;
}
