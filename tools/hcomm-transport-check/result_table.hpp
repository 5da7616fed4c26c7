// The report: one row per test and rank count, printed as each finishes.
#pragma once

#include <cstdio>

#include "group_runner.hpp"

namespace hcomm::tcheck {

class ResultTable {
 public:
  explicit ResultTable(FILE* out) : out_(out) {}

  void print_header(const Options& options);
  void add(const Row& row);
  // "9 passed, 1 failed, 2 skipped"; true when nothing failed.
  bool print_summary();

 private:
  FILE* out_;
  int passed_ = 0;
  int failed_ = 0;
  int skipped_ = 0;
};

}  // namespace hcomm::tcheck
