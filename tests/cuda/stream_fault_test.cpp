// Stream-ordered calls when a peer dies: the survivors' streams go on (no
// wait on the device is left spinning), hcomm_comm_get_async_error names the
// failure, later calls are refused at once, and the communicator is
// destroyed. The ranks are forked by the test (forked_job.hpp); the parent
// never starts the CUDA runtime, which a forked child could not use then.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "hcomm/hcomm.h"
#include "tests/multirank/forked_job.hpp"

namespace {

using forked::Clock;
using forked::Job;
using forked::Outcome;

bool gpu_present() { return access("/dev/nvidiactl", F_OK) == 0; }

// Records a failure of rank code in `out` (the first one) and says whether it was one.
bool failed(Outcome& out, hcomm_result_t rc, const char* what) {
  if (rc == HCOMM_SUCCESS) return false;
  out.rc = rc;
  std::snprintf(out.message, sizeof out.message, "%s: %s", what, hcomm_get_last_error());
  return true;
}

bool failed(Outcome& out, cudaError_t e, const char* what) {
  if (e == cudaSuccess) return false;
  out.rc = HCOMM_ERR_SYSTEM;
  std::snprintf(out.message, sizeof out.message, "%s: %s", what, cudaGetErrorString(e));
  return true;
}

TEST(StreamOrderFault, ARankKilledMidCallFailsTheOthersAndEndsTheirStreamsWork) {
  if (!gpu_present()) GTEST_SKIP() << "no NVIDIA device nodes: no GPU here";
  const int n = 3, victim = 2;
  constexpr size_t kCount = size_t{1} << 20;
  Job job(n, "shm", "30");
  for (int r = 0; r < n; ++r)
    job.spawn(r, [&](hcomm_comm_t comm, Outcome& out) {
      out.rc = -1;
      void* data = nullptr;
      cudaStream_t stream = nullptr;
      if (failed(out, cudaMalloc(&data, kCount * sizeof(float)), "cudaMalloc") ||
          failed(out, cudaMemset(data, 0, kCount * sizeof(float)), "cudaMemset") ||
          failed(out, cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate"))
        return;
      // One call that every rank completes: the stream machinery is up.
      if (failed(out, hcomm_allreduce(data, data, kCount, HCOMM_FLOAT32, HCOMM_SUM, comm, stream), "hcomm_allreduce") ||
          failed(out, cudaStreamSynchronize(stream), "cudaStreamSynchronize"))
        return;
      if (r == victim) raise(SIGKILL);  // before its part of the next call
      const auto start = Clock::now();
      if (failed(out, hcomm_allreduce(data, data, kCount, HCOMM_FLOAT32, HCOMM_SUM, comm, stream), "hcomm_allreduce"))
        return;
      // The device's wait for the failed operation ends: the stream drains.
      if (failed(out, cudaStreamSynchronize(stream), "cudaStreamSynchronize after the failure")) return;
      out.seconds = std::chrono::duration<double>(Clock::now() - start).count();
      hcomm_result_t async = HCOMM_SUCCESS;
      if (failed(out, hcomm_comm_get_async_error(comm, &async), "hcomm_comm_get_async_error")) return;
      out.rc = async;
      std::snprintf(out.message, sizeof out.message, "%s", async ? hcomm_get_last_error() : "no async error");
      // Later calls are refused at once, naming the earlier failure.
      const hcomm_result_t again = hcomm_allreduce(data, data, 1, HCOMM_FLOAT32, HCOMM_SUM, comm, stream);
      out.calls = again != HCOMM_SUCCESS && std::strstr(hcomm_get_last_error(), "an earlier stream-ordered call failed");
      out.reported = hcomm_comm_destroy(comm) == HCOMM_SUCCESS;
    });
  const std::vector<int> status = job.join(90);
  bool named = false;
  for (int r = 0; r < n; ++r) {
    if (r == victim) {
      EXPECT_TRUE(WIFSIGNALED(status[r]) && WTERMSIG(status[r]) == SIGKILL) << job.outcome(r).message;
      continue;
    }
    ASSERT_NE(status[r], -1) << "rank " << r << " hung";
    const Outcome& o = job.outcome(r);
    EXPECT_EQ(o.rc, HCOMM_ERR_REMOTE) << "rank " << r << ": " << o.message;
    EXPECT_LT(o.seconds, 10.0) << "rank " << r << ": " << o.message;
    EXPECT_EQ(o.calls, 1) << "rank " << r << ": a call after the failure was not refused";
    EXPECT_EQ(o.reported, 1) << "rank " << r << ": hcomm_comm_destroy failed";
    named |= std::strstr(o.message, "rank 2") != nullptr;
  }
  EXPECT_TRUE(named) << "no survivor named the dead rank 2";
}

}  // namespace
