#include "result_table.hpp"

#include <string>

namespace hcomm::tcheck {

namespace {

constexpr const char* kRowFormat = "%-12s  %-5s  %-6s  %8s  %s\n";

const char* outcome_name(Outcome outcome) {
  switch (outcome) {
    case Outcome::kPass:
      return "PASS";
    case Outcome::kFail:
      return "FAIL";
    case Outcome::kSkip:
      return "SKIP";
    case Outcome::kNone:
      break;
  }
  return "?";
}

}  // namespace

void ResultTable::print_header(const Options& options) {
  std::string ranks;
  for (int n : options.rank_counts) ranks += (ranks.empty() ? "" : ", ") + std::to_string(n);
  std::fprintf(out_, "plugin   %s\n", options.plugin_path.c_str());
  std::fprintf(out_, "ranks    %s\n", ranks.c_str());
  std::fprintf(out_, "timeout  %.0f s per test\n", options.timeout_seconds);
  std::fprintf(out_, "seed     %llu (--seed repeats this run)\n\n", static_cast<unsigned long long>(options.seed));
  std::fprintf(out_, kRowFormat, "test", "ranks", "result", "time", "detail");
  std::fprintf(out_, kRowFormat, "------------", "-----", "------", "--------", "------");
  std::fflush(out_);
}

void ResultTable::add(const Row& row) {
  std::string ranks = row.ranks > 0 ? std::to_string(row.ranks) : "-";
  std::string time = format("%.2f s", row.seconds);
  std::fprintf(out_, kRowFormat, row.test.c_str(), ranks.c_str(), outcome_name(row.result), time.c_str(),
               row.detail.c_str());
  std::fflush(out_);
  (row.result == Outcome::kFail ? failed_ : row.result == Outcome::kSkip ? skipped_ : passed_)++;
}

bool ResultTable::print_summary() {
  std::fprintf(out_, "\n%d passed, %d failed, %d skipped\n", passed_, failed_, skipped_);
  std::fflush(out_);
  return failed_ == 0;
}

}  // namespace hcomm::tcheck
