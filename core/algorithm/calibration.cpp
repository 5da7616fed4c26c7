#include "core/algorithm/calibration.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "core/device/reduce.hpp"

namespace hcomm::algorithm {

namespace {

template <class F>
double timed_us(F&& pass) {
  const auto start = std::chrono::steady_clock::now();
  pass();
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

LocalRates measure_local_rates(size_t bytes, int passes) {
  const size_t count = std::max<size_t>(bytes / sizeof(float), 1);
  bytes = count * sizeof(float);
  passes = std::max(passes, 1);
  std::vector<float> a(count, 1.0f), b(count, 2.0f), dst(count);
  const auto reduce = [&] { device::reduce(HCOMM_FLOAT32, HCOMM_SUM, dst.data(), a.data(), b.data(), count, 0); };
  const auto copy = [&] { std::memcpy(dst.data(), a.data(), bytes); };
  reduce();  // faults the pages in
  copy();
  // Taken in turn, each at its fastest: another process on the core (a
  // peer rank starting up beside this one) only ever slows a pass, and the
  // median of one kind of pass alone lets the ratio of the two swing
  // several-fold on busy cores.
  double reduce_us = std::numeric_limits<double>::infinity(), copy_us = reduce_us;
  for (int i = 0; i < passes; ++i) {
    reduce_us = std::min(reduce_us, timed_us(reduce));
    copy_us = std::min(copy_us, timed_us(copy));
  }
  return LocalRates{.reduce_us_per_byte = reduce_us / bytes, .copy_us_per_byte = copy_us / bytes};
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
