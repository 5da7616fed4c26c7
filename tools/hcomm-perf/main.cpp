// hcomm-perf: measures a collective over a size sweep, in the manner of
// nccl-tests, checking every element of every result. Run under hcomm-run:
//   hcomm-run -n 4 hcomm-perf -c allreduce -b 8 -e 64M -d float32 -o sum
#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "benchmark.hpp"
#include "collectives.hpp"
#include "communicator.hpp"
#include "hcomm/hcomm.h"
#include "options.hpp"
#include "report.hpp"

namespace {

using namespace hcomm::perf;

// Every rank runs the same sweep; only rank 0 prints. Returns the exit status.
int sweep(const Options& options, const Collective& collective, Communicator& comm) {
  if (collective.uses_root && options.root >= comm.size()) {
    if (comm.rank() == 0)
      std::fprintf(stderr, "hcomm-perf: --root %d: this job has %d ranks (use 0 to %d)\n", options.root, comm.size(),
                   comm.size() - 1);
    check(hcomm_barrier(comm.get(), nullptr), "hcomm_barrier");  // rank 0 has said why before any rank ends
    return 2;
  }
  std::unique_ptr<Report> report;
  if (comm.rank() == 0) report = std::make_unique<Report>(options, collective, comm.size());
  Benchmark benchmark(options, collective, comm);
  if (report) report->header();
  uint64_t wrong = 0;
  for (const SweepPoint& point : benchmark.points()) {
    const Row row = benchmark.measure(point);
    wrong += row.wrong;
    if (report) report->row(row);
  }
  if (report) report->finish();
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
    return sweep(options, collective, comm);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hcomm-perf: rank %d: %s\n", comm.rank(), e.what());
    return 1;
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string_view> names = collective_names();
  Options options;
  try {
    const std::vector<std::string_view> args(argv + 1, argv + argc);
    options = parse_options(args, names);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "hcomm-perf: %s\n%s", e.what(), usage_text(names).c_str());
    return 2;
  }
  if (options.help) {
    std::fputs(usage_text(names).c_str(), stdout);
    return 0;
  }
  try {
    return run(options, find_collective(options.collective));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hcomm-perf: %s\n", e.what());
    return 1;
  }
}
