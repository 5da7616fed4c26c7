#include "report.hpp"

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace hcomm::perf {
namespace {

// Columns without meaning for the collective show "-" (JSON: null).
constexpr const char* kNone = "-";

std::string json_string_or_null(const std::string& column) { return column == kNone ? "null" : "\"" + column + "\""; }

}  // namespace

Report::Report(const Options& options, const Collective& collective, int nranks)
    : options_(options), collective_(collective), nranks_(nranks), json_(nullptr, &std::fclose) {
  if (options.json_path.empty()) return;
  json_.reset(std::fopen(options.json_path.c_str(), "w"));
  if (!json_) throw std::runtime_error("--json: cannot write '" + options.json_path + "': " + std::strerror(errno));
}

std::string Report::dtype_column() const {
  return collective_.uses_data() ? std::string(dtype_info(options_.dtype).name) : kNone;
}
std::string Report::op_column() const { return collective_.uses_op ? std::string(op_name(options_.op)) : kNone; }
bool Report::checked() const { return options_.check && collective_.uses_data(); }

std::string Report::root_column() const { return collective_.uses_root ? std::to_string(options_.root) : kNone; }

void Report::header() const {
  std::string run = std::string(collective_.name) + ":";
  if (collective_.uses_data()) run += " dtype " + dtype_column() + ",";
  if (collective_.uses_op) run += " op " + op_column() + ",";
  if (collective_.uses_root) run += " root " + root_column() + ",";
  run += " " + std::to_string(nranks_) + (nranks_ == 1 ? " rank, " : " ranks, ");
  if (collective_.uses_data()) run += options_.inplace ? "in place, " : "out of place, ";
  run += options_.blocking ? "blocking" : "nonblocking";
  std::printf("# hcomm-perf %s; warm-up %d, iterations %d%s\n", run.c_str(), options_.warmup, options_.iters,
              checked() ? ", every element checked" : "");
  std::printf("#\n# %10s %12s %9s %6s %5s %12s %12s %12s %8s\n", "size(B)", "count", "type", "redop", "root",
              "time(us)", "algbw(GB/s)", "busbw(GB/s)", "#wrong");
  std::fflush(stdout);
}

void Report::row(const Row& row) {
  rows_.push_back(row);
  const std::string wrong = checked() ? std::to_string(row.wrong) : kNone;
  std::printf("  %10zu %12zu %9s %6s %5s %12.2f %12.3f %12.3f %8s\n", row.bytes, row.count, dtype_column().c_str(),
              op_column().c_str(), root_column().c_str(), row.time_us, row.algbw_gbps, row.busbw_gbps, wrong.c_str());
  std::fflush(stdout);
}

void Report::finish() {
  uint64_t wrong = 0;
  double busbw_sum = 0;
  for (const Row& row : rows_) {
    wrong += row.wrong;
    busbw_sum += row.busbw_gbps;
  }
  if (checked())
    std::printf("# wrong elements: %llu\n", static_cast<unsigned long long>(wrong));
  else
    std::printf("# results not checked\n");
  std::printf("# average bus bandwidth: %.3f GB/s\n", rows_.empty() ? 0.0 : busbw_sum / rows_.size());
  std::fflush(stdout);
  if (json_) write_json();
}

void Report::write_json() const {
  FILE* f = json_.get();
  std::fprintf(f, "[");
  for (size_t i = 0; i < rows_.size(); ++i) {
    const Row& row = rows_[i];
    std::fprintf(f,
                 "%s\n  {\"collective\": \"%s\", \"dtype\": %s, \"op\": %s, \"root\": %s, \"ranks\": %d, "
                 "\"inplace\": %s, \"blocking\": %s, \"size_bytes\": %zu, \"count\": %zu, \"time_us\": %.3f, "
                 "\"algbw_gbps\": %.6f, \"busbw_gbps\": %.6f, \"wrong\": %s}",
                 i == 0 ? "" : ",", std::string(collective_.name).c_str(), json_string_or_null(dtype_column()).c_str(),
                 json_string_or_null(op_column()).c_str(), collective_.uses_root ? root_column().c_str() : "null",
                 nranks_, options_.inplace ? "true" : "false", options_.blocking ? "true" : "false", row.bytes,
                 row.count, row.time_us, row.algbw_gbps, row.busbw_gbps,
                 checked() ? std::to_string(row.wrong).c_str() : "null");
  }
  std::fprintf(f, "\n]\n");
  if (std::ferror(f) || std::fflush(f) != 0)
    throw std::runtime_error("--json: cannot write '" + options_.json_path + "': " + std::strerror(errno));
}

}  // namespace hcomm::perf
