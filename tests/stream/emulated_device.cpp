// A device plugin for machines without a GPU: "device memory" is host
// memory it allocated, and each stream is a thread that runs its queued
// work in order (copies, host calls, flag waits, event marks and waits), as
// a GPU's stream would. It lets the core's stream-ordered calls
// (core/comm/stream_order.hpp) be tested where no GPU is; it is loaded only
// through HCOMM_PLUGIN_PATH (tests/stream/), never installed.
#include <sched.h>

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

#include "hcomm/plugin/device.h"
#include "hcomm/plugin/util.hpp"

namespace {

hcomm::plugin::Services g_services;

std::mutex g_memory_mutex;
std::map<uintptr_t, size_t> g_device;  // allocations that count as device memory: start, size

class Stream {
 public:
  Stream() : thread_([this] { run(); }) {}
  ~Stream() {
    queue([this] { stop_ = true; });
    thread_.join();
  }
  void queue(std::function<void()> work) {
    const std::lock_guard lock(mutex_);
    work_.push_back(std::move(work));
    changed_.notify_all();
  }
  void synchronize() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return work_.empty() && !busy_; });
  }

 private:
  void run() {
    while (!stop_) {
      std::function<void()> next;
      {
        std::unique_lock lock(mutex_);
        changed_.wait(lock, [&] { return !work_.empty(); });
        next = std::move(work_.front());
        work_.pop_front();
        busy_ = true;
      }
      next();
      const std::lock_guard lock(mutex_);
      busy_ = false;
      changed_.notify_all();
    }
  }
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::function<void()>> work_;
  bool busy_ = false;
  bool stop_ = false;  // set by the stream's own last work
  std::thread thread_;
};

// An event: marks recorded so far, and marks their streams reached.
struct Event {
  std::mutex mutex;
  std::condition_variable reached_changed;
  uint64_t recorded = 0;
  uint64_t reached = 0;
};

// The stream of calls without one (CUDA's legacy default stream), made at
// the first and never torn down: its thread lives as long as the process.
Stream* stream_of(void* stream) {
  static Stream* const standing = new Stream;
  return stream ? static_cast<Stream*>(stream) : standing;
}

hcomm_result_t init(const hcomm_plugin_services_t* services) {
  g_services.set(services);
  return HCOMM_SUCCESS;
}

int device_count() { return 1; }

hcomm_result_t pointer_attr(const void* ptr, hcomm_pointer_attr_t* attr) {
  *attr = {.size = sizeof(hcomm_pointer_attr_t), .mem_kind = HCOMM_MEM_HOST, .device = -1, .managed = 0,
           .pinned_host = 0};
  const auto p = reinterpret_cast<uintptr_t>(ptr);
  const std::lock_guard lock(g_memory_mutex);
  auto it = g_device.upper_bound(p);
  if (it != g_device.begin() && p < std::prev(it)->first + std::prev(it)->second) {
    attr->mem_kind = HCOMM_MEM_CUDA;
    attr->device = 0;
  }
  return HCOMM_SUCCESS;
}

hcomm_result_t alloc(size_t bytes, hcomm_device_alloc_kind_t kind, void** ptr) {
  *ptr = std::aligned_alloc(size_t{2} << 20, std::max<size_t>(size_t{2} << 20, (bytes + (2u << 20) - 1) & ~size_t{(2u << 20) - 1}));
  if (!*ptr) return HCOMM_ERR_SYSTEM;
  if (kind != HCOMM_DEVICE_ALLOC_PINNED_HOST) {
    const std::lock_guard lock(g_memory_mutex);
    g_device[reinterpret_cast<uintptr_t>(*ptr)] = std::max<size_t>(bytes, 1);
  }
  return HCOMM_SUCCESS;
}

hcomm_result_t free_memory(void* ptr, hcomm_device_alloc_kind_t) {
  {
    const std::lock_guard lock(g_memory_mutex);
    g_device.erase(reinterpret_cast<uintptr_t>(ptr));
  }
  std::free(ptr);
  return HCOMM_SUCCESS;
}

// Without a stream: after the standing stream's work, done at return.
hcomm_result_t copy(void* dst, const void* src, size_t bytes, void* stream) {
  stream_of(stream)->queue([=] { std::memcpy(dst, src, bytes); });
  if (!stream) stream_of(nullptr)->synchronize();
  return HCOMM_SUCCESS;
}

hcomm_result_t reduce(hcomm_dtype_t, hcomm_op_t, void*, const void*, const void*, size_t, int, void*) {
  g_services.set_error("emulated: reduce: not emulated (the core reduces staged data on the host)");
  return HCOMM_ERR_UNSUPPORTED;
}

hcomm_result_t synchronize(void* stream) {
  stream_of(stream)->synchronize();
  return HCOMM_SUCCESS;
}

int stream_count() { return 2; }

hcomm_result_t stream_create(void** stream) {
  *stream = new Stream;
  return HCOMM_SUCCESS;
}

hcomm_result_t stream_destroy(void* stream) {
  delete static_cast<Stream*>(stream);
  return HCOMM_SUCCESS;
}

hcomm_result_t event_create(void** event) {
  *event = new Event;
  return HCOMM_SUCCESS;
}

hcomm_result_t event_destroy(void* event) {
  delete static_cast<Event*>(event);
  return HCOMM_SUCCESS;
}

hcomm_result_t event_record(void* event, void* stream) {
  auto* e = static_cast<Event*>(event);
  uint64_t mark = 0;
  {
    const std::lock_guard lock(e->mutex);
    mark = ++e->recorded;
  }
  stream_of(stream)->queue([e, mark] {
    const std::lock_guard lock(e->mutex);
    e->reached = std::max(e->reached, mark);
    e->reached_changed.notify_all();
  });
  return HCOMM_SUCCESS;
}

hcomm_result_t stream_wait_event(void* stream, void* event) {
  auto* e = static_cast<Event*>(event);
  uint64_t mark = 0;
  {
    const std::lock_guard lock(e->mutex);
    mark = e->recorded;
  }
  stream_of(stream)->queue([e, mark] {
    std::unique_lock lock(e->mutex);
    e->reached_changed.wait(lock, [&] { return e->reached >= mark; });
  });
  return HCOMM_SUCCESS;
}

hcomm_result_t host_call(void* stream, void (*fn)(void*), void* arg) {
  stream_of(stream)->queue([fn, arg] { fn(arg); });
  return HCOMM_SUCCESS;
}

hcomm_result_t wait_flag(void* stream, uint32_t* flag) {
  stream_of(stream)->queue([flag] {
    while (__atomic_load_n(flag, __ATOMIC_ACQUIRE) == 0) sched_yield();
    __atomic_store_n(flag, 0u, __ATOMIC_RELAXED);
  });
  return HCOMM_SUCCESS;
}

hcomm_result_t capturing(void*, int* out) {
  *out = 0;
  return HCOMM_SUCCESS;
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
    .reduce = reduce,
    .synchronize = synchronize,
    .stream_count = stream_count,
    .stream_create = stream_create,
    .stream_destroy = stream_destroy,
    .event_create = event_create,
    .event_destroy = event_destroy,
    .event_record = event_record,
    .stream_wait_event = stream_wait_event,
    .host_call = host_call,
    .wait_flag = wait_flag,
    .capturing = capturing,
};

const hcomm_plugin_header_t kHeader = {
    .size = sizeof(hcomm_plugin_header_t),
    .abi_major = HCOMM_PLUGIN_ABI_MAJOR,
    .abi_minor = HCOMM_PLUGIN_ABI_MINOR,
    .kind = HCOMM_PLUGIN_DEVICE,
    .name = "emulated",
    .vendor = "HComm tests",
    .version = "1",
    .settings = nullptr,
    .num_settings = 0,
    .iface = &kInterface,
    .setting_size = sizeof(hcomm_setting_decl_t),
};

}  // namespace

extern "C" __attribute__((visibility("default"))) const hcomm_plugin_header_t* hcomm_plugin_v1(void) {
  return &kHeader;
}
