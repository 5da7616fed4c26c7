// The kernel of hcomm_device_v1_t.wait_flag (wait_flag.cu).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace hcomm::cuda {

// Queues on `stream` a wait until *flag (pinned host memory) is non-zero,
// which then sets it back to 0.
cudaError_t wait_flag(cudaStream_t stream, uint32_t* flag);

}  // namespace hcomm::cuda
