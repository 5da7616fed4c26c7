// Device memory as the collectives test uses it (--memory cuda|emulated):
// CUDA's, through its runtime, or the emulated device's
// (tests/stream/emulated_device.cpp: host memory and a thread per stream,
// which the core loads through HCOMM_PLUGIN_PATH), through its plugin
// interface. Failures end the rank through `fail`.
#pragma once

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>

#include "hcomm/plugin/device.h"
#ifdef HCOMM_TEST_CUDA
#include <cuda_runtime_api.h>
#endif

namespace hcomm::test {

class DeviceMemory {
 public:
  using Fail = std::function<void(const std::string&)>;
  virtual ~DeviceMemory() = default;
  virtual void* alloc(size_t bytes) = 0;
  virtual void release(void* p) = 0;
  // Host memory the device copies from and to without staging (pinned).
  virtual void* alloc_host(size_t bytes) = 0;
  virtual void release_host(void* p) = 0;
  // Synchronous with a null stream.
  virtual void copy(void* dst, const void* src, size_t bytes, void* stream) = 0;
  virtual void fill(void* p, int byte, size_t bytes) = 0;
  // Holds the stream's later work back a moment.
  virtual void hold_back(void* stream) = 0;
  virtual void synchronize(void* stream) = 0;
  // The test's stream, made at the first call.
  virtual void* stream() = 0;
};

inline void hold_back_a_moment(void*) { usleep(1000); }

#ifdef HCOMM_TEST_CUDA
class CudaMemory final : public DeviceMemory {
 public:
  explicit CudaMemory(Fail fail) : fail_(std::move(fail)) {}
  void* alloc(size_t bytes) override {
    void* p = nullptr;
    check(cudaMalloc(&p, bytes), "cudaMalloc");
    return p;
  }
  void release(void* p) override { cudaFree(p); }
  void* alloc_host(size_t bytes) override {
    void* p = nullptr;
    check(cudaMallocHost(&p, bytes), "cudaMallocHost");
    return p;
  }
  void release_host(void* p) override { cudaFreeHost(p); }
  void copy(void* dst, const void* src, size_t bytes, void* stream) override {
    check(stream ? cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, static_cast<cudaStream_t>(stream))
                 : cudaMemcpy(dst, src, bytes, cudaMemcpyDefault),
          "cudaMemcpy");
  }
  void fill(void* p, int byte, size_t bytes) override { check(cudaMemset(p, byte, bytes), "cudaMemset"); }
  void hold_back(void* stream) override {
    check(cudaLaunchHostFunc(static_cast<cudaStream_t>(stream), hold_back_a_moment, nullptr), "cudaLaunchHostFunc");
  }
  void synchronize(void* stream) override {
    check(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)), "cudaStreamSynchronize");
  }
  void* stream() override {
    if (!stream_) check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    return stream_;
  }
  void check(cudaError_t e, const char* what) {
    if (e != cudaSuccess) fail_(std::string(what) + ": " + cudaGetErrorString(e));
  }

 private:
  Fail fail_;
  cudaStream_t stream_ = nullptr;
};
#endif

#ifdef HCOMM_EMULATED_DEVICE_DIR
class EmulatedMemory final : public DeviceMemory {
 public:
  static constexpr const char* kDir = HCOMM_EMULATED_DEVICE_DIR;
  explicit EmulatedMemory(Fail fail) : fail_(std::move(fail)) {
    void* lib = dlopen(HCOMM_EMULATED_DEVICE_DIR "/libhcomm_device_emulated.so", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      fail_(std::string("dlopen of the emulated device: ") + dlerror());
      return;
    }
    auto entry = reinterpret_cast<const hcomm_plugin_header_t* (*)()>(dlsym(lib, HCOMM_PLUGIN_SYMBOL));
    device_ = static_cast<const hcomm_device_v1_t*>(entry()->iface);
  }
  void* alloc(size_t bytes) override { return allocate(bytes, HCOMM_DEVICE_ALLOC_DEVICE); }
  void release(void* p) override { device_->free(p, HCOMM_DEVICE_ALLOC_DEVICE); }
  void* alloc_host(size_t bytes) override { return allocate(bytes, HCOMM_DEVICE_ALLOC_PINNED_HOST); }
  void release_host(void* p) override { device_->free(p, HCOMM_DEVICE_ALLOC_PINNED_HOST); }
  void copy(void* dst, const void* src, size_t bytes, void* stream) override {
    device_->copy(dst, src, bytes, stream);
  }
  void fill(void* p, int byte, size_t bytes) override { std::memset(p, byte, bytes); }
  void hold_back(void* stream) override { device_->host_call(stream, hold_back_a_moment, nullptr); }
  void synchronize(void* stream) override { device_->synchronize(stream); }
  void* stream() override {
    if (!stream_) device_->stream_create(&stream_);
    return stream_;
  }

 private:
  void* allocate(size_t bytes, hcomm_device_alloc_kind_t kind) {
    void* p = nullptr;
    if (device_->alloc(bytes, kind, &p) != HCOMM_SUCCESS) fail_("the emulated device's alloc failed");
    return p;
  }
  Fail fail_;
  const hcomm_device_v1_t* device_ = nullptr;
  void* stream_ = nullptr;
};
#endif

}  // namespace hcomm::test
