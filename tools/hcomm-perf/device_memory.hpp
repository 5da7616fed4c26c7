// Device memory for --memory cuda: hcomm-perf allocates and fills device
// buffers itself (the core links no device runtime, this tool does where
// CMake found the CUDA Toolkit). Each function throws std::runtime_error
// naming the failed call, or saying that this build has no CUDA.
#pragma once

#include <cstddef>

namespace hcomm::perf::device {

void* allocate(size_t bytes);  // cudaMalloc
void release(void* ptr);
void to_device(void* dst, const void* src, size_t bytes);
void to_host(void* dst, const void* src, size_t bytes);
void within_device(void* dst, const void* src, size_t bytes);
// --stream: hcomm-perf's stream (made at the first call), and the wait for its work.
void* stream();
void synchronize(void* stream);

}  // namespace hcomm::perf::device
