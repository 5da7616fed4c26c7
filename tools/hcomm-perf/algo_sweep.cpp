#include "algo_sweep.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "algorithms.hpp"
#include "benchmark.hpp"
#include "report.hpp"

namespace hcomm::perf {
namespace {

// Auto's total time is compared with this algorithm's, forced.
constexpr std::string_view kReference = "ring";
constexpr int kMinColumn = 10;

// The algorithms hcomm_comm_force_algorithm accepts for `coll` here.
std::vector<std::string> forceable(const Communicator& comm, hcomm_coll_t coll) {
  std::vector<std::string> names;
  std::string why;
  for (const std::string& name : provided_algorithms())
    if (try_force(comm, coll, name, &why)) names.push_back(name);
  force(comm, coll, "");
  return names;
}

// Whether `algorithm`, forced, would run a call of `count` elements.
bool serves(const Communicator& comm, hcomm_coll_t coll, const std::string& algorithm, size_t count,
            hcomm_dtype_t dtype) {
  force(comm, coll, algorithm);
  const bool runs = query(comm, coll, count, dtype) == algorithm;
  force(comm, coll, "");
  return runs;
}

// Rank 0's table: the columns of the usual one up to root, a time per
// algorithm, auto's algorithm and time, and the wrong elements of them all.
class AlgoTable {
 public:
  AlgoTable(const Options& options, const Collective& collective, int nranks, const std::vector<std::string>& names)
      : options_(options),
        collective_(collective),
        nranks_(nranks),
        columns_(run_columns(options, collective)),
        names_(names),
        name_width_(4) {
    for (const std::string& n : names_) name_width_ = std::max(name_width_, static_cast<int>(n.size()));
  }

  void header() const {
    std::printf("# hcomm-perf %s\n", run_description(options_, collective_, nranks_).c_str());
    const std::string rounds =
        options_.rounds > 1 ? "; " + std::to_string(options_.rounds) + " rounds of them all, each one's best round" : "";
    std::printf(
        "# times in us, the slowest rank's median call: each algorithm forced in turn ('-': it does not serve "
        "the size), then the library's own choice (auto)%s\n#\n# %10s %12s %9s %6s %5s",
        rounds.c_str(), "size(B)", "count", "type", "redop", "root");
    for (const std::string& n : names_) std::printf(" %*s", width(n), n.c_str());
    std::printf("  %-*s %10s %8s\n", name_width_, "auto", "time(us)", "#wrong");
    std::fflush(stdout);
  }

  void row(const SweepPoint& point, const AlgoTimes& times, const std::string& auto_name, uint64_t wrong) const {
    std::printf("  %10zu %12zu %9s %6s %5s", point.bytes, point.count, columns_.dtype.c_str(), columns_.op.c_str(),
                columns_.root.c_str());
    for (size_t i = 0; i < names_.size(); ++i) {
      if (times.forced_us[i])
        std::printf(" %*.2f", width(names_[i]), *times.forced_us[i]);
      else
        std::printf(" %*s", width(names_[i]), "-");
    }
    const std::string wrong_text = columns_.checked ? std::to_string(wrong) : "-";
    std::printf("  %-*s %10.2f %8s\n", name_width_, auto_name.c_str(), times.auto_us, wrong_text.c_str());
    std::fflush(stdout);
  }

 private:
  static int width(const std::string& name) { return std::max(kMinColumn, static_cast<int>(name.size())); }

  const Options& options_;
  const Collective& collective_;
  int nranks_;
  RunColumns columns_;
  const std::vector<std::string>& names_;
  int name_width_;
};

}  // namespace

AlgoSweep measure_algorithms(const Options& options, const Collective& collective, const Communicator& comm) {
  const hcomm_coll_t coll = coll_of(collective.name);
  AlgoSweep out{.names = forceable(comm, coll)};
  const std::vector<std::string>& names = out.names;
  std::optional<AlgoTable> table;
  if (comm.rank() == 0) table.emplace(options, collective, comm.size(), names);
  Benchmark benchmark(options, collective, comm);
  if (table) table->header();

  for (const SweepPoint& point : benchmark.points()) {
    std::vector<bool> served;
    for (const std::string& name : names) served.push_back(serves(comm, coll, name, point.count, options.dtype));
    // Rounds interleave the contenders (the forced algorithms, then auto) in
    // the order of contender_at, so that a slow spell of the machine does not
    // fall on one of them only; each keeps its best round. A round's time is
    // its median call, which one call the machine held up does not move.
    AlgoTimes times{.forced_us = std::vector<std::optional<double>>(names.size()),
                    .auto_us = std::numeric_limits<double>::infinity()};
    std::string auto_name;
    uint64_t point_wrong = 0;
    const size_t contenders = names.size() + 1;
    for (int round = 0; round < options.rounds; ++round)
      for (size_t k = 0; k < contenders; ++k) {
        const size_t i = contender_at(round, k, contenders);
        if (i == names.size()) {
          const Row chosen = benchmark.measure(point);
          times.auto_us = std::min(times.auto_us, chosen.median_us);
          auto_name = chosen.algorithm;
          point_wrong += chosen.wrong;
        } else if (served[i]) {
          const Row row = benchmark.measure(point, names[i]);
          times.forced_us[i] = std::min(times.forced_us[i].value_or(row.median_us), row.median_us);
          point_wrong += row.wrong;
        }
      }
    if (const auto it = std::find(names.begin(), names.end(), auto_name); it != names.end())
      times.chosen = static_cast<size_t>(it - names.begin());
    if (table) table->row(point, times, auto_name, point_wrong);
    out.points.push_back(point);
    out.times.push_back(std::move(times));
    out.wrong += point_wrong;
  }
  if (table) print_wrong_total(run_columns(options, collective), out.wrong);
  return out;
}

uint64_t sweep_algorithms(const Options& options, const Collective& collective, const Communicator& comm) {
  const AlgoSweep sweep = measure_algorithms(options, collective, comm);
  if (comm.rank() == 0) {
    std::fputs(summary_text(summarize(sweep.times, sweep.names, kReference), kReference).c_str(), stdout);
    std::fflush(stdout);
  }
  return sweep.wrong;
}

}  // namespace hcomm::perf
