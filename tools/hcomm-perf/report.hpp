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

// "allreduce: dtype float32, op sum, 3 ranks, out of place, blocking; warm-up
// 5, iterations 20, every element checked": the run, for headers.
std::string run_description(const Options& options, const Collective& collective, int nranks);

// The columns that describe the run: "-" where one has no meaning for the
// collective (JSON: null).
struct RunColumns {
  std::string dtype, op, root;
  bool checked;  // the #wrong column has meaning
};
RunColumns run_columns(const Options& options, const Collective& collective);
// The line after a table's rows.
void print_wrong_total(const RunColumns& columns, uint64_t wrong);

class Report {
 public:
  // Opens the JSON file at once, so that a bad path fails before the run.
  Report(const Options& options, const Collective& collective, int nranks);

  void header() const;
  void row(const Row& row);
  // The summary, and the JSON file written and closed. Throws on a write error.
  void finish();

 private:
  void write_json() const;

  const Options& options_;
  const Collective& collective_;
  int nranks_;
  RunColumns columns_;
  std::unique_ptr<FILE, int (*)(FILE*)> json_;
  std::vector<Row> rows_;
};

}  // namespace hcomm::perf
