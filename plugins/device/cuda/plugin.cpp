// The CUDA device plugin: device memory told apart from the host's
// (cudaPointerGetAttributes), allocation of device and pinned host memory
// (never managed memory), copies, and the reduction kernels of reduce.cu,
// queued on the caller's stream or the legacy default one; and what
// stream-ordered calls queue: streams, events, host calls and the wait of
// wait_flag.cu. The CUDA runtime
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
#include "wait_flag.hpp"

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

// Allocation while a stream is captured into a graph: allowed, as the
// allocation is no work of the captured stream's.
class RelaxedCapture {
 public:
  RelaxedCapture() { (void)cudaThreadExchangeStreamCaptureMode(&mode_); }
  ~RelaxedCapture() { (void)cudaThreadExchangeStreamCaptureMode(&mode_); }
  RelaxedCapture(const RelaxedCapture&) = delete;
  RelaxedCapture& operator=(const RelaxedCapture&) = delete;

 private:
  cudaStreamCaptureMode mode_ = cudaStreamCaptureModeRelaxed;
};

hcomm_result_t alloc(size_t bytes, hcomm_device_alloc_kind_t kind, void** ptr) {
  const RelaxedCapture relaxed;
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
    // Mapped: a wait on the device reads flags in it (wait_flag).
    const cudaError_t e = cudaHostAlloc(ptr, bytes, cudaHostAllocPortable | cudaHostAllocMapped);
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

// Stream-ordered calls: HComm's own streams, events, host calls and waits.
constexpr const char* kStreams = "HCOMM_CUDA_STREAMS";
constexpr const char* kStreamPriority = "HCOMM_CUDA_STREAM_PRIORITY";

int stream_count() { return static_cast<int>(g_services.setting_int(kStreams)); }

hcomm_result_t stream_create(void** stream) {
  int least = 0, greatest = 0;
  cudaError_t e = cudaDeviceGetStreamPriorityRange(&least, &greatest);
  if (e != cudaSuccess) return fail("cudaDeviceGetStreamPriorityRange", e);
  const std::string wanted = g_services.setting(kStreamPriority);
  const int priority = wanted == "high" ? greatest : wanted == "low" ? least : 0;
  cudaStream_t s = nullptr;
  e = cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, priority);
  if (e != cudaSuccess) return fail("cudaStreamCreateWithPriority", e);
  *stream = s;
  return HCOMM_SUCCESS;
}

hcomm_result_t stream_destroy(void* stream) {
  const cudaError_t e = cudaStreamDestroy(static_cast<cudaStream_t>(stream));
  return e == cudaSuccess ? HCOMM_SUCCESS : fail("cudaStreamDestroy", e);
}

hcomm_result_t event_create(void** event) {
  cudaEvent_t ev = nullptr;
  const cudaError_t e = cudaEventCreateWithFlags(&ev, cudaEventDisableTiming);
  if (e != cudaSuccess) return fail("cudaEventCreateWithFlags", e);
  *event = ev;
  return HCOMM_SUCCESS;
}

hcomm_result_t event_destroy(void* event) {
  const cudaError_t e = cudaEventDestroy(static_cast<cudaEvent_t>(event));
  return e == cudaSuccess ? HCOMM_SUCCESS : fail("cudaEventDestroy", e);
}

hcomm_result_t event_record(void* event, void* stream) {
  const cudaError_t e = cudaEventRecord(static_cast<cudaEvent_t>(event), stream_of(stream));
  return e == cudaSuccess ? HCOMM_SUCCESS : fail("cudaEventRecord", e);
}

hcomm_result_t stream_wait_event(void* stream, void* event) {
  const cudaError_t e = cudaStreamWaitEvent(stream_of(stream), static_cast<cudaEvent_t>(event), 0);
  return e == cudaSuccess ? HCOMM_SUCCESS : fail("cudaStreamWaitEvent", e);
}

hcomm_result_t host_call(void* stream, void (*fn)(void*), void* arg) {
  const cudaError_t e = cudaLaunchHostFunc(stream_of(stream), fn, arg);
  return e == cudaSuccess ? HCOMM_SUCCESS : fail("cudaLaunchHostFunc", e);
}

hcomm_result_t wait_flag_on(void* stream, uint32_t* flag) {
  const cudaError_t e = wait_flag(stream_of(stream), flag);
  return e == cudaSuccess ? HCOMM_SUCCESS : fail("wait_flag (kernel launch)", e);
}

hcomm_result_t capturing(void* stream, int* out) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  const cudaError_t e = cudaStreamIsCapturing(stream_of(stream), &status);
  if (e != cudaSuccess) return fail("cudaStreamIsCapturing", e);
  *out = status == cudaStreamCaptureStatusActive;
  return HCOMM_SUCCESS;
}

const hcomm_setting_decl_t kSettings[] = {
    {.name = kStreams,
     .type = HCOMM_SETTING_INT,
     .default_value = "2",
     .doc = "Streams each communicator queues its stream-ordered work on, used in turn, so that one call's copies "
            "overlap the next one's.",
     .min = "1",
     .max = "16"},
    {.name = kStreamPriority,
     .type = HCOMM_SETTING_STRING,
     .default_value = "high",
     .doc = "Priority of those streams: high (the device's highest: communication is not held up behind "
            "computation), default, or low.",
     .values = "high,default,low"},
};

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
    .stream_count = stream_count,
    .stream_create = stream_create,
    .stream_destroy = stream_destroy,
    .event_create = event_create,
    .event_destroy = event_destroy,
    .event_record = event_record,
    .stream_wait_event = stream_wait_event,
    .host_call = host_call,
    .wait_flag = wait_flag_on,
    .capturing = capturing,
};

const hcomm_plugin_header_t kHeader = {
    .size = sizeof(hcomm_plugin_header_t),
    .abi_major = HCOMM_PLUGIN_ABI_MAJOR,
    .abi_minor = HCOMM_PLUGIN_ABI_MINOR,
    .kind = HCOMM_PLUGIN_DEVICE,
    .name = "cuda",
    .vendor = "HComm",
    .version = HCOMM_CUDA_VERSION,
    .settings = kSettings,
    .num_settings = sizeof kSettings / sizeof kSettings[0],
    .iface = &kInterface,
    .setting_size = sizeof(hcomm_setting_decl_t),
};

}  // namespace

}  // namespace hcomm::cuda

extern "C" __attribute__((visibility("default"))) const hcomm_plugin_header_t* hcomm_plugin_v1(void) {
  return &hcomm::cuda::kHeader;
}
