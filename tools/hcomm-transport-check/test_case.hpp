// A test of the transport contract: a function every rank of a group runs in
// its own process. It throws CheckFailure (or Skipped) to fail (or skip), and
// leaves notes for the table when it passes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "plugin_library.hpp"
#include "rank_transport.hpp"

namespace hcomm::tcheck {

struct RankContext {
  const PluginLibrary& plugin;
  RankTransport& transport;
  int rank;
  int nranks;
  uint64_t seed;  // the run's seed: ranks derive the same random plans from it
  std::string notes;

  void note(const std::string& text) { notes += (notes.empty() ? "" : "; ") + text; }
};

struct TestCase {
  const char* name;
  const char* checks;  // one line, for --help
  void (*run)(RankContext& ctx);
  bool library_only = false;     // runs once, in one process, without calling the transport (abi)
  bool last_rank_dies = false;   // the last rank kills itself on purpose (peer-death)
  bool reports_retries = false;  // the row shows the null-request count even when it is 0 (retry)
};

// Every test, in the order they run; abi first, as the others need its checks.
const std::vector<TestCase>& test_cases();

}  // namespace hcomm::tcheck
