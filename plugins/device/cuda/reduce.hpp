// The CUDA device's reduction kernels (reduce.cu).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "hcomm/types.h"

namespace hcomm::cuda {

// Queues dst[i] = a[i] op b[i] for i < count on `stream`, with the semantics
// of hcomm_device_v1_t.reduce; `multiprocessors` sizes the grid.
cudaError_t reduce(hcomm_dtype_t dtype, hcomm_op_t op, void* dst, const void* a, const void* b, size_t count,
                   int divisor, int multiprocessors, cudaStream_t stream);

}  // namespace hcomm::cuda
