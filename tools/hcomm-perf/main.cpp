// hcomm-perf: measures a collective over a size sweep, in the manner of
// nccl-tests, checking every element of every result; or compares the
// algorithms at every size (--sweep-algos); or measures the link model for
// HCOMM_TUNE_FILE (--calibrate). Run under hcomm-run:
//   hcomm-run -n 4 hcomm-perf -c allreduce -b 8 -e 64M -d float32 -o sum
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "algo_sweep.hpp"
#include "algorithms.hpp"
#include "benchmark.hpp"
#include "calibrate.hpp"
#include "collectives.hpp"
#include "communicator.hpp"
#include "hcomm/hcomm.h"
#include "options.hpp"
#include "report.hpp"

namespace {

using namespace hcomm::perf;

// One table row per size, the library choosing the algorithm (or --algo).
uint64_t sweep_sizes(const Options& options, const Collective& collective, const Communicator& comm) {
  std::unique_ptr<Report> report;
  if (comm.rank() == 0) report = std::make_unique<Report>(options, collective, comm.size());
  Benchmark benchmark(options, collective, comm);
  if (report) report->header();
  uint64_t wrong = 0;
  for (const SweepPoint& point : benchmark.points()) {
    const Row row = benchmark.measure(point, options.algorithm);
    wrong += row.wrong;
    if (report) report->row(row);
  }
  if (report) report->finish();
  return wrong;
}

// A command-line value this job cannot use: rank 0 says why before any rank
// ends. Returns the exit status.
int refuse(const Communicator& comm, const std::string& why) {
  if (comm.rank() == 0) std::fprintf(stderr, "hcomm-perf: %s\n", why.c_str());
  check(hcomm_barrier(comm.get(), nullptr), "hcomm_barrier");
  return 2;
}

// Allreduces of one element for at least `ms` milliseconds (the slowest
// rank's clock decides): ranks that a busy host started on one core share
// it for their first tens of milliseconds, and the first sizes would
// measure that (over tcp 50-75 us per 8-byte call instead of 15 us).
void settle(const Communicator& comm, int ms) {
  const auto start = std::chrono::steady_clock::now();
  for (int64_t more = 1; more > 0;) {
    for (int i = 0; i < 100; ++i) {
      const float x = 1;
      float y = 0;
      check(hcomm_allreduce(&x, &y, 1, HCOMM_FLOAT32, HCOMM_SUM, comm.get(), nullptr), "hcomm_allreduce (settling)");
    }
    const int64_t mine = std::chrono::steady_clock::now() - start < std::chrono::milliseconds(ms);
    check(hcomm_allreduce(&mine, &more, 1, HCOMM_INT64, HCOMM_MAX, comm.get(), nullptr), "hcomm_allreduce (settling)");
  }
}

// Every rank runs the same sweep; only rank 0 prints. Returns the exit status.
int sweep(const Options& options, const Collective& collective, Communicator& comm) {
  if (collective.rank_order && options.op == HCOMM_AVG)
    return refuse(comm, "-o avg: " + std::string(collective.name) +
                            " reduces in rank order, where AVG has no one divisor; use sum, prod, min or max");
  if (collective.uses_root && options.root >= comm.size())
    return refuse(comm, "--root " + std::to_string(options.root) + ": this job has " + std::to_string(comm.size()) +
                            " ranks (use 0 to " + std::to_string(comm.size() - 1) + ")");
  if (std::string why; !options.algorithm.empty()) {
    if (!try_force(comm, coll_of(collective.name), options.algorithm, &why))
      return refuse(comm, "--algo " + options.algorithm + ": " + why);
    force(comm, coll_of(collective.name), "");
  }
  if (options.settle_ms > 0) settle(comm, options.settle_ms);
  const uint64_t wrong =
      options.sweep_algorithms ? sweep_algorithms(options, collective, comm) : sweep_sizes(options, collective, comm);
  // Every rank knows the total of wrong elements and fails alike; none may
  // end before rank 0 has written everything, or a launcher stopping the job
  // at the first failing rank would cut the report short.
  check(hcomm_barrier(comm.get(), nullptr), "hcomm_barrier (at the end)");
  comm.destroy();
  return wrong == 0 ? 0 : 1;
}

int run(const Options& options, const Collective& collective) {
  Communicator comm;
  try {
    return options.calibrate_path.empty() ? sweep(options, collective, comm) : calibrate(options, comm);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hcomm-perf: rank %d: %s\n", comm.rank(), e.what());
    return 1;
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string_view> names = collective_names();
  Options options;
  CLI::App app;
  define_options(app, options, names);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return hcomm::tools::parse_error_exit(app, e);
  }
  try {
    return run(options, find_collective(options.collective));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hcomm-perf: %s\n", e.what());
    return 1;
  }
}
