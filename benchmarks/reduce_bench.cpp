// Throughput of the CPU reduction kernels: SUM of every dtype, on every
// instruction set this CPU runs, beside memcpy of the same bytes in the same
// run. Figures are GB/s of memory traffic: a reduction reads a and b and
// writes dst (3 x the bytes of one array), a copy reads and writes (2 x).
// Each figure is the median of several timed batches, the kernels and memcpy
// interleaved so that they see the same machine.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "core/device/reduce_isa.hpp"

namespace {

using hcomm::device::Isa;
using hcomm::device::KernelTable;

constexpr size_t kArrayBytes[] = {4 << 10, 256 << 10, 4 << 20, 64 << 20};
constexpr size_t kMaxArrayBytes = 64 << 20;
constexpr int kTrials = 7;
constexpr double kBatchSeconds = 0.02;

const char* const kDtypeNames[] = {"int8",   "uint8",   "int32",    "uint32",  "int64",
                                   "uint64", "float16", "bfloat16", "float32", "float64"};

// An array of 64-byte aligned memory, touched once so that page faults stay
// out of the timings.
class Array {
 public:
  Array() : data_(static_cast<unsigned char*>(std::aligned_alloc(64, kMaxArrayBytes))) {
    if (data_ == nullptr) {
      std::fprintf(stderr, "hcomm_reduce_bench: cannot allocate %zu bytes\n", kMaxArrayBytes);
      std::exit(1);
    }
    std::memset(data_, 0, kMaxArrayBytes);
  }
  ~Array() { std::free(data_); }
  Array(const Array&) = delete;
  Array& operator=(const Array&) = delete;
  unsigned char* data() { return data_; }

  // Every element 1 in `dtype`: ordinary numbers, no subnormal slow paths.
  void fill_with_ones(hcomm_dtype_t dtype, size_t element_bytes) {
    const uint64_t ones[] = {1, 1, 1, 1, 1, 1, 0x3c00, 0x3f80, 0x3f800000, 0x3ff0000000000000};
    for (size_t i = 0; i + element_bytes <= kMaxArrayBytes; i += element_bytes)
      std::memcpy(data_ + i, &ones[dtype], element_bytes);  // little-endian: the low bytes
  }

 private:
  unsigned char* data_;
};

// Seconds per call of `body`, timed over batches long enough for the clock.
class Timer {
 public:
  explicit Timer(std::function<void()> body) : body_(std::move(body)) {
    body_();  // warm caches and branch predictors
    const auto start = Clock::now();
    body_();
    const double once = std::max(seconds_since(start), 1e-9);
    calls_per_batch_ = std::max<size_t>(1, static_cast<size_t>(kBatchSeconds / once));
  }
  void time_one_batch() {
    const auto start = Clock::now();
    for (size_t i = 0; i < calls_per_batch_; ++i) body_();
    samples_.push_back(seconds_since(start) / static_cast<double>(calls_per_batch_));
  }
  double median_seconds() {
    std::sort(samples_.begin(), samples_.end());
    return samples_[samples_.size() / 2];
  }

 private:
  using Clock = std::chrono::steady_clock;
  static double seconds_since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
  }
  std::function<void()> body_;
  size_t calls_per_batch_ = 1;
  std::vector<double> samples_;
};

std::vector<Isa> runnable_isas() {
  std::vector<Isa> isas;
  for (Isa isa : hcomm::device::kAllIsas)
    if (hcomm::device::kernels_for(isa) != nullptr) isas.push_back(isa);
  return isas;
}

std::string size_name(size_t bytes) {
  return bytes >= (1 << 20) ? std::to_string(bytes >> 20) + " MiB" : std::to_string(bytes >> 10) + " KiB";
}

}  // namespace

int main() {
  const std::vector<Isa> isas = runnable_isas();
  Array a, b, dst;

  std::printf("SUM kernels vs memcpy, GB/s of memory traffic (reduce 3 x bytes, memcpy 2 x bytes), median of %d\n",
              kTrials);
  std::printf("%-8s %-9s %8s", "array", "dtype", "memcpy");
  for (Isa isa : isas) std::printf(" %9s", hcomm::device::isa_name(isa));
  std::printf("   best/memcpy\n");

  for (size_t bytes : kArrayBytes) {
    for (int d = 0; d < HCOMM_NUM_DTYPES; ++d) {
      const auto dtype = static_cast<hcomm_dtype_t>(d);
      const size_t element_bytes = hcomm::device::kernels_for(Isa::kPortable)->element_bytes[dtype];
      const size_t count = bytes / element_bytes;
      a.fill_with_ones(dtype, element_bytes);
      b.fill_with_ones(dtype, element_bytes);

      std::vector<Timer> timers;
      timers.emplace_back([&] { std::memcpy(dst.data(), a.data(), bytes); });
      for (Isa isa : isas) {
        const KernelTable* kernels = hcomm::device::kernels_for(isa);
        timers.emplace_back([&, kernels] {
          hcomm::device::reduce_with(*kernels, dtype, HCOMM_SUM, dst.data(), a.data(), b.data(), count, 0);
        });
      }
      for (int trial = 0; trial < kTrials; ++trial)
        for (Timer& timer : timers) timer.time_one_batch();

      const double copy_gbs = 2.0 * static_cast<double>(bytes) / timers[0].median_seconds() / 1e9;
      double best_gbs = 0;
      std::printf("%-8s %-9s %8.1f", size_name(bytes).c_str(), kDtypeNames[d], copy_gbs);
      for (size_t i = 1; i < timers.size(); ++i) {
        const double gbs = 3.0 * static_cast<double>(bytes) / timers[i].median_seconds() / 1e9;
        best_gbs = std::max(best_gbs, gbs);
        std::printf(" %9.1f", gbs);
      }
      std::printf("   %11.2f\n", best_gbs / copy_gbs);
    }
  }
  return 0;
}
