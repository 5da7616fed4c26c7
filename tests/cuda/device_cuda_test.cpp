// The CUDA device plugin (plugins/device/cuda) as the core loads it: pointer
// kinds, allocation, copies, and every dtype and op of its reduction kernels
// against the core's CPU kernels bit for bit (odd counts, unaligned buffers
// that take the element-wise path, in place, AVG's divisor), on the plugin's
// stream and on the caller's; streams, events, host calls and flag waits.
// Without a CUDA device every test is skipped.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/common/error.hpp"
#include "core/common/names.hpp"
#include "core/device/reduce.hpp"
#include "core/plugin/loader.hpp"
#include "core/plugin/services.hpp"
#include "hcomm/hcomm.h"
#include "hcomm/plugin/device.h"

namespace hcomm {
namespace {

const hcomm_device_v1_t* cuda_plugin(std::string* why) {
  for (const plugin::PluginInfo& p : plugin::load_all())
    if (p.expected_kind == HCOMM_PLUGIN_DEVICE && p.expected_name == "cuda") {
      if (!p.loaded()) {
        *why = p.error;
        return nullptr;
      }
      auto* iface = static_cast<const hcomm_device_v1_t*>(p.header->iface);
      iface->init(plugin::services());
      return iface;
    }
  *why = "no libhcomm_device_cuda.so in the plugin path";
  return nullptr;
}

class CudaDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    dev_ = cuda_plugin(&why);
    ASSERT_NE(dev_, nullptr) << why;
    if (dev_->device_count() < 1) GTEST_SKIP() << "no CUDA device: " << last_error();
  }
  void* device_alloc(size_t bytes) {
    void* p = nullptr;
    EXPECT_EQ(dev_->alloc(bytes, HCOMM_DEVICE_ALLOC_DEVICE, &p), HCOMM_SUCCESS) << last_error();
    allocations_.push_back(p);
    return p;
  }
  void TearDown() override {
    for (void* p : allocations_) dev_->free(p, HCOMM_DEVICE_ALLOC_DEVICE);
  }
  const hcomm_device_v1_t* dev_ = nullptr;
  std::vector<void*> allocations_;
};

TEST_F(CudaDevice, PointersAreToldApart) {
  hcomm_pointer_attr_t attr{.size = sizeof attr};
  std::vector<char> host(64);
  ASSERT_EQ(dev_->pointer_attr(host.data(), &attr), HCOMM_SUCCESS);
  EXPECT_EQ(attr.mem_kind, uint32_t{HCOMM_MEM_HOST});
  EXPECT_EQ(attr.device, -1);
  EXPECT_EQ(attr.pinned_host, 0);

  void* d = device_alloc(64);
  ASSERT_EQ(dev_->pointer_attr(static_cast<char*>(d) + 8, &attr), HCOMM_SUCCESS);
  EXPECT_EQ(attr.mem_kind, uint32_t{HCOMM_MEM_CUDA});
  EXPECT_GE(attr.device, 0);
  EXPECT_EQ(attr.managed, 0);

  void* pinned = nullptr;
  ASSERT_EQ(dev_->alloc(64, HCOMM_DEVICE_ALLOC_PINNED_HOST, &pinned), HCOMM_SUCCESS) << last_error();
  ASSERT_EQ(dev_->pointer_attr(pinned, &attr), HCOMM_SUCCESS);
  EXPECT_EQ(attr.mem_kind, uint32_t{HCOMM_MEM_HOST});
  EXPECT_EQ(attr.pinned_host, 1);
  EXPECT_EQ(dev_->free(pinned, HCOMM_DEVICE_ALLOC_PINNED_HOST), HCOMM_SUCCESS);

  void* managed = nullptr;
  ASSERT_EQ(cudaMallocManaged(&managed, 64), cudaSuccess);
  ASSERT_EQ(dev_->pointer_attr(managed, &attr), HCOMM_SUCCESS);
  EXPECT_EQ(attr.mem_kind, uint32_t{HCOMM_MEM_CUDA});
  EXPECT_EQ(attr.managed, 1);
  cudaFree(managed);

  hcomm_pointer_attr_t small{.size = 4};
  EXPECT_EQ(dev_->pointer_attr(host.data(), &small), HCOMM_ERR_INVALID_ARGUMENT);
}

TEST_F(CudaDevice, CopiesBothWays) {
  for (size_t bytes : {size_t{1}, size_t{7}, size_t{4099}, size_t{(3 << 20) + 5}}) {
    std::vector<uint8_t> in(bytes), out(bytes, 0);
    for (size_t i = 0; i < bytes; ++i) in[i] = static_cast<uint8_t>(i * 131 + 7);
    void* d = device_alloc(bytes + 1);
    void* e = device_alloc(bytes + 1);
    ASSERT_EQ(dev_->copy(static_cast<char*>(d) + 1, in.data(), bytes, nullptr), HCOMM_SUCCESS) << last_error();
    ASSERT_EQ(dev_->copy(e, static_cast<char*>(d) + 1, bytes, nullptr), HCOMM_SUCCESS) << last_error();
    ASSERT_EQ(dev_->copy(out.data(), e, bytes, nullptr), HCOMM_SUCCESS) << last_error();
    EXPECT_EQ(in, out) << bytes << " bytes";
  }
}

// Random elements: integers any bits; floats of both signs over a few
// magnitudes, with zeros of both signs among them.
std::vector<uint8_t> random_elements(hcomm_dtype_t t, size_t count, std::mt19937_64& rng) {
  std::vector<uint8_t> out(count * dtype_size(t));
  std::uniform_real_distribution<double> value(-1000.0, 1000.0);
  for (size_t i = 0; i < count; ++i) {
    uint8_t* at = out.data() + i * dtype_size(t);
    const double v = i % 17 == 0 ? (i % 2 ? -0.0 : 0.0) : value(rng) / (1 + i % 5);
    if (t == HCOMM_FLOAT32) {
      const float f = static_cast<float>(v);
      std::memcpy(at, &f, 4);
    } else if (t == HCOMM_FLOAT64) {
      std::memcpy(at, &v, 8);
    } else if (t == HCOMM_FLOAT16) {
      const uint16_t h = device::float_to_half(static_cast<float>(v));
      std::memcpy(at, &h, 2);
    } else if (t == HCOMM_BFLOAT16) {
      const uint16_t h = device::float_to_bfloat16(static_cast<float>(v));
      std::memcpy(at, &h, 2);
    } else {
      const uint64_t bits = rng();
      std::memcpy(at, &bits, dtype_size(t));
    }
  }
  return out;
}

struct Shape {
  size_t count;
  size_t skew;  // elements dst, a and b start past an allocation's start
  bool in_place;
  int divisor;
};

// Every dtype and op over the shapes, on the plugin's stream.
TEST_F(CudaDevice, ReductionsMatchTheCpuKernels) {
  std::mt19937_64 rng(7);
  const Shape shapes[] = {{1, 0, false, 1},  {7, 0, false, 3},   {1027, 1, false, 1}, {1027, 0, true, 5},
                          {(1 << 20) + 3, 0, false, 7}, {(1 << 20) + 3, 3, true, 1}};
  for (int t = 0; t < HCOMM_NUM_DTYPES; ++t)
    for (int o = 0; o < HCOMM_NUM_OPS; ++o)
      for (const Shape& s : shapes) {
        const auto dtype = static_cast<hcomm_dtype_t>(t);
        const auto op = static_cast<hcomm_op_t>(o);
        const size_t es = dtype_size(dtype), bytes = s.count * es, skew = s.skew * es;
        SCOPED_TRACE(std::string(hcomm_dtype_name(dtype)) + " " + hcomm_op_name(op) + " count " +
                     std::to_string(s.count) + " skew " + std::to_string(s.skew) + (s.in_place ? " in place" : "") +
                     " divisor " + std::to_string(s.divisor));
        const std::vector<uint8_t> a = random_elements(dtype, s.count, rng), b = random_elements(dtype, s.count, rng);
        std::vector<uint8_t> expected(bytes), got(bytes);
        device::reduce(dtype, op, expected.data(), a.data(), b.data(), s.count, s.divisor);
        auto* da = static_cast<uint8_t*>(device_alloc(bytes + skew)) + skew;
        auto* db = static_cast<uint8_t*>(device_alloc(bytes + skew)) + skew;
        uint8_t* dd = s.in_place ? da : static_cast<uint8_t*>(device_alloc(bytes + skew)) + skew;
        ASSERT_EQ(dev_->copy(da, a.data(), bytes, nullptr), HCOMM_SUCCESS);
        ASSERT_EQ(dev_->copy(db, b.data(), bytes, nullptr), HCOMM_SUCCESS);
        ASSERT_EQ(dev_->reduce(dtype, op, dd, da, db, s.count, s.divisor, nullptr), HCOMM_SUCCESS) << last_error();
        ASSERT_EQ(dev_->copy(got.data(), dd, bytes, nullptr), HCOMM_SUCCESS);
        size_t wrong = 0, first = 0;
        for (size_t i = 0; i < s.count; ++i)
          if (std::memcmp(&got[i * es], &expected[i * es], es) != 0 && !wrong++) first = i;
        EXPECT_EQ(wrong, 0u) << "first wrong element " << first;
        for (void* p : allocations_) dev_->free(p, HCOMM_DEVICE_ALLOC_DEVICE);
        allocations_.clear();
      }
}

// Float MIN and MAX: NaN wins, -0 is below +0, as on the CPU.
TEST_F(CudaDevice, NaNAndSignedZerosAsOnTheCpu) {
  const float nan = std::nanf("");
  const std::vector<float> a = {nan, 1.0f, -0.0f, 0.0f, 2.0f}, b = {1.0f, nan, 0.0f, -0.0f, nan};
  for (hcomm_op_t op : {HCOMM_MIN, HCOMM_MAX}) {
    std::vector<float> expected(a.size()), got(a.size());
    device::reduce(HCOMM_FLOAT32, op, expected.data(), a.data(), b.data(), a.size(), 1);
    auto* da = static_cast<float*>(device_alloc(a.size() * 4));
    auto* db = static_cast<float*>(device_alloc(a.size() * 4));
    ASSERT_EQ(dev_->copy(da, a.data(), a.size() * 4, nullptr), HCOMM_SUCCESS);
    ASSERT_EQ(dev_->copy(db, b.data(), a.size() * 4, nullptr), HCOMM_SUCCESS);
    ASSERT_EQ(dev_->reduce(HCOMM_FLOAT32, op, da, da, db, a.size(), 1, nullptr), HCOMM_SUCCESS);
    ASSERT_EQ(dev_->copy(got.data(), da, a.size() * 4, nullptr), HCOMM_SUCCESS);
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(std::isnan(got[i]), std::isnan(expected[i])) << hcomm_op_name(op) << " element " << i;
      if (!std::isnan(expected[i])) {
        EXPECT_EQ(std::signbit(got[i]), std::signbit(expected[i])) << i;
      }
    }
  }
}

// On the caller's stream the calls return at once; the work is done in
// stream order by the time the stream is synchronised.
TEST_F(CudaDevice, CallersStreamOrdersTheWork) {
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  constexpr size_t kCount = (8 << 20) + 1;
  float* pinned = nullptr;
  ASSERT_EQ(dev_->alloc(kCount * 4, HCOMM_DEVICE_ALLOC_PINNED_HOST, reinterpret_cast<void**>(&pinned)), HCOMM_SUCCESS);
  for (size_t i = 0; i < kCount; ++i) pinned[i] = static_cast<float>(i % 1000);
  auto* d = static_cast<float*>(device_alloc(kCount * 4));
  ASSERT_EQ(dev_->copy(d, pinned, kCount * 4, stream), HCOMM_SUCCESS);
  for (int k = 0; k < 3; ++k) ASSERT_EQ(dev_->reduce(HCOMM_FLOAT32, HCOMM_SUM, d, d, d, kCount, 1, stream), HCOMM_SUCCESS);
  ASSERT_EQ(dev_->copy(pinned, d, kCount * 4, stream), HCOMM_SUCCESS);
  ASSERT_EQ(dev_->synchronize(stream), HCOMM_SUCCESS);
  size_t wrong = 0;
  for (size_t i = 0; i < kCount; ++i) wrong += pinned[i] != static_cast<float>(i % 1000) * 8;
  EXPECT_EQ(wrong, 0u);
  dev_->free(pinned, HCOMM_DEVICE_ALLOC_PINNED_HOST);
  cudaStreamDestroy(stream);
}

TEST_F(CudaDevice, BadArgumentsAreNamed) {
  auto* d = device_alloc(64);
  EXPECT_EQ(dev_->reduce(static_cast<hcomm_dtype_t>(HCOMM_NUM_DTYPES), HCOMM_SUM, d, d, d, 4, 1, nullptr),
            HCOMM_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(last_error()).find("dtype"), std::string::npos) << last_error();
  std::vector<float> host(4);
  EXPECT_EQ(dev_->reduce(HCOMM_FLOAT32, HCOMM_SUM, host.data(), d, d, 4, 1, nullptr), HCOMM_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(last_error()).find("not device memory"), std::string::npos) << last_error();
  void* p = nullptr;
  EXPECT_EQ(dev_->alloc(64, static_cast<hcomm_device_alloc_kind_t>(9), &p), HCOMM_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dev_->alloc(size_t{1} << 62, HCOMM_DEVICE_ALLOC_DEVICE, &p), HCOMM_ERR_SYSTEM);
  EXPECT_NE(std::string(last_error()).find("cudaMalloc"), std::string::npos) << last_error();
}

// hcomm_mem_alloc_device through the public API: device memory of the
// current device at a 2 MiB boundary, usable by the device, freed once.
TEST_F(CudaDevice, MemAllocDeviceHandsOutAlignedDeviceMemory) {
  constexpr size_t kSizes[] = {1, (size_t{2} << 20) + 3, size_t{64} << 20};
  std::vector<void*> got;
  for (size_t bytes : kSizes) {
    void* p = nullptr;
    ASSERT_EQ(hcomm_mem_alloc_device(&p, bytes), HCOMM_SUCCESS) << hcomm_get_last_error();
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % (uintptr_t{2} << 20), 0u) << bytes;
    hcomm_pointer_attr_t attr{.size = sizeof attr};
    ASSERT_EQ(dev_->pointer_attr(p, &attr), HCOMM_SUCCESS);
    EXPECT_EQ(attr.mem_kind, HCOMM_MEM_CUDA);
    EXPECT_EQ(attr.managed, 0);
    std::vector<uint8_t> in(bytes), out(bytes);
    for (size_t i = 0; i < bytes; ++i) in[i] = static_cast<uint8_t>(i * 7 + bytes);
    ASSERT_EQ(dev_->copy(p, in.data(), bytes, nullptr), HCOMM_SUCCESS) << last_error();
    ASSERT_EQ(dev_->copy(out.data(), p, bytes, nullptr), HCOMM_SUCCESS) << last_error();
    EXPECT_EQ(in, out) << bytes;
    got.push_back(p);
  }
  EXPECT_EQ(hcomm_mem_free(static_cast<uint8_t*>(got[0]) + 64), HCOMM_ERR_INVALID_ARGUMENT);
  for (void* p : got) EXPECT_EQ(hcomm_mem_free(p), HCOMM_SUCCESS) << hcomm_get_last_error();
  EXPECT_EQ(hcomm_mem_free(got[0]), HCOMM_ERR_INVALID_ARGUMENT);
}

// What stream-ordered calls queue: a host call runs once the stream reaches
// it, a wait on the device holds the work after it until the host sets the
// flag (then clears it), events order one stream after another, and capture
// is told.
TEST_F(CudaDevice, StreamsEventsHostCallsAndFlagWaitsOrderTheWork) {
  ASSERT_GE(dev_->stream_count(), 1);
  void* ours = nullptr;
  void* other = nullptr;
  void* event = nullptr;
  ASSERT_EQ(dev_->stream_create(&ours), HCOMM_SUCCESS) << last_error();
  ASSERT_EQ(dev_->stream_create(&other), HCOMM_SUCCESS) << last_error();
  ASSERT_EQ(dev_->event_create(&event), HCOMM_SUCCESS) << last_error();
  uint32_t* flag = nullptr;
  ASSERT_EQ(dev_->alloc(64, HCOMM_DEVICE_ALLOC_PINNED_HOST, reinterpret_cast<void**>(&flag)), HCOMM_SUCCESS);
  *flag = 0;
  constexpr size_t kCount = 1 << 20;
  std::vector<int32_t> host(kCount, 7);
  auto* d = static_cast<int32_t*>(device_alloc(kCount * 4));
  ASSERT_EQ(cudaMemset(d, 0, kCount * 4), cudaSuccess);
  std::atomic<int> reached = 0;
  ASSERT_EQ(dev_->host_call(ours, [](void* p) { static_cast<std::atomic<int>*>(p)->store(1); }, &reached),
            HCOMM_SUCCESS);
  ASSERT_EQ(dev_->wait_flag(ours, flag), HCOMM_SUCCESS) << last_error();
  ASSERT_EQ(dev_->copy(d, host.data(), kCount * 4, ours), HCOMM_SUCCESS);
  ASSERT_EQ(dev_->event_record(event, ours), HCOMM_SUCCESS);
  ASSERT_EQ(dev_->stream_wait_event(other, event), HCOMM_SUCCESS);
  std::vector<int32_t> back(kCount, -1);
  ASSERT_EQ(dev_->copy(back.data(), d, kCount * 4, other), HCOMM_SUCCESS);
  int capturing = -1;
  ASSERT_EQ(dev_->capturing(ours, &capturing), HCOMM_SUCCESS);
  EXPECT_EQ(capturing, 0);
  for (int i = 0; i < 2000 && !reached.load(); ++i) usleep(100);
  EXPECT_EQ(reached.load(), 1) << "the host call did not run";
  usleep(20000);
  EXPECT_EQ(cudaStreamQuery(static_cast<cudaStream_t>(other)), cudaErrorNotReady)
      << "the work after the flag wait ran before the flag was set";
  __atomic_store_n(flag, 1u, __ATOMIC_RELEASE);
  ASSERT_EQ(dev_->synchronize(other), HCOMM_SUCCESS) << last_error();
  EXPECT_EQ(*flag, 0u) << "the wait did not clear the flag";
  EXPECT_EQ(std::count(back.begin(), back.end(), 7), static_cast<long>(kCount));
  cudaStream_t captured = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&captured, cudaStreamNonBlocking), cudaSuccess);
  ASSERT_EQ(cudaStreamBeginCapture(captured, cudaStreamCaptureModeGlobal), cudaSuccess);
  EXPECT_EQ(dev_->capturing(captured, &capturing), HCOMM_SUCCESS);
  EXPECT_EQ(capturing, 1);
  cudaGraph_t graph = nullptr;
  ASSERT_EQ(cudaStreamEndCapture(captured, &graph), cudaSuccess);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(captured);
  dev_->free(flag, HCOMM_DEVICE_ALLOC_PINNED_HOST);
  EXPECT_EQ(dev_->event_destroy(event), HCOMM_SUCCESS);
  EXPECT_EQ(dev_->stream_destroy(ours), HCOMM_SUCCESS);
  EXPECT_EQ(dev_->stream_destroy(other), HCOMM_SUCCESS);
}

}  // namespace
}  // namespace hcomm
