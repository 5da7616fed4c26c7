// The CUDA device plugin: device memory told apart from the host's
// (cudaPointerGetAttributes), allocation of device and pinned host memory
// (never managed memory), copies, and the reduction kernels of reduce.cu,
// queued on the caller's stream or the legacy default one. The CUDA runtime
// is linked statically, so that the plugin needs only the driver; without a
// driver or a device it loads and reports no device.
#include <cuda_runtime_api.h>
#include <unistd.h>

#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "hcomm/plugin/device.h"
#include "hcomm/plugin/util.hpp"
#include "reduce.hpp"

#ifndef HCOMM_CUDA_VERSION
#error "HCOMM_CUDA_VERSION must be defined by the build"
#endif

namespace hcomm::cuda {

namespace {

hcomm::plugin::Services g_services;

// A failed runtime call as an error: what was called and the runtime's words.
hcomm_result_t fail(const char* what, cudaError_t e) {
  g_services.set_error(std::string("cuda: ") + what + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) +
                       ")");
  return e == cudaErrorInvalidValue ? HCOMM_ERR_INVALID_ARGUMENT : HCOMM_ERR_SYSTEM;
}

std::mutex g_mutex;  // of the tables below

// Per device: its multiprocessors, which size the kernels' grid.
std::vector<int> g_multiprocessors;

cudaError_t multiprocessors(int ordinal, int* out) {
  const std::lock_guard lock(g_mutex);
  if (ordinal < 0) return cudaErrorInvalidDevice;
  if (g_multiprocessors.size() <= static_cast<size_t>(ordinal)) g_multiprocessors.resize(static_cast<size_t>(ordinal) + 1);
  int& m = g_multiprocessors[static_cast<size_t>(ordinal)];
  if (m == 0) {
    const cudaError_t e = cudaDeviceGetAttribute(&m, cudaDevAttrMultiProcessorCount, ordinal);
    if (e != cudaSuccess) return e;
  }
  *out = m;
  return cudaSuccess;
}

// A call without a stream runs on the legacy default stream, so that it comes
// after the work of every blocking stream, as cudaMemcpy does (a pageable
// cudaMemcpy to the device may return before its data arrived), and returns
// once done.
cudaStream_t stream_of(void* given) { return given ? static_cast<cudaStream_t>(given) : cudaStreamLegacy; }

hcomm_result_t init(const hcomm_plugin_services_t* services) {
  g_services.set(services);
  return HCOMM_SUCCESS;
}

// A machine without NVIDIA's device nodes (or WSL's /dev/dxg) has no device
// to find: the runtime is then never started, so that processes there carry
// none of it.
bool driver_present() {
  return access("/dev/nvidiactl", F_OK) == 0 || access("/dev/nvidia0", F_OK) == 0 || access("/dev/dxg", F_OK) == 0;
}

int device_count() {
  if (!driver_present()) {
    g_services.set_error("cuda: no NVIDIA device nodes (/dev/nvidiactl): no driver or no GPU here");
    return 0;
  }
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    fail("cudaGetDeviceCount", e);
    (void)cudaGetLastError();
    return 0;
  }
  return n;
}

hcomm_result_t pointer_attr(const void* ptr, hcomm_pointer_attr_t* attr) {
  if (!attr || attr->size < sizeof(hcomm_pointer_attr_t)) {
    g_services.set_error("cuda: pointer_attr: attr is NULL or smaller than hcomm_pointer_attr_t");
    return HCOMM_ERR_INVALID_ARGUMENT;
  }
  *attr = {.size = sizeof(hcomm_pointer_attr_t), .mem_kind = HCOMM_MEM_HOST, .device = -1, .managed = 0,
           .pinned_host = 0};
  cudaPointerAttributes a{};
  const cudaError_t e = cudaPointerGetAttributes(&a, ptr);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();  // a pointer the runtime does not know is host memory
    return HCOMM_SUCCESS;
  }
  switch (a.type) {
    case cudaMemoryTypeDevice:
      attr->mem_kind = HCOMM_MEM_CUDA;
      attr->device = a.device;
      break;
    case cudaMemoryTypeManaged:
      attr->mem_kind = HCOMM_MEM_CUDA;
      attr->device = a.device;
      attr->managed = 1;
      break;
    case cudaMemoryTypeHost:
      attr->pinned_host = 1;
      break;
    default:
      break;
  }
  return HCOMM_SUCCESS;
}

// Shareable allocations whose start was moved up to a 2 MiB boundary: the
// address handed out and the one cudaMalloc returned (which IPC exports).
constexpr uintptr_t kShareableAlignment = uintptr_t{2} << 20;
std::unordered_map<void*, void*> g_shifted;

// cudaMalloc places allocations of whole 2 MiB units at 2 MiB boundaries as a
// rule; where it did not, a larger one is cut to the boundary.
hcomm_result_t alloc_shareable(size_t bytes, void** ptr) {
  const size_t rounded = (bytes + kShareableAlignment - 1) & ~(kShareableAlignment - 1);
  cudaError_t e = cudaMalloc(ptr, rounded);
  if (e != cudaSuccess) return fail("cudaMalloc", e);
  if ((reinterpret_cast<uintptr_t>(*ptr) & (kShareableAlignment - 1)) == 0) return HCOMM_SUCCESS;
  (void)cudaFree(*ptr);
  void* base = nullptr;
  e = cudaMalloc(&base, rounded + kShareableAlignment);
  if (e != cudaSuccess) return fail("cudaMalloc", e);
  *ptr = reinterpret_cast<void*>((reinterpret_cast<uintptr_t>(base) + kShareableAlignment - 1) &
                                 ~(kShareableAlignment - 1));
  const std::lock_guard lock(g_mutex);
  g_shifted[*ptr] = base;
  return HCOMM_SUCCESS;
}

hcomm_result_t alloc(size_t bytes, hcomm_device_alloc_kind_t kind, void** ptr) {
  if (!ptr) {
    g_services.set_error("cuda: alloc: ptr is NULL");
    return HCOMM_ERR_INVALID_ARGUMENT;
  }
  *ptr = nullptr;
  if (kind == HCOMM_DEVICE_ALLOC_DEVICE) {
    const cudaError_t e = cudaMalloc(ptr, bytes);
    return e == cudaSuccess ? HCOMM_SUCCESS : fail("cudaMalloc", e);
  }
  if (kind == HCOMM_DEVICE_ALLOC_SHAREABLE) return alloc_shareable(bytes, ptr);
  if (kind == HCOMM_DEVICE_ALLOC_PINNED_HOST) {
    const cudaError_t e = cudaHostAlloc(ptr, bytes, cudaHostAllocPortable);
    return e == cudaSuccess ? HCOMM_SUCCESS : fail("cudaHostAlloc", e);
  }
  g_services.set_error("cuda: alloc: kind " + std::to_string(kind) + " is not an hcomm_device_alloc_kind_t");
  return HCOMM_ERR_INVALID_ARGUMENT;
}

hcomm_result_t free_memory(void* ptr, hcomm_device_alloc_kind_t kind) {
  if (kind == HCOMM_DEVICE_ALLOC_SHAREABLE) {
    const std::lock_guard lock(g_mutex);
    if (auto it = g_shifted.find(ptr); it != g_shifted.end()) {
      ptr = it->second;
      g_shifted.erase(it);
    }
  }
  const cudaError_t e = kind == HCOMM_DEVICE_ALLOC_PINNED_HOST ? cudaFreeHost(ptr) : cudaFree(ptr);
  return e == cudaSuccess ? HCOMM_SUCCESS : fail(kind == HCOMM_DEVICE_ALLOC_PINNED_HOST ? "cudaFreeHost" : "cudaFree", e);
}

hcomm_result_t synchronize(void* given) {
  const cudaError_t e = cudaStreamSynchronize(stream_of(given));
  return e == cudaSuccess ? HCOMM_SUCCESS : fail("cudaStreamSynchronize", e);
}

hcomm_result_t copy(void* dst, const void* src, size_t bytes, void* given) {
  if (bytes == 0) return HCOMM_SUCCESS;
  const cudaStream_t stream = stream_of(given);
  cudaError_t e = cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream);
  if (e == cudaSuccess && !given) e = cudaStreamSynchronize(stream);
  return e == cudaSuccess ? HCOMM_SUCCESS : fail("copy (cudaMemcpyAsync)", e);
}

hcomm_result_t reduce_on_device(hcomm_dtype_t dtype, hcomm_op_t op, void* dst, const void* a, const void* b,
                                size_t count, int avg_divisor, void* given) {
  if (static_cast<unsigned>(dtype) >= HCOMM_NUM_DTYPES || static_cast<unsigned>(op) >= HCOMM_NUM_OPS) {
    g_services.set_error("cuda: reduce: dtype " + std::to_string(dtype) + " or op " + std::to_string(op) +
                         " out of range");
    return HCOMM_ERR_INVALID_ARGUMENT;
  }
  if (count == 0) return HCOMM_SUCCESS;
  hcomm_pointer_attr_t where{.size = sizeof where};
  pointer_attr(dst, &where);
  if (where.mem_kind != HCOMM_MEM_CUDA) {
    g_services.set_error("cuda: reduce: dst is not device memory");
    return HCOMM_ERR_INVALID_ARGUMENT;
  }
  int current = 0;
  cudaError_t e = cudaGetDevice(&current);
  if (e == cudaSuccess && current != where.device) e = cudaSetDevice(where.device);
  const cudaStream_t stream = stream_of(given);
  int sms = 0;
  if (e == cudaSuccess) e = multiprocessors(where.device, &sms);
  if (e == cudaSuccess) e = reduce(dtype, op, dst, a, b, count, avg_divisor, sms, stream);
  if (e == cudaSuccess && !given) e = cudaStreamSynchronize(stream);
  if (current != where.device) (void)cudaSetDevice(current);
  return e == cudaSuccess ? HCOMM_SUCCESS : fail("reduce", e);
}

const hcomm_device_v1_t kInterface = {
    .size = sizeof(hcomm_device_v1_t),
    .init = init,
    .mem_kind = HCOMM_MEM_CUDA,
    .device_count = device_count,
    .pointer_attr = pointer_attr,
    .alloc = alloc,
    .free = free_memory,
    .copy = copy,
    .reduce = reduce_on_device,
    .synchronize = synchronize,
};

const hcomm_plugin_header_t kHeader = {
    .size = sizeof(hcomm_plugin_header_t),
    .abi_major = HCOMM_PLUGIN_ABI_MAJOR,
    .abi_minor = HCOMM_PLUGIN_ABI_MINOR,
    .kind = HCOMM_PLUGIN_DEVICE,
    .name = "cuda",
    .vendor = "HComm",
    .version = HCOMM_CUDA_VERSION,
    .settings = nullptr,
    .num_settings = 0,
    .iface = &kInterface,
    .setting_size = sizeof(hcomm_setting_decl_t),
};

}  // namespace

}  // namespace hcomm::cuda

extern "C" __attribute__((visibility("default"))) const hcomm_plugin_header_t* hcomm_plugin_v1(void) {
  return &hcomm::cuda::kHeader;
}
