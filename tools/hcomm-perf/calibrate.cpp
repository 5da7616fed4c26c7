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
#include <thread>
#include <vector>

#include "algo_sweep.hpp"
#include "algorithms.hpp"
#include "benchmark.hpp"
#include "core/algorithm/calibration.hpp"
#include "core/algorithm/layout.hpp"
#include "core/algorithm/tune_file.hpp"
#include "core/common/json.hpp"
#include "core/transport/transport.hpp"

namespace hcomm::perf {
namespace {

constexpr size_t kSmallBytes = 8;
constexpr size_t kLargeBytes = size_t{16} << 20;
constexpr int kTag = 7;
constexpr int kRounds = 3;

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

// Ranks send to `next` and receive from `prev` at once: every rank around a
// ring, or the two ranks of one pair (the others, with -1, take no part).
class Exchange {
 public:
  Exchange(const Communicator& comm, int next, int prev)
      : comm_(comm),
        next_(next),
        prev_(prev),
        send_(next >= 0 ? kLargeBytes : 0),  // ranks that take no part need no buffers
        recv_(prev >= 0 ? kLargeBytes : 0) {
    auto* out = static_cast<uint8_t*>(send_.data());
    if (next_ >= 0)
      for (size_t i = 0; i < kLargeBytes; ++i) out[i] = pattern(comm.rank(), i);
  }
  static Exchange ring(const Communicator& comm) {
    return Exchange(comm, (comm.rank() + 1) % comm.size(), (comm.rank() + comm.size() - 1) % comm.size());
  }
  static Exchange pair(const Communicator& comm, int a, int b) {
    const int partner = comm.rank() == a ? b : comm.rank() == b ? a : -1;
    return Exchange(comm, partner, partner);
  }

  // The slowest rank's median time of one exchange of `bytes`, in us; then
  // one more exchange into a cleared buffer, every byte of it checked.
  double time_us(size_t bytes, int warmup, int iters) {
    check(hcomm_barrier(comm_.get(), nullptr), "hcomm_barrier");
    if (prev_ < 0) {
      sleep_through_barrier();
      return slowest(comm_, 0);
    }
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
    check(hcomm_barrier(comm_.get(), nullptr), "hcomm_barrier");
    return slowest(comm_, median(us));
  }

  // alpha from an 8 B exchange, beta from what 16 MiB takes beyond it; each
  // the best of kRounds: on a loaded machine the scheduler at times keeps
  // both ranks of a pair on one CPU for a whole round.
  hcomm_link_model_t model(int warmup, int iters, double gamma_us_per_byte) {
    double small_us = time_us(kSmallBytes, warmup, iters), large_us = time_us(kLargeBytes, warmup, iters);
    for (int round = 1; round < kRounds; ++round) {
      small_us = std::min(small_us, time_us(kSmallBytes, warmup, iters));
      large_us = std::min(large_us, time_us(kLargeBytes, warmup, iters));
    }
    return {.alpha_us = small_us,
            .beta_us_per_byte = std::max(0.0, (large_us - small_us) / (kLargeBytes - kSmallBytes)),
            .gamma_us_per_byte = gamma_us_per_byte};
  }

 private:
  // Ranks that take no part leave the CPUs to the pair: a blocking call
  // would spin or yield on them for its first milliseconds.
  void sleep_through_barrier() {
    hcomm_request_t barrier = nullptr;
    check(hcomm_ibarrier(comm_.get(), &barrier), "hcomm_ibarrier");
    for (int done = 0;;) {
      check(hcomm_test(barrier, &done), "hcomm_test");
      if (done) return;
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }

  void once(size_t bytes) {
    hcomm_request_t receive = nullptr, send = nullptr;
    check(hcomm_irecv(recv_.data(), bytes, HCOMM_UINT8, prev_, kTag, comm_.get(), &receive), "hcomm_irecv");
    check(hcomm_isend(send_.data(), bytes, HCOMM_UINT8, next_, kTag, comm_.get(), &send), "hcomm_isend");
    check(hcomm_wait(receive), "hcomm_wait (receive)");
    check(hcomm_wait(send), "hcomm_wait (send)");
  }

  const Communicator& comm_;
  int next_, prev_;
  Buffer send_, recv_;
};

// The ranks of each host: the levels of the communicator's topology document.
std::vector<std::vector<int>> host_ranks(const Communicator& comm) {
  const char* text = nullptr;
  check(hcomm_comm_topology(comm.get(), &text), "hcomm_comm_topology");
  const nlohmann::ordered_json doc = json::parse(text);
  const nlohmann::ordered_json* hosts = nullptr;
  if (doc.contains("levels") && doc["levels"].contains("hosts")) hosts = &doc["levels"]["hosts"];
  if (!hosts || !hosts->is_array() || hosts->empty())
    throw CallError("hcomm_comm_topology: no levels.hosts in the document");
  std::vector<std::vector<int>> out;
  for (const auto& host : *hosts) {
    out.emplace_back();
    if (host.is_array())
      for (const auto& rank : host) out.back().push_back(rank.is_number_integer() ? rank.get<int>() : -1);
    if (out.back().empty() || std::ranges::count(out.back(), -1))
      throw CallError("hcomm_comm_topology: a host in levels.hosts is not a list of ranks");
  }
  return out;
}

// HCOMM_TRANSPORTS when set, else the transport plugins that loaded: in the
// words a communicator matches a tune file's select rules by.
std::string transports() {
  const char* chosen = std::getenv("HCOMM_TRANSPORTS");
  return transport::allowed_names(chosen ? chosen : "");
}

// A point's size as the selector's ranges count it (message_bytes): the
// whole n * count of the collectives of per-rank blocks.
uint64_t message_bytes(hcomm_coll_t coll, const SweepPoint& point, size_t elem_size, int nranks) {
  std::vector<size_t> counts(nranks, point.count);
  const hcomm_coll_args_t args{.size = sizeof(hcomm_coll_args_t),
                               .coll = coll,
                               .count = point.count,
                               .dtype_size = elem_size,
                               .recv_counts = counts.data()};
  return algorithm::message_bytes(args, nranks);
}

// The buffers whose paths a choice must suit: a peer's malloc'd input is
// copied, an hcomm_mem_alloc'd one read in place.
constexpr Buffers kSelectBuffers[] = {Buffers::Malloc, Buffers::Alloc};

// Every algorithm of `collective` at the sizes `options` sweeps, once per
// kind of buffer. Throws where a result had a wrong element.
std::vector<AlgoSweep> sweep_buffers(Options options, const Collective& collective, const Communicator& comm) {
  options.collective = std::string(collective.name);
  std::vector<AlgoSweep> sweeps;
  for (Buffers buffers : kSelectBuffers) {
    options.buffers = buffers;
    sweeps.push_back(measure_algorithms(options, collective, comm));
    if (sweeps.back().wrong)
      throw CallError("--select: " + options.collective + " returned " + std::to_string(sweeps.back().wrong) +
                      " wrong elements with " + std::string(buffers_info(buffers).description));
  }
  return sweeps;
}

// --select: the sweeps of `collective`, each size's fastest algorithm
// (smoothed_choices) as select rules. A lone winner that stays is measured
// once more first: a slow spell of the machine over one size makes one.
// Every rank has the same (the slowest rank's) times, so all take the same
// turns.
std::vector<algorithm::TuneRule> measured_choices(const Options& options, const Collective& collective,
                                                  const Communicator& comm) {
  const std::vector<AlgoSweep> sweeps = sweep_buffers(options, collective, comm);
  const hcomm_coll_t coll = coll_of(collective.name);
  const AlgoSweep& first = sweeps.front();
  std::vector<uint64_t> starts;
  std::vector<std::vector<AlgoTimes>> at(first.points.size());
  for (size_t i = 0; i < first.points.size(); ++i) {
    for (const AlgoSweep& s : sweeps) at[i].push_back(s.times.at(i));
    starts.push_back(message_bytes(coll, first.points[i], dtype_info(options.dtype).size, comm.size()));
  }
  std::vector<std::optional<size_t>> choices = smoothed_choices(at);
  const std::vector<size_t> lone = lone_winners(choices);
  for (size_t i : lone) {
    Options again = options;
    again.min_bytes = again.max_bytes = first.points[i].bytes;
    const std::vector<AlgoSweep> more = sweep_buffers(again, collective, comm);
    for (size_t k = 0; k < more.size(); ++k) keep_best(at[i][k], more[k].times.at(0));
  }
  if (!lone.empty()) choices = smoothed_choices(at);
  std::vector<algorithm::TuneRule> rules;
  for (const ChoiceRange& r : choice_ranges(starts, choices))
    rules.push_back({.coll = coll,
                     .lo = r.lo,
                     .hi = r.hi ? r.hi : UINT64_MAX,
                     .algorithm = first.names.at(r.choice),
                     .file = options.calibrate_path,
                     .mem_kinds = HCOMM_MEM_HOST});
  return rules;
}

algorithm::LinkFields fields_of(const hcomm_link_model_t& l) {
  return {l.alpha_us, l.beta_us_per_byte, l.gamma_us_per_byte};
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
  auto model = [&](const std::string& prefix, double alpha, double beta, double gamma, const std::string& pair) {
    line((prefix + "alpha_us").c_str(), alpha, "8 B exchange of " + pair + ", best median of 3, slowest rank");
    line((prefix + "beta_us_per_byte").c_str(), beta, "16 MiB exchange beyond the 8 B one" + rate(beta));
    line((prefix + "gamma_us_per_byte").c_str(), gamma, "float32 sum, 8 MiB operands" + rate(gamma));
  };
  const hcomm_link_model_t& l = f.link;
  model("", l.alpha_us, l.beta_us_per_byte, l.gamma_us_per_byte,
        f.hosts > 1 ? "the first ranks of hosts 0 and 1" : "the ring neighbours");
  if (f.inter.alpha_us)  // the slowest link: the same figures
    model("inter.", l.alpha_us, l.beta_us_per_byte, l.gamma_us_per_byte, "the first ranks of hosts 0 and 1");
  if (f.intra.alpha_us)
    model("intra.", *f.intra.alpha_us, *f.intra.beta_us_per_byte, *f.intra.gamma_us_per_byte,
          "the first two ranks of one host");
  line("mapped.beta_us_per_byte", *f.mapped.beta_us_per_byte, "memcpy of 8 MiB" + rate(*f.mapped.beta_us_per_byte));
  line("mapped.gamma_us_per_byte", *f.mapped.gamma_us_per_byte, "as gamma");
  for (const algorithm::TuneRule& r : f.select) std::printf("  select = %s\n", r.text().c_str());
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

  check(hcomm_barrier(comm.get(), nullptr), "hcomm_barrier");  // every rank reduces at once, as in a collective
  const algorithm::LocalRates local = algorithm::measure_local_rates();
  const double gamma = slowest(comm, local.reduce_us_per_byte);
  const std::vector<std::vector<int>> hosts = host_ranks(comm);

  algorithm::TuneFile f;
  f.ranks = comm.size();
  f.hosts = static_cast<int>(hosts.size());
  f.transports = transports();
  if (hosts.size() == 1) {
    f.link = Exchange::ring(comm).model(options.warmup, options.iters, gamma);
  } else {
    // One pair per link class: the slowest link is between hosts; the
    // algorithms' costs count ranks sharing a host's network themselves.
    f.link = Exchange::pair(comm, hosts[0][0], hosts[1][0]).model(options.warmup, options.iters, gamma);
    f.inter = fields_of(f.link);
    const auto shared = std::ranges::find_if(hosts, [](const std::vector<int>& h) { return h.size() >= 2; });
    if (shared != hosts.end())
      f.intra = fields_of(Exchange::pair(comm, (*shared)[0], (*shared)[1]).model(options.warmup, options.iters, gamma));
  }
  f.mapped.beta_us_per_byte = slowest(comm, local.copy_us_per_byte);
  f.mapped.gamma_us_per_byte = f.link.gamma_us_per_byte;
  for (const std::string& name : options.select) {
    const std::vector<algorithm::TuneRule> rules = measured_choices(options, find_collective(name), comm);
    f.select.insert(f.select.end(), rules.begin(), rules.end());
  }

  if (out) {
    const std::string text = algorithm::format_tune_file(f);
    if (std::fputs(text.c_str(), out.get()) < 0 || std::fclose(out.release()) != 0)
      throw std::runtime_error("--calibrate: cannot write '" + options.calibrate_path + "': " + std::strerror(errno));
    print(f, options);
    std::printf("# wrote %s: HCOMM_TUNE_FILE=%s hands these to every communicator's cost model\n",
                options.calibrate_path.c_str(), options.calibrate_path.c_str());
    if (!f.select.empty())
      std::printf("# and its select rules to those of %d ranks on %d host%s over %s, for host memory\n", f.ranks,
                  f.hosts, f.hosts == 1 ? "" : "s", f.transports.c_str());
    std::fflush(stdout);
  }
  check(hcomm_barrier(comm.get(), nullptr), "hcomm_barrier (at the end)");
  comm.destroy();
  return 0;
}

}  // namespace hcomm::perf
