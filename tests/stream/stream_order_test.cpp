// Stream-ordered calls (core/comm/stream_order.hpp) on the emulated device
// (emulated_device.cpp: device memory and streams without a GPU), so that
// every machine tests their ordering: calls held back behind their stream's
// earlier work, run in call order, in pieces (HCOMM_STAGING_CHUNK_BYTES),
// with count arrays the caller dropped at once, point to point on the
// stream, a host-ordered call after them, and a peer killed: the others'
// streams go on and hcomm_comm_get_async_error names it; and nonblocking
// calls on device buffers, which go the same way. Ranks are forked
// (forked_job.hpp), each checking every element.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "hcomm/hcomm.h"
#include "hcomm/plugin/device.h"
#include "tests/multirank/forked_job.hpp"

#ifndef HCOMM_EMULATED_DEVICE_DIR
#error "HCOMM_EMULATED_DEVICE_DIR must name the folder of libhcomm_device_emulated.so"
#endif

namespace {

using forked::Job;
using forked::Outcome;

// The emulated device's interface, for the streams and copies the test
// itself queues (an application would call its GPU runtime).
const hcomm_device_v1_t& device() {
  static const hcomm_device_v1_t* iface = [] {
    void* lib = dlopen(HCOMM_EMULATED_DEVICE_DIR "/libhcomm_device_emulated.so", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return static_cast<const hcomm_device_v1_t*>(nullptr);
    auto entry = reinterpret_cast<const hcomm_plugin_header_t* (*)()>(dlsym(lib, HCOMM_PLUGIN_SYMBOL));
    return static_cast<const hcomm_device_v1_t*>(entry()->iface);
  }();
  return *iface;
}

void hold_back(void*) { usleep(5000); }

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

class EmulatedDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(access(HCOMM_EMULATED_DEVICE_DIR "/libhcomm_device_emulated.so", F_OK), 0);
    setenv("HCOMM_PLUGIN_PATH", HCOMM_EMULATED_DEVICE_DIR, 1);
    setenv("HCOMM_STAGING_CHUNK_BYTES", "4K", 1);
  }
};

TEST_F(EmulatedDevice, StreamOrderedCallsRunBehindTheirStreamInCallOrder) {
  const int n = 3;
  constexpr size_t kCount = 10007;  // 4 KiB pieces: ten of them, the last one short
  Job job(n, "shm", "30");
  for (int r = 0; r < n; ++r)
    job.spawn(r, [&](hcomm_comm_t comm, Outcome& out) {
      const hcomm_device_v1_t& dev = device();
      void* stream = nullptr;
      dev.stream_create(&stream);
      float *send = nullptr, *sum = nullptr, *gathered = nullptr;
      int32_t *message = nullptr, *got = nullptr;
      for (auto [p, bytes] : {std::pair{reinterpret_cast<void**>(&send), kCount * 4},
                              {reinterpret_cast<void**>(&sum), kCount * 4},
                              {reinterpret_cast<void**>(&gathered), size_t{6} * 4 * n},
                              {reinterpret_cast<void**>(&message), size_t{64}},
                              {reinterpret_cast<void**>(&got), size_t{64}}})
        if (failed(out, hcomm_mem_alloc_device(p, bytes), "hcomm_mem_alloc_device")) return;
      std::vector<float> input(kCount);
      for (size_t i = 0; i < kCount; ++i) input[i] = static_cast<float>((i % 97) * (r + 1));
      std::memset(send, 0xEE, kCount * 4);  // what a call that ran early would read
      // Rank r gives r + 1 elements to the allgatherv.
      std::vector<float> mine(static_cast<size_t>(r) + 1, static_cast<float>(100 + r));
      const int32_t words[2] = {r, 7 * r};
      dev.host_call(stream, hold_back, nullptr);
      dev.copy(send, input.data(), kCount * 4, stream);
      dev.copy(message, words, sizeof words, stream);
      if (failed(out, hcomm_allreduce(send, sum, kCount, HCOMM_FLOAT32, HCOMM_SUM, comm, stream), "hcomm_allreduce"))
        return;
      {
        // Count arrays the caller drops as the call returns.
        auto counts = std::make_unique<size_t[]>(n), displs = std::make_unique<size_t[]>(n);
        for (int k = 0; k < n; ++k) counts[k] = static_cast<size_t>(k) + 1, displs[k] = static_cast<size_t>(k * 3);
        float* at = gathered + displs[r];
        dev.copy(at, mine.data(), mine.size() * 4, stream);
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
      dev.copy(sums.data(), sum, kCount * 4, stream);
      dev.copy(all.data(), gathered, all.size() * 4, stream);
      dev.copy(received, got, sizeof received, stream);
      dev.synchronize(stream);
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
        hcomm_mem_free(p);
      out.rc = hcomm_comm_destroy(comm);
      dev.stream_destroy(stream);
    });
  const std::vector<int> status = job.join(60);
  for (int r = 0; r < n; ++r) {
    ASSERT_NE(status[r], -1) << "rank " << r << " hung";
    EXPECT_EQ(job.outcome(r).rc, HCOMM_SUCCESS) << "rank " << r << ": " << job.outcome(r).message;
  }
}

TEST_F(EmulatedDevice, NonblockingCallsOnDeviceBuffersCompleteThroughTheirRequests) {
  const int n = 3;
  constexpr size_t kCount = 5003;
  Job job(n, "shm", "30");
  for (int r = 0; r < n; ++r)
    job.spawn(r, [&](hcomm_comm_t comm, Outcome& out) {
      float* data = nullptr;
      int64_t *message = nullptr, *got = nullptr;
      if (failed(out, hcomm_mem_alloc_device(reinterpret_cast<void**>(&data), kCount * 4), "hcomm_mem_alloc_device") ||
          failed(out, hcomm_mem_alloc_device(reinterpret_cast<void**>(&message), 64), "hcomm_mem_alloc_device") ||
          failed(out, hcomm_mem_alloc_device(reinterpret_cast<void**>(&got), 64), "hcomm_mem_alloc_device"))
        return;
      for (size_t i = 0; i < kCount; ++i) data[i] = static_cast<float>(i % 13 + r);
      message[0] = 1000 + r;
      got[0] = -1;
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
      if (got[0] != 1000 + previous) return wrong(out, "the receive got " + std::to_string(got[0]));
      for (size_t i = 0; i < kCount; ++i)
        if (data[i] != static_cast<float>(n * (i % 13) + n * (n - 1) / 2))
          return wrong(out, "iallreduce element " + std::to_string(i) + " is " + std::to_string(data[i]));
      out.rc = hcomm_comm_destroy(comm);
    });
  const std::vector<int> status = job.join(60);
  for (int r = 0; r < n; ++r) {
    ASSERT_NE(status[r], -1) << "rank " << r << " hung";
    EXPECT_EQ(job.outcome(r).rc, HCOMM_SUCCESS) << "rank " << r << ": " << job.outcome(r).message;
  }
}

#ifdef HCOMM_TEST_HAVE_UCX
// A transport that takes calls from the thread that made it only: the
// stream-ordered call and the nonblocking one on device buffers are refused,
// saying what to do, and the communicator goes on with blocking calls.
TEST_F(EmulatedDevice, TransportsOfOneThreadRefuseStreamOrderedCalls) {
  const int n = 2;
  Job job(n, "ucx", "30");
  for (int r = 0; r < n; ++r)
    job.spawn(r, [&](hcomm_comm_t comm, Outcome& out) {
      void* stream = nullptr;
      device().stream_create(&stream);
      float* data = nullptr;
      if (failed(out, hcomm_mem_alloc_device(reinterpret_cast<void**>(&data), 64), "hcomm_mem_alloc_device")) return;
      data[0] = 1.0f;
      hcomm_request_t request = nullptr;
      if (hcomm_allreduce(data, data, 1, HCOMM_FLOAT32, HCOMM_SUM, comm, stream) != HCOMM_ERR_UNSUPPORTED ||
          !std::strstr(hcomm_get_last_error(), "HCOMM_TRANSPORTS=shm,tcp"))
        return wrong(out, std::string("the stream-ordered call over ucx: ") + hcomm_get_last_error());
      if (hcomm_iallreduce(data, data, 1, HCOMM_FLOAT32, HCOMM_SUM, comm, &request) != HCOMM_ERR_UNSUPPORTED || request)
        return wrong(out, std::string("the nonblocking call on device buffers over ucx: ") + hcomm_get_last_error());
      if (failed(out, hcomm_allreduce(data, data, 1, HCOMM_FLOAT32, HCOMM_SUM, comm, nullptr), "hcomm_allreduce"))
        return;
      if (data[0] != static_cast<float>(n)) return wrong(out, "the blocking call after them is wrong");
      out.rc = hcomm_comm_destroy(comm);
    });
  const std::vector<int> status = job.join(60);
  for (int r = 0; r < n; ++r) {
    ASSERT_NE(status[r], -1) << "rank " << r << " hung";
    EXPECT_EQ(job.outcome(r).rc, HCOMM_SUCCESS) << "rank " << r << ": " << job.outcome(r).message;
  }
}
#endif

TEST_F(EmulatedDevice, AKilledPeerFailsTheOthersStreamWorkWhichGoesOn) {
  const int n = 3, victim = 1;
  constexpr size_t kCount = 4096;
  Job job(n, "shm", "30");
  for (int r = 0; r < n; ++r)
    job.spawn(r, [&](hcomm_comm_t comm, Outcome& out) {
      const hcomm_device_v1_t& dev = device();
      void* stream = nullptr;
      dev.stream_create(&stream);
      void* data = nullptr;
      if (failed(out, hcomm_mem_alloc_device(&data, kCount * 4), "hcomm_mem_alloc_device")) return;
      std::memset(data, 0, kCount * 4);
      if (failed(out, hcomm_allreduce(data, data, kCount, HCOMM_FLOAT32, HCOMM_SUM, comm, stream), "hcomm_allreduce"))
        return;
      dev.synchronize(stream);
      if (r == victim) raise(SIGKILL);
      const auto start = forked::Clock::now();
      if (failed(out, hcomm_allreduce(data, data, kCount, HCOMM_FLOAT32, HCOMM_SUM, comm, stream), "hcomm_allreduce"))
        return;
      dev.synchronize(stream);  // returns: the wait for the failed operation ended
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
    if (r == victim) continue;
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

}  // namespace
