// Stream-ordered calls (core/comm/stream_order.hpp), and nonblocking calls
// on device buffers, which go the same way, on each device the test has
// (device_memory.hpp): the emulated one (emulated_device.cpp: device memory
// and streams without a GPU, so that every machine runs these) and CUDA's
// (skipped without a GPU). Calls held back behind their stream's earlier
// work, run in call order, in pieces (HCOMM_STAGING_CHUNK_BYTES), with count
// arrays the caller dropped at once, point to point on the stream, a
// host-ordered call after them; nonblocking calls' requests and statuses;
// the refusals; a peer killed: the others' streams go on and
// hcomm_comm_get_async_error names it. Ranks are forked (forked_job.hpp)
// before any of them starts a device runtime, each checking every element.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "hcomm/hcomm.h"
#include "tests/multirank/device_memory.hpp"
#include "tests/multirank/forked_job.hpp"

namespace {

using forked::Job;
using forked::Outcome;
using hcomm::test::DeviceMemory;

// A rank's failure, recorded once: the call, the library's words.
bool failed(Outcome& out, hcomm_result_t rc, const char* what) {
  if (rc == HCOMM_SUCCESS) return false;
  out.rc = rc;
  std::snprintf(out.message, sizeof out.message, "%s: %s", what, hcomm_get_last_error());
  return true;
}

void wrong(Outcome& out, const std::string& what) {
  out.rc = HCOMM_ERR_INTERNAL;
  std::snprintf(out.message, sizeof out.message, "%s", what.c_str());
}

// Every rank ended, and without a failure.
void expect_every_rank_succeeded(Job& job, int n) {
  const std::vector<int> status = job.join(60);
  for (int r = 0; r < n; ++r) {
    ASSERT_NE(status[r], -1) << "rank " << r << " hung";
    EXPECT_EQ(job.outcome(r).rc, HCOMM_SUCCESS) << "rank " << r << ": " << job.outcome(r).message;
  }
}

// The parameter: the device, "emulated" or "cuda".
class StreamOrder : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    static const std::string given = std::getenv("HCOMM_PLUGIN_PATH") ? std::getenv("HCOMM_PLUGIN_PATH") : "";
    if (emulated()) {
      ASSERT_EQ(access(HCOMM_EMULATED_DEVICE_DIR "/libhcomm_device_emulated.so", F_OK), 0);
      // Found first, the emulated device serves every call.
      setenv("HCOMM_PLUGIN_PATH", (std::string(HCOMM_EMULATED_DEVICE_DIR ":") + given).c_str(), 1);
    } else {
#ifndef HCOMM_TEST_CUDA
      GTEST_SKIP() << "built without CUDA";
#endif
      if (access("/dev/nvidiactl", F_OK) != 0) GTEST_SKIP() << "no NVIDIA device nodes: no GPU here";
      setenv("HCOMM_PLUGIN_PATH", given.c_str(), 1);
    }
    setenv("HCOMM_STAGING_CHUNK_BYTES", "4K", 1);
  }
  bool emulated() const { return std::strcmp(GetParam(), "emulated") == 0; }
  // The device, made in a rank (a forked process must start its own device
  // runtime); a failure of it ends the rank with its outcome.
  std::unique_ptr<DeviceMemory> device(Outcome& out) const {
    const DeviceMemory::Fail fail = [&out](const std::string& what) {
      wrong(out, what);
      std::exit(0);
    };
#ifdef HCOMM_TEST_CUDA
    if (!emulated()) return std::make_unique<hcomm::test::CudaMemory>(fail);
#endif
    return std::make_unique<hcomm::test::EmulatedMemory>(fail);
  }
};

TEST_P(StreamOrder, CallsRunBehindTheirStreamInCallOrder) {
  const int n = 3;
  constexpr size_t kCount = 10007;  // 4 KiB pieces: ten of them, the last one short
  Job job(n, "shm", "30");
  for (int r = 0; r < n; ++r)
    job.spawn(r, [&](hcomm_comm_t comm, Outcome& out) {
      const std::unique_ptr<DeviceMemory> dev = device(out);
      void* const stream = dev->stream();
      auto* send = static_cast<float*>(dev->alloc(kCount * 4));
      auto* sum = static_cast<float*>(dev->alloc(kCount * 4));
      auto* gathered = static_cast<float*>(dev->alloc(size_t{3} * 4 * n));
      auto* message = static_cast<int32_t*>(dev->alloc(64));
      auto* got = static_cast<int32_t*>(dev->alloc(64));
      std::vector<float> input(kCount);
      for (size_t i = 0; i < kCount; ++i) input[i] = static_cast<float>((i % 97) * (r + 1));
      dev->fill(send, 0xEE, kCount * 4);  // what a call that ran early would read
      // Rank r gives r + 1 elements to the allgatherv.
      std::vector<float> mine(static_cast<size_t>(r) + 1, static_cast<float>(100 + r));
      const int32_t words[2] = {r, 7 * r};
      dev->hold_back(stream);
      dev->copy(send, input.data(), kCount * 4, stream);
      dev->copy(message, words, sizeof words, stream);
      if (failed(out, hcomm_allreduce(send, sum, kCount, HCOMM_FLOAT32, HCOMM_SUM, comm, stream), "hcomm_allreduce"))
        return;
      {
        // Count arrays the caller drops as the call returns.
        auto counts = std::make_unique<size_t[]>(n), displs = std::make_unique<size_t[]>(n);
        for (int k = 0; k < n; ++k) counts[k] = static_cast<size_t>(k) + 1, displs[k] = static_cast<size_t>(k * 3);
        float* at = gathered + displs[r];
        dev->copy(at, mine.data(), mine.size() * 4, stream);
        if (failed(out, hcomm_allgatherv(at, gathered, counts.get(), displs.get(), HCOMM_FLOAT32, comm, stream),
                   "hcomm_allgatherv"))
          return;
        std::memset(counts.get(), 0xFF, n * sizeof(size_t));
      }
      const int next = (r + 1) % n, previous = (r + n - 1) % n;
      if (failed(out, hcomm_send(message, 2, HCOMM_INT32, next, 5, comm, stream), "hcomm_send") ||
          failed(out, hcomm_recv(got, 2, HCOMM_INT32, previous, 5, comm, stream), "hcomm_recv"))
        return;
      std::vector<float> sums(kCount), all(size_t{3} * n);
      int32_t received[2] = {-1, -1};
      dev->copy(sums.data(), sum, kCount * 4, stream);
      dev->copy(all.data(), gathered, all.size() * 4, stream);
      dev->copy(received, got, sizeof received, stream);
      dev->synchronize(stream);
      for (size_t i = 0; i < kCount; ++i)
        if (sums[i] != static_cast<float>((i % 97) * n * (n + 1) / 2))
          return wrong(out, "allreduce element " + std::to_string(i) + " is " + std::to_string(sums[i]));
      for (int k = 0; k < n; ++k)
        for (int j = 0; j <= k; ++j)
          if (all[static_cast<size_t>(3 * k + j)] != static_cast<float>(100 + k))
            return wrong(out, "allgatherv: block of rank " + std::to_string(k) + " wrong");
      if (received[0] != previous || received[1] != 7 * previous) return wrong(out, "the stream's receive got wrong data");
      // A host-ordered call comes after them.
      float one = 1.0f;
      if (failed(out, hcomm_allreduce(&one, &one, 1, HCOMM_FLOAT32, HCOMM_SUM, comm, nullptr), "host allreduce")) return;
      if (one != static_cast<float>(n)) return wrong(out, "the host-ordered allreduce after them is wrong");
      hcomm_result_t async = HCOMM_ERR_INTERNAL;
      if (failed(out, hcomm_comm_get_async_error(comm, &async), "hcomm_comm_get_async_error") ||
          failed(out, async, "a stream-ordered call"))
        return;
      for (void* p : {static_cast<void*>(send), static_cast<void*>(sum), static_cast<void*>(gathered),
                      static_cast<void*>(message), static_cast<void*>(got)})
        dev->release(p);
      out.rc = hcomm_comm_destroy(comm);
    });
  expect_every_rank_succeeded(job, n);
}

TEST_P(StreamOrder, NonblockingCallsOnDeviceBuffersCompleteThroughTheirRequests) {
  const int n = 3;
  constexpr size_t kCount = 5003;
  Job job(n, "shm", "30");
  for (int r = 0; r < n; ++r)
    job.spawn(r, [&](hcomm_comm_t comm, Outcome& out) {
      const std::unique_ptr<DeviceMemory> dev = device(out);
      auto* data = static_cast<float*>(dev->alloc(kCount * 4));
      auto* message = static_cast<int64_t*>(dev->alloc(64));
      auto* got = static_cast<int64_t*>(dev->alloc(64));
      std::vector<float> values(kCount);
      for (size_t i = 0; i < kCount; ++i) values[i] = static_cast<float>(i % 13 + r);
      const int64_t words[2] = {1000 + r, -1};
      dev->copy(data, values.data(), kCount * 4, nullptr);
      dev->copy(message, &words[0], 8, nullptr);
      dev->copy(got, &words[1], 8, nullptr);
      hcomm_request_t sum = nullptr, send = nullptr, recv = nullptr;
      const int next = (r + 1) % n, previous = (r + n - 1) % n;
      if (failed(out, hcomm_iallreduce(data, data, kCount, HCOMM_FLOAT32, HCOMM_SUM, comm, &sum), "hcomm_iallreduce") ||
          failed(out, hcomm_irecv(got, 1, HCOMM_INT64, previous, 3, comm, &recv), "hcomm_irecv") ||
          failed(out, hcomm_isend(message, 1, HCOMM_INT64, next, 3, comm, &send), "hcomm_isend"))
        return;
      if (hcomm_cancel(recv) != HCOMM_ERR_UNSUPPORTED) return wrong(out, "hcomm_cancel of a device receive was taken");
      void* handle = nullptr;
      if (hcomm_mem_register(comm, data, kCount * 4, &handle) != HCOMM_ERR_UNSUPPORTED || handle)
        return wrong(out, "hcomm_mem_register took device memory");
      hcomm_status_t status{};
      for (int done = 0; !done;)
        if (failed(out, hcomm_test_status(recv, &done, &status), "hcomm_test_status")) return;
      if (failed(out, hcomm_wait(sum), "hcomm_wait") || failed(out, hcomm_wait(send), "hcomm_wait")) return;
      if (status.source != previous || status.tag != 3 || status.bytes != 8)
        return wrong(out, "the receive's status: source " + std::to_string(status.source) + ", tag " +
                              std::to_string(status.tag) + ", " + std::to_string(status.bytes) + " bytes");
      int64_t received = -1;
      dev->copy(&received, got, 8, nullptr);
      dev->copy(values.data(), data, kCount * 4, nullptr);
      if (received != 1000 + previous) return wrong(out, "the receive got " + std::to_string(received));
      for (size_t i = 0; i < kCount; ++i)
        if (values[i] != static_cast<float>(n * (i % 13) + n * (n - 1) / 2))
          return wrong(out, "iallreduce element " + std::to_string(i) + " is " + std::to_string(values[i]));
      out.rc = hcomm_comm_destroy(comm);
    });
  expect_every_rank_succeeded(job, n);
}

// A transport that takes calls from the thread that made it only: the
// stream-ordered call and the nonblocking one on device buffers are refused,
// saying what to do, and the communicator goes on with blocking calls.
TEST_P(StreamOrder, TransportsOfOneThreadRefuseIt) {
#ifndef HCOMM_TEST_HAVE_UCX
  GTEST_SKIP() << "built without the ucx transport";
#endif
  if (!emulated()) GTEST_SKIP() << "the refusal does not depend on the device: the emulated one shows it";
  const int n = 2;
  Job job(n, "ucx", "30");
  for (int r = 0; r < n; ++r)
    job.spawn(r, [&](hcomm_comm_t comm, Outcome& out) {
      const std::unique_ptr<DeviceMemory> dev = device(out);
      auto* data = static_cast<float*>(dev->alloc(64));
      const float one = 1.0f;
      dev->copy(data, &one, 4, nullptr);
      hcomm_request_t request = nullptr;
      if (hcomm_allreduce(data, data, 1, HCOMM_FLOAT32, HCOMM_SUM, comm, dev->stream()) != HCOMM_ERR_UNSUPPORTED ||
          !std::strstr(hcomm_get_last_error(), "HCOMM_TRANSPORTS=shm,tcp"))
        return wrong(out, std::string("the stream-ordered call over ucx: ") + hcomm_get_last_error());
      if (hcomm_iallreduce(data, data, 1, HCOMM_FLOAT32, HCOMM_SUM, comm, &request) != HCOMM_ERR_UNSUPPORTED || request)
        return wrong(out, std::string("the nonblocking call on device buffers over ucx: ") + hcomm_get_last_error());
      if (failed(out, hcomm_allreduce(data, data, 1, HCOMM_FLOAT32, HCOMM_SUM, comm, nullptr), "hcomm_allreduce"))
        return;
      float result = 0;
      dev->copy(&result, data, 4, nullptr);
      if (result != static_cast<float>(n)) return wrong(out, "the blocking call after them is wrong");
      out.rc = hcomm_comm_destroy(comm);
    });
  expect_every_rank_succeeded(job, n);
}

TEST_P(StreamOrder, AKilledPeerFailsTheOthersStreamWorkWhichGoesOn) {
  const int n = 3, victim = 1;
  constexpr size_t kCount = 16384;  // 4 KiB pieces: sixteen
  Job job(n, "shm", "30");
  for (int r = 0; r < n; ++r)
    job.spawn(r, [&](hcomm_comm_t comm, Outcome& out) {
      const std::unique_ptr<DeviceMemory> dev = device(out);
      void* const stream = dev->stream();
      void* data = dev->alloc(kCount * 4);
      dev->fill(data, 0, kCount * 4);
      // One call that every rank completes: the stream machinery is up.
      if (failed(out, hcomm_allreduce(data, data, kCount, HCOMM_FLOAT32, HCOMM_SUM, comm, stream), "hcomm_allreduce"))
        return;
      dev->synchronize(stream);
      if (r == victim) raise(SIGKILL);  // before its part of the next call
      const auto start = forked::Clock::now();
      if (failed(out, hcomm_allreduce(data, data, kCount, HCOMM_FLOAT32, HCOMM_SUM, comm, stream), "hcomm_allreduce"))
        return;
      dev->synchronize(stream);  // returns: the device's wait for the failed operation ended
      out.seconds = std::chrono::duration<double>(forked::Clock::now() - start).count();
      hcomm_result_t async = HCOMM_SUCCESS;
      if (failed(out, hcomm_comm_get_async_error(comm, &async), "hcomm_comm_get_async_error")) return;
      out.rc = async;
      std::snprintf(out.message, sizeof out.message, "%s", async ? hcomm_get_last_error() : "no async error");
      const hcomm_result_t again = hcomm_allreduce(data, data, 1, HCOMM_FLOAT32, HCOMM_SUM, comm, stream);
      out.calls = again != HCOMM_SUCCESS && std::strstr(hcomm_get_last_error(), "an earlier stream-ordered call failed");
      out.reported = hcomm_comm_destroy(comm) == HCOMM_SUCCESS;
    });
  const std::vector<int> status = job.join(60);
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
    named |= std::strstr(o.message, "rank 1") != nullptr;
  }
  EXPECT_TRUE(named) << "no survivor named the dead rank 1";
}

INSTANTIATE_TEST_SUITE_P(Devices, StreamOrder, ::testing::Values("emulated", "cuda"),
                         [](const ::testing::TestParamInfo<const char*>& device) { return std::string(device.param); });

}  // namespace
