// The device side of a stream-ordered call's wait for the host: one thread
// polls a flag in pinned host memory until the host sets it, then clears it
// for the stream's next wait.
#include "wait_flag.hpp"

namespace hcomm::cuda {

namespace {

__global__ void wait_for_flag(uint32_t* flag) {
  volatile uint32_t* f = flag;
  while (*f == 0) __nanosleep(1000);  // a read over the bus per microsecond, not a storm of them
  __threadfence_system();             // the work after the wait reads what the host wrote before the flag
  *f = 0;
}

}  // namespace

cudaError_t wait_flag(cudaStream_t stream, uint32_t* flag) {
  wait_for_flag<<<1, 1, 0, stream>>>(flag);
  return cudaGetLastError();
}

}  // namespace hcomm::cuda
