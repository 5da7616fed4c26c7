// Runs one test with N ranks: maps the shared region, forks the ranks, waits
// for them with a deadline, and turns what they left in their slots (or how
// they died) into one row of the result table.
#pragma once

#include <string>
#include <vector>

#include "options.hpp"
#include "process_group.hpp"
#include "shared_state.hpp"
#include "test_case.hpp"

namespace hcomm::tcheck {

struct Row {
  std::string test;
  int ranks = 0;  // 0: the test runs without ranks
  Outcome result = Outcome::kNone;
  double seconds = 0;
  std::string detail;
};

class GroupRunner {
 public:
  explicit GroupRunner(const Options& options) : options_(options) {}
  Row run(const TestCase& test, int nranks) const;

 private:
  // The body of one forked rank.
  int rank_main(const TestCase& test, SharedState& shared, int rank) const;
  Row summarize(const TestCase& test, int nranks, SharedState& shared, const std::vector<RankExit>& exits) const;
  // /dev/shm files some rank used that still exist now that every rank ended.
  static std::vector<std::string> leaked_shm_files(const SharedState& shared);

  const Options& options_;
};

}  // namespace hcomm::tcheck
