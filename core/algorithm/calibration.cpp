#include "core/algorithm/calibration.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/device/reduce.hpp"

namespace hcomm::algorithm {

namespace {

template <class F>
double median_us_per_byte(size_t bytes, int passes, F&& pass) {
  pass();
  std::vector<double> us(passes);
  for (double& t : us) {
    const auto start = std::chrono::steady_clock::now();
    pass();
    t = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  }
  std::nth_element(us.begin(), us.begin() + passes / 2, us.end());
  return us[passes / 2] / bytes;
}

}  // namespace

LocalRates measure_local_rates(size_t bytes, int passes) {
  const size_t count = std::max<size_t>(bytes / sizeof(float), 1);
  bytes = count * sizeof(float);
  passes = std::max(passes, 1);
  std::vector<float> a(count, 1.0f), b(count, 2.0f), dst(count);
  return LocalRates{
      .reduce_us_per_byte = median_us_per_byte(
          bytes, passes, [&] { device::reduce(HCOMM_FLOAT32, HCOMM_SUM, dst.data(), a.data(), b.data(), count, 0); }),
      .copy_us_per_byte = median_us_per_byte(bytes, passes, [&] { std::memcpy(dst.data(), a.data(), bytes); }),
  };
}

double reduce_to_copy_ratio() {
  static const double ratio = [] {
    const LocalRates r = measure_local_rates(size_t{1} << 20, 5);
    const double measured = r.copy_us_per_byte > 0 ? r.reduce_us_per_byte / r.copy_us_per_byte : 1.0;
    return std::isfinite(measured) ? std::clamp(measured, 0.5, 4.0) : 1.0;
  }();
  return ratio;
}

}  // namespace hcomm::algorithm
