#include "device_memory.hpp"

#include <stdexcept>
#include <string>

#ifdef HCOMM_PERF_CUDA
#include <cuda_runtime_api.h>
#endif

namespace hcomm::perf::device {

#ifdef HCOMM_PERF_CUDA

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + " failed: " + cudaGetErrorString(e));
}

}  // namespace

void* allocate(size_t bytes) {
  void* p = nullptr;
  check(cudaMalloc(&p, bytes), "cudaMalloc");
  return p;
}

void release(void* ptr) { (void)cudaFree(ptr); }

void to_device(void* dst, const void* src, size_t bytes) {
  check(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice), "cudaMemcpy to the device");
}

void to_host(void* dst, const void* src, size_t bytes) {
  check(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy to the host");
}

void within_device(void* dst, const void* src, size_t bytes) {
  check(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToDevice), "cudaMemcpy on the device");
}

void* stream() {
  static cudaStream_t made = [] {
    cudaStream_t s = nullptr;
    check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    return s;
  }();
  return made;
}

void synchronize(void* s) { check(cudaStreamSynchronize(static_cast<cudaStream_t>(s)), "cudaStreamSynchronize"); }

#else

namespace {

[[noreturn]] void absent() {
  throw std::runtime_error("--memory cuda: this hcomm-perf was built without CUDA (no CUDA Toolkit at configure time)");
}

}  // namespace

void* allocate(size_t) { absent(); }
void release(void*) {}
void to_device(void*, const void*, size_t) { absent(); }
void to_host(void*, const void*, size_t) { absent(); }
void within_device(void*, const void*, size_t) { absent(); }
void* stream() { absent(); }
void synchronize(void*) { absent(); }

#endif

}  // namespace hcomm::perf::device
