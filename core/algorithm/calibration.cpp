#include "core/algorithm/calibration.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

#include "core/device/reduce.hpp"

namespace hcomm::algorithm {

namespace {

constexpr size_t kBytes = size_t{8} << 20;  // per buffer: eight times a 1 MiB L2
constexpr int kPasses = 9;

template <class F>
double median_us_per_byte(F&& pass) {
  pass();
  std::vector<double> us(kPasses);
  for (double& t : us) {
    const auto start = std::chrono::steady_clock::now();
    pass();
    t = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  }
  std::nth_element(us.begin(), us.begin() + kPasses / 2, us.end());
  return us[kPasses / 2] / kBytes;
}

}  // namespace

LocalRates measure_local_rates() {
  const size_t count = kBytes / sizeof(float);
  std::vector<float> a(count, 1.0f), b(count, 2.0f), dst(count);
  return LocalRates{
      .reduce_us_per_byte = median_us_per_byte(
          [&] { device::reduce(HCOMM_FLOAT32, HCOMM_SUM, dst.data(), a.data(), b.data(), count, 0); }),
      .copy_us_per_byte = median_us_per_byte([&] { std::memcpy(dst.data(), a.data(), kBytes); }),
  };
}

}  // namespace hcomm::algorithm
