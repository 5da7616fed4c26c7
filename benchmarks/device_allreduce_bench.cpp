// Allreduce on CUDA device buffers (staged through pinned host memory by the
// core) against the same call on host buffers, in one run: float32 sum, 8 B
// to MAX_BYTES (default 256 MiB) by factors of 4, blocking calls back to
// back, the median of each size's timed calls (host and device interleaved,
// a barrier before each); then stream-ordered calls on the device buffers,
// queued back to back. Run under hcomm-run; rank 0 prints
//
//   size(B)  host(us)  device(us)  device/host  stream(us)  stream/device
//
//   hcomm-run -n 2 hcomm_device_allreduce_bench [MAX_BYTES]
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "hcomm/hcomm.h"

namespace {

void check(hcomm_result_t r, const char* what) {
  if (r == HCOMM_SUCCESS) return;
  std::fprintf(stderr, "%s: %s\n", what, hcomm_get_last_error());
  std::exit(1);
}
void check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
  std::exit(1);
}

double median_us(hcomm_comm_t comm, void* send, void* recv, size_t count, int iters) {
  std::vector<double> us;
  for (int i = -2; i < iters; ++i) {
    check(hcomm_barrier(comm, nullptr), "hcomm_barrier");
    const auto start = std::chrono::steady_clock::now();
    check(hcomm_allreduce(send, recv, count, HCOMM_FLOAT32, HCOMM_SUM, comm, nullptr), "hcomm_allreduce");
    const double t = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    if (i >= 0) us.push_back(t);
  }
  std::sort(us.begin(), us.end());
  return us[us.size() / 2];
}

// Stream-ordered: `iters` calls queued back to back on `stream`, then one
// synchronisation; the time per call (consecutive calls' copies and
// transfers overlap), the best of three such runs.
double stream_us(hcomm_comm_t comm, void* send, void* recv, size_t count, int iters, cudaStream_t stream) {
  double best = 1e300;
  for (int run = -1; run < 3; ++run) {
    check(hcomm_barrier(comm, nullptr), "hcomm_barrier");
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i)
      check(hcomm_allreduce(send, recv, count, HCOMM_FLOAT32, HCOMM_SUM, comm, stream), "hcomm_allreduce (stream)");
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    const double t = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    if (run >= 0) best = std::min(best, t / iters);
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  const size_t max_bytes = argc > 1 ? std::strtoull(argv[1], nullptr, 0) : size_t{256} << 20;
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices < 1) {
    std::printf("no CUDA device\n");
    return 77;
  }
  hcomm_comm_t comm = nullptr;
  check(hcomm_comm_init_env(&comm), "hcomm_comm_init_env");
  int rank = 0, size = 0;
  check(hcomm_comm_rank(comm, &rank), "hcomm_comm_rank");
  check(hcomm_comm_size(comm, &size), "hcomm_comm_size");
  std::vector<float> host_send(max_bytes / 4, 1.0f), host_recv(max_bytes / 4);
  void *dev_send = nullptr, *dev_recv = nullptr;
  check(cudaMalloc(&dev_send, max_bytes), "cudaMalloc");
  check(cudaMalloc(&dev_recv, max_bytes), "cudaMalloc");
  check(cudaMemcpy(dev_send, host_send.data(), max_bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
  cudaStream_t stream = nullptr;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  if (rank == 0)
    std::printf("# allreduce float32 sum, %d ranks on one GPU: blocking (median of timed calls) on host and on\n"
                "# device buffers, and stream-ordered on device buffers (calls queued back to back, per call)\n"
                "#%11s %12s %12s %12s %12s %14s\n",
                size, "size(B)", "host(us)", "device(us)", "device/host", "stream(us)", "stream/device");
  size_t largest = 0;
  for (size_t bytes = 8; bytes <= max_bytes; bytes *= 4) {
    const size_t count = bytes / 4;
    largest = count;
    const int iters = bytes <= (1 << 20) ? 50 : bytes <= (16 << 20) ? 10 : 5;
    const double host = median_us(comm, host_send.data(), host_recv.data(), count, iters);
    const double device = median_us(comm, dev_send, dev_recv, count, iters);
    const double streamed = stream_us(comm, dev_send, dev_recv, count, iters, stream);
    if (rank == 0)
      std::printf("%12zu %12.2f %12.2f %12.3f %12.2f %14.3f\n", bytes, host, device, device / host, streamed,
                  streamed / device);
  }
  hcomm_result_t async = HCOMM_SUCCESS;
  check(hcomm_comm_get_async_error(comm, &async), "hcomm_comm_get_async_error");
  check(async, "a stream-ordered allreduce");
  cudaStreamDestroy(stream);
  // The device result, checked: every element the rank count.
  std::vector<float> back(largest);
  check(cudaMemcpy(back.data(), dev_recv, largest * 4, cudaMemcpyDeviceToHost), "cudaMemcpy");
  size_t wrong = 0;
  for (float v : back) wrong += v != static_cast<float>(size);
  if (rank == 0) std::printf("# wrong elements of the largest device call: %zu\n", wrong);
  cudaFree(dev_send);
  cudaFree(dev_recv);
  check(hcomm_comm_destroy(comm), "hcomm_comm_destroy");
  return wrong ? 1 : 0;
}
