#include "report.hpp"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "core/common/json.hpp"

namespace hcomm::perf {
namespace {

// Columns without meaning for the collective show "-" (JSON: null).
constexpr const char* kNone = "-";

nlohmann::ordered_json text_or_null(const std::string& column) {
  return column == kNone ? nlohmann::ordered_json() : nlohmann::ordered_json(column);
}

// Times to 3 decimals of a microsecond, bandwidths to 6 of a GB/s.
double rounded(double value, double scale) { return std::round(value * scale) / scale; }

}  // namespace

Report::Report(const Options& options, const Collective& collective, int nranks)
    : options_(options),
      collective_(collective),
      nranks_(nranks),
      columns_(run_columns(options, collective)),
      json_(nullptr, &std::fclose) {
  if (options.json_path.empty()) return;
  json_.reset(std::fopen(options.json_path.c_str(), "w"));
  if (!json_) throw std::runtime_error("--json: cannot write '" + options.json_path + "': " + std::strerror(errno));
}

RunColumns run_columns(const Options& options, const Collective& collective) {
  return RunColumns{.dtype = collective.uses_data() ? std::string(dtype_info(options.dtype).name) : kNone,
                    .op = collective.uses_op ? std::string(op_name(options.op)) : kNone,
                    .root = collective.uses_root ? std::to_string(options.root) : kNone,
                    .checked = options.check && collective.uses_data()};
}

void print_wrong_total(const RunColumns& columns, uint64_t wrong) {
  if (columns.checked)
    std::printf("# wrong elements: %llu\n", static_cast<unsigned long long>(wrong));
  else
    std::printf("# results not checked\n");
}

std::string run_description(const Options& options, const Collective& collective, int nranks) {
  const RunColumns columns = run_columns(options, collective);
  std::string run = std::string(collective.name) + ":";
  if (collective.uses_data()) run += " dtype " + columns.dtype + ",";
  if (collective.uses_op) run += " op " + columns.op + ",";
  if (collective.uses_root) run += " root " + columns.root + ",";
  run += " " + std::to_string(nranks) + (nranks == 1 ? " rank, " : " ranks, ");
  if (collective.uses_data()) run += options.inplace ? "in place, " : "out of place, ";
  run += options.stream ? "stream-ordered" : options.blocking ? "blocking" : "nonblocking";
  if (options.memory == Memory::Cuda && collective.uses_data())
    run += options.buffers == Buffers::Alloc ? ", device buffers from hcomm_mem_alloc_device"
                                             : ", device buffers from cudaMalloc";
  else if (options.buffers != Buffers::Malloc && collective.uses_data())
    run += ", " + std::string(buffers_info(options.buffers).description);
  if (options.fresh_inputs && collective.uses_data()) run += ", inputs written before each call";
  if (!options.algorithm.empty()) run += ", algorithm " + options.algorithm + " forced";
  run += "; settled " + std::to_string(options.settle_ms) + " ms; warm-up " + std::to_string(options.warmup) +
         ", iterations " + std::to_string(options.iters);
  if (options.min_time_ms > 0)
    run += " or as many as take about " + std::to_string(options.min_time_ms) + " ms at the warm-up's median call";
  if (columns.checked) run += ", every element checked";
  return run;
}

void Report::header() const {
  std::printf("# hcomm-perf %s\n", run_description(options_, collective_, nranks_).c_str());
  std::printf("#\n# %10s %12s %9s %6s %5s %12s %12s %12s %8s  %s\n", "size(B)", "count", "type", "redop", "root",
              "time(us)", "algbw(GB/s)", "busbw(GB/s)", "#wrong", "algorithm");
  std::fflush(stdout);
}

void Report::row(const Row& row) {
  rows_.push_back(row);
  const std::string wrong = columns_.checked ? std::to_string(row.wrong) : kNone;
  std::printf("  %10zu %12zu %9s %6s %5s %12.2f %12.3f %12.3f %8s  %s\n", row.bytes, row.count, columns_.dtype.c_str(),
              columns_.op.c_str(), columns_.root.c_str(), row.time_us, row.algbw_gbps, row.busbw_gbps, wrong.c_str(),
              row.algorithm.c_str());
  std::fflush(stdout);
}

void Report::finish() {
  uint64_t wrong = 0;
  double busbw_sum = 0;
  for (const Row& row : rows_) {
    wrong += row.wrong;
    busbw_sum += row.busbw_gbps;
  }
  print_wrong_total(columns_, wrong);
  std::printf("# average bus bandwidth: %.3f GB/s\n", rows_.empty() ? 0.0 : busbw_sum / rows_.size());
  std::fflush(stdout);
  if (json_) write_json();
}

void Report::write_json() const {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const Row& row : rows_)
    rows.push_back({{"collective", std::string(collective_.name)},
                    {"dtype", text_or_null(columns_.dtype)},
                    {"op", text_or_null(columns_.op)},
                    {"root", collective_.uses_root ? nlohmann::ordered_json(options_.root) : nullptr},
                    {"ranks", nranks_},
                    {"inplace", options_.inplace},
                    {"blocking", options_.blocking},
                    {"stream", options_.stream},
                    {"buffers", std::string(buffers_info(options_.buffers).name)},
                    {"memory", std::string(kMemories.at(static_cast<size_t>(options_.memory)).name)},
                    {"fresh_inputs", options_.fresh_inputs},
                    {"size_bytes", row.bytes},
                    {"count", row.count},
                    {"iterations", row.iterations},
                    {"time_us", rounded(row.time_us, 1e3)},
                    {"algbw_gbps", rounded(row.algbw_gbps, 1e6)},
                    {"busbw_gbps", rounded(row.busbw_gbps, 1e6)},
                    {"wrong", columns_.checked ? nlohmann::ordered_json(row.wrong) : nullptr},
                    {"algorithm", row.algorithm},
                    {"forced", options_.algorithm.empty() ? nullptr : nlohmann::ordered_json(options_.algorithm)}});
  FILE* f = json_.get();
  if (std::fputs(json::write(rows).c_str(), f) < 0 || std::fflush(f) != 0)
    throw std::runtime_error("--json: cannot write '" + options_.json_path + "': " + std::strerror(errno));
}

}  // namespace hcomm::perf
