// What hcomm-perf shows (rank 0 only): a header naming the run, one table
// row per size as it is measured, a summary, and optionally a JSON file with
// every row.
#pragma once

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "benchmark.hpp"
#include "collectives.hpp"
#include "options.hpp"

namespace hcomm::perf {

class Report {
 public:
  // Opens the JSON file at once, so that a bad path fails before the run.
  Report(const Options& options, const Collective& collective, int nranks);

  void header() const;
  void row(const Row& row);
  // The summary, and the JSON file written and closed. Throws on a write error.
  void finish();

 private:
  std::string dtype_column() const;
  std::string op_column() const;
  std::string root_column() const;
  bool checked() const;  // the #wrong column has meaning
  void write_json() const;

  const Options& options_;
  const Collective& collective_;
  int nranks_;
  std::unique_ptr<FILE, int (*)(FILE*)> json_;
  std::vector<Row> rows_;
};

}  // namespace hcomm::perf
