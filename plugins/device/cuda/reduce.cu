// The reduction kernels of the CUDA device: one grid-stride loop per element
// format and operation, 16 bytes per thread and load where the three buffers
// allow it, so that a reduction streams at the memory's bandwidth. Results
// match the core's CPU kernels bit for bit (core/device/reduce.hpp).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "reduce.hpp"

namespace hcomm::cuda {

namespace {

// Sums and products of integers wrap: computed in the unsigned type.
template <class T>
__device__ T add(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return a + b;
  }
}
template <class T>
__device__ T multiply(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    // uint8 * uint8 promotes to int, which may overflow: widen first.
    using W = std::conditional_t<(sizeof(U) < sizeof(unsigned)), unsigned, U>;
    return static_cast<T>(static_cast<U>(static_cast<W>(static_cast<U>(a)) * static_cast<W>(static_cast<U>(b))));
  } else {
    return a * b;
  }
}

// IEEE 754-2019 minimum (kMax false) and maximum: NaN where either is NaN;
// -0 < +0.
template <bool kMax, class T>
__device__ T extremum(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (isnan(a) || isnan(b)) return a + b;
    if (a == b) return (signbit(a) != 0) == kMax ? b : a;
  }
  return (kMax ? a < b : b < a) ? b : a;
}

// Integers truncate toward zero; 64-bit ones divide as they are.
template <class T>
__device__ T divide(T v, int divisor) {
  if constexpr (std::is_floating_point_v<T>) {
    return v / static_cast<T>(divisor);
  } else if constexpr (std::is_signed_v<T>) {
    return static_cast<T>(static_cast<int64_t>(v) / divisor);
  } else {
    return static_cast<T>(static_cast<uint64_t>(v) / static_cast<uint64_t>(divisor));
  }
}

// Element formats: the stored type and the type arithmetic happens in.
template <class S>
struct Format {
  using Stored = S;
  using Math = S;
  __device__ static Math load(S s) { return s; }
  __device__ static S store(Math m) { return m; }
};
template <>
struct Format<__half> {
  using Stored = __half;
  using Math = float;
  __device__ static float load(__half s) { return __half2float(s); }
  __device__ static __half store(float m) { return __float2half_rn(m); }
};
template <>
struct Format<__nv_bfloat16> {
  using Stored = __nv_bfloat16;
  using Math = float;
  __device__ static float load(__nv_bfloat16 s) { return __bfloat162float(s); }
  __device__ static __nv_bfloat16 store(float m) { return __float2bfloat16_rn(m); }
};

template <class F, hcomm_op_t kOp>
__device__ typename F::Stored combine(typename F::Stored x, typename F::Stored y, int divisor) {
  using M = typename F::Math;
  const M a = F::load(x), b = F::load(y);
  M r;
  if constexpr (kOp == HCOMM_SUM || kOp == HCOMM_AVG) r = add(a, b);
  if constexpr (kOp == HCOMM_PROD) r = multiply(a, b);
  if constexpr (kOp == HCOMM_MIN) r = extremum<false>(a, b);
  if constexpr (kOp == HCOMM_MAX) r = extremum<true>(a, b);
  if constexpr (kOp == HCOMM_AVG) {
    if (divisor > 1) r = divide(r, divisor);
  }
  return F::store(r);
}

// 16 bytes of elements, loaded and stored at once.
template <class S>
struct alignas(16) Pack {
  S lanes[16 / sizeof(S)];
};

template <class F, hcomm_op_t kOp>
__global__ void reduce_packs(Pack<typename F::Stored>* dst, const Pack<typename F::Stored>* a,
                             const Pack<typename F::Stored>* b, size_t packs, int divisor) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < packs;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const Pack<typename F::Stored> x = a[i], y = b[i];
    Pack<typename F::Stored> r;
#pragma unroll
    for (size_t k = 0; k < sizeof(r.lanes) / sizeof(r.lanes[0]); ++k)
      r.lanes[k] = combine<F, kOp>(x.lanes[k], y.lanes[k], divisor);
    dst[i] = r;
  }
}

template <class F, hcomm_op_t kOp>
__global__ void reduce_elements(typename F::Stored* dst, const typename F::Stored* a, const typename F::Stored* b,
                                size_t count, int divisor) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<size_t>(gridDim.x) * blockDim.x)
    dst[i] = combine<F, kOp>(a[i], b[i], divisor);
}

constexpr int kThreads = 512;

// Enough blocks to fill the device a few times over; the loops stride.
unsigned blocks_for(size_t items, int multiprocessors) {
  const size_t wanted = (items + kThreads - 1) / kThreads;
  const size_t most = static_cast<size_t>(multiprocessors) * 8;
  return static_cast<unsigned>(wanted < most ? (wanted ? wanted : 1) : most);
}

bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15) == 0; }

template <class F, hcomm_op_t kOp>
cudaError_t launch(void* dst, const void* a, const void* b, size_t count, int divisor, int multiprocessors,
                   cudaStream_t stream) {
  using S = typename F::Stored;
  constexpr size_t kPerPack = 16 / sizeof(S);
  auto* d = static_cast<S*>(dst);
  auto* x = static_cast<const S*>(a);
  auto* y = static_cast<const S*>(b);
  size_t done = 0;
  if (aligned16(d) && aligned16(x) && aligned16(y)) {
    const size_t packs = count / kPerPack;
    if (packs)
      reduce_packs<F, kOp><<<blocks_for(packs, multiprocessors), kThreads, 0, stream>>>(
          reinterpret_cast<Pack<S>*>(d), reinterpret_cast<const Pack<S>*>(x), reinterpret_cast<const Pack<S>*>(y),
          packs, divisor);
    done = packs * kPerPack;
  }
  if (done < count)
    reduce_elements<F, kOp><<<blocks_for(count - done, multiprocessors), kThreads, 0, stream>>>(
        d + done, x + done, y + done, count - done, divisor);
  return cudaGetLastError();
}

template <class S>
cudaError_t launch_op(hcomm_op_t op, void* dst, const void* a, const void* b, size_t count, int divisor,
                      int multiprocessors, cudaStream_t stream) {
  switch (op) {
    case HCOMM_SUM: return launch<Format<S>, HCOMM_SUM>(dst, a, b, count, divisor, multiprocessors, stream);
    case HCOMM_PROD: return launch<Format<S>, HCOMM_PROD>(dst, a, b, count, divisor, multiprocessors, stream);
    case HCOMM_MIN: return launch<Format<S>, HCOMM_MIN>(dst, a, b, count, divisor, multiprocessors, stream);
    case HCOMM_MAX: return launch<Format<S>, HCOMM_MAX>(dst, a, b, count, divisor, multiprocessors, stream);
    case HCOMM_AVG: return launch<Format<S>, HCOMM_AVG>(dst, a, b, count, divisor, multiprocessors, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace

cudaError_t reduce(hcomm_dtype_t dtype, hcomm_op_t op, void* dst, const void* a, const void* b, size_t count,
                   int divisor, int multiprocessors, cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  switch (dtype) {
    case HCOMM_INT8: return launch_op<int8_t>(op, dst, a, b, count, divisor, multiprocessors, stream);
    case HCOMM_UINT8: return launch_op<uint8_t>(op, dst, a, b, count, divisor, multiprocessors, stream);
    case HCOMM_INT32: return launch_op<int32_t>(op, dst, a, b, count, divisor, multiprocessors, stream);
    case HCOMM_UINT32: return launch_op<uint32_t>(op, dst, a, b, count, divisor, multiprocessors, stream);
    case HCOMM_INT64: return launch_op<int64_t>(op, dst, a, b, count, divisor, multiprocessors, stream);
    case HCOMM_UINT64: return launch_op<uint64_t>(op, dst, a, b, count, divisor, multiprocessors, stream);
    case HCOMM_FLOAT16: return launch_op<__half>(op, dst, a, b, count, divisor, multiprocessors, stream);
    case HCOMM_BFLOAT16: return launch_op<__nv_bfloat16>(op, dst, a, b, count, divisor, multiprocessors, stream);
    case HCOMM_FLOAT32: return launch_op<float>(op, dst, a, b, count, divisor, multiprocessors, stream);
    case HCOMM_FLOAT64: return launch_op<double>(op, dst, a, b, count, divisor, multiprocessors, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace hcomm::cuda
