#include "calibrate.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "benchmark.hpp"
#include "core/algorithm/calibration.hpp"
#include "core/algorithm/tune_file.hpp"

namespace hcomm::perf {
namespace {

constexpr size_t kSmallBytes = 8;
constexpr size_t kLargeBytes = size_t{16} << 20;
constexpr int kTag = 7;

uint8_t pattern(int rank, size_t i) { return static_cast<uint8_t>(rank * 131 + i * 7 + 1); }

double slowest(const Communicator& comm, double value) {
  double out = 0;
  check(hcomm_allreduce(&value, &out, 1, HCOMM_FLOAT64, HCOMM_MAX, comm.get(), nullptr), "hcomm_allreduce");
  return out;
}

double median(std::vector<double> values) {
  std::nth_element(values.begin(), values.begin() + values.size() / 2, values.end());
  return values[values.size() / 2];
}

// Every rank sends to the next rank and receives from the previous one.
class RingExchange {
 public:
  explicit RingExchange(const Communicator& comm)
      : comm_(comm),
        next_((comm.rank() + 1) % comm.size()),
        prev_((comm.rank() + comm.size() - 1) % comm.size()),
        send_(kLargeBytes),
        recv_(kLargeBytes) {
    auto* out = static_cast<uint8_t*>(send_.data());
    for (size_t i = 0; i < kLargeBytes; ++i) out[i] = pattern(comm.rank(), i);
  }

  // The slowest rank's median time of one exchange of `bytes`, in us; then
  // one more exchange into a cleared buffer, every byte of it checked.
  double time_us(size_t bytes, int warmup, int iters) {
    check(hcomm_barrier(comm_.get(), nullptr), "hcomm_barrier");
    for (int i = 0; i < warmup; ++i) once(bytes);
    std::vector<double> us(iters);
    for (double& t : us) {
      const auto start = std::chrono::steady_clock::now();
      once(bytes);
      t = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    }
    auto* in = static_cast<uint8_t*>(recv_.data());
    for (size_t i = 0; i < bytes; ++i) in[i] = static_cast<uint8_t>(~pattern(prev_, i));
    once(bytes);
    for (size_t i = 0; i < bytes; ++i)
      if (in[i] != pattern(prev_, i))
        throw CallError("the exchange of " + std::to_string(bytes) + " B from rank " + std::to_string(prev_) +
                        " delivered byte " + std::to_string(i) + " as " + std::to_string(in[i]) + ", expected " +
                        std::to_string(pattern(prev_, i)));
    return slowest(comm_, median(us));
  }

 private:
  void once(size_t bytes) {
    hcomm_request_t receive = nullptr, send = nullptr;
    check(hcomm_irecv(recv_.data(), bytes, HCOMM_UINT8, prev_, kTag, comm_.get(), &receive), "hcomm_irecv");
    check(hcomm_isend(send_.data(), bytes, HCOMM_UINT8, next_, kTag, comm_.get(), &send), "hcomm_isend");
    check(hcomm_wait(receive), "hcomm_wait (receive)");
    check(hcomm_wait(send), "hcomm_wait (send)");
  }

  const Communicator& comm_;
  int next_, prev_;
  AlignedBuffer send_, recv_;
};

// HCOMM_TRANSPORTS when set, else the transport plugins that loaded.
std::string transports() {
  const char* chosen = std::getenv("HCOMM_TRANSPORTS");
  if (chosen && *chosen) return chosen;
  std::string names;
  for (int i = 0; i < hcomm_plugin_count(); ++i) {
    hcomm_plugin_desc_t desc{};
    check(hcomm_plugin_get(i, &desc), "hcomm_plugin_get");
    if (desc.status == HCOMM_SUCCESS && std::string_view(desc.kind) == "transport")
      names += (names.empty() ? "" : ",") + std::string(desc.name);
  }
  return names;
}

double gbps(double us_per_byte) { return us_per_byte > 0 ? 1e-3 / us_per_byte : 0; }

void print(const algorithm::TuneFile& f, const Options& options) {
  std::printf("# hcomm-perf calibrate: %d ranks, transports %s; warm-up %d, iterations %d\n#\n", f.ranks,
              f.transports.c_str(), options.warmup, options.iters);
  std::printf("# %-26s %14s  %s\n", "parameter", "value", "measured as");
  auto line = [](const char* key, double value, const std::string& how) {
    std::printf("  %-26s %14.6g  %s\n", key, value, how.c_str());
  };
  auto rate = [](double us_per_byte) {
    char text[32];
    std::snprintf(text, sizeof text, " (%.2f GB/s)", gbps(us_per_byte));
    return std::string(text);
  };
  line("alpha_us", f.link.alpha_us, "8 B exchange with the ring neighbours, median, slowest rank");
  line("beta_us_per_byte", f.link.beta_us_per_byte,
       "16 MiB exchange beyond the 8 B one" + rate(f.link.beta_us_per_byte));
  line("gamma_us_per_byte", f.link.gamma_us_per_byte, "float32 sum, 8 MiB operands" + rate(f.link.gamma_us_per_byte));
  line("mapped.beta_us_per_byte", *f.mapped.beta_us_per_byte, "memcpy of 8 MiB" + rate(*f.mapped.beta_us_per_byte));
  line("mapped.gamma_us_per_byte", *f.mapped.gamma_us_per_byte, "as gamma");
}

}  // namespace

int calibrate(const Options& options, Communicator& comm) {
  if (comm.size() < 2) {
    std::fprintf(stderr, "hcomm-perf: --calibrate measures the links between ranks: run it on at least 2 ranks\n");
    return 2;
  }
  std::unique_ptr<FILE, int (*)(FILE*)> out(nullptr, &std::fclose);
  if (comm.rank() == 0) {
    out.reset(std::fopen(options.calibrate_path.c_str(), "w"));
    if (!out)
      throw std::runtime_error("--calibrate: cannot write '" + options.calibrate_path + "': " + std::strerror(errno));
  }

  RingExchange exchange(comm);
  const double small_us = exchange.time_us(kSmallBytes, options.warmup, options.iters);
  const double large_us = exchange.time_us(kLargeBytes, options.warmup, options.iters);
  check(hcomm_barrier(comm.get(), nullptr), "hcomm_barrier");
  const algorithm::LocalRates local = algorithm::measure_local_rates();

  algorithm::TuneFile f;
  f.ranks = comm.size();
  f.transports = transports();
  f.link = {.alpha_us = small_us,
            .beta_us_per_byte = std::max(0.0, (large_us - small_us) / (kLargeBytes - kSmallBytes)),
            .gamma_us_per_byte = slowest(comm, local.reduce_us_per_byte)};
  f.mapped.beta_us_per_byte = slowest(comm, local.copy_us_per_byte);
  f.mapped.gamma_us_per_byte = f.link.gamma_us_per_byte;

  if (out) {
    const std::string text = algorithm::format_tune_file(f);
    if (std::fputs(text.c_str(), out.get()) < 0 || std::fclose(out.release()) != 0)
      throw std::runtime_error("--calibrate: cannot write '" + options.calibrate_path + "': " + std::strerror(errno));
    print(f, options);
    std::printf("# wrote %s: HCOMM_TUNE_FILE=%s hands these to every communicator's cost model\n",
                options.calibrate_path.c_str(), options.calibrate_path.c_str());
    std::fflush(stdout);
  }
  check(hcomm_barrier(comm.get(), nullptr), "hcomm_barrier (at the end)");
  comm.destroy();
  return 0;
}

}  // namespace hcomm::perf
