// hcomm-perf's --json file (tools/hcomm-perf/report.cpp, compiled in): JSON
// that parses, with every row's keys in order, null for the columns without
// meaning, and names escaped whatever they hold.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tools/hcomm-perf/report.hpp"

namespace hcomm::perf {
namespace {

void no_fill(const DataSpec&, void*, void*, size_t) {}

// A collective of the registry's shape, without its calls: only what the
// report reads.
Collective collective(std::string_view name, bool uses_data, bool uses_op, bool uses_root) {
  return Collective{.name = name, .uses_op = uses_op, .uses_root = uses_root, .fill = uses_data ? no_fill : nullptr};
}

// The rows written through Report to a temporary --json file, parsed.
nlohmann::ordered_json written(Options options, const Collective& c, int nranks, const std::vector<Row>& rows) {
  char path[] = "/tmp/hcomm-perf-report-XXXXXX";
  const int fd = mkstemp(path);
  EXPECT_GE(fd, 0);
  close(fd);
  options.json_path = path;
  {
    Report report(options, c, nranks);
    for (const Row& row : rows) report.row(row);
    report.finish();
  }
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::remove(path);
  return nlohmann::ordered_json::parse(text.str());
}

TEST(PerfReport, JsonRowsHaveTheirKeysAndValues) {
  Options options;
  options.dtype = HCOMM_INT32;
  options.op = HCOMM_MAX;
  options.inplace = true;
  options.algorithm = "ring \"fast\" \\ one";
  const Row first{.bytes = 8,
                  .count = 2,
                  .time_us = 1.23456,
                  .median_us = 1,
                  .algbw_gbps = 0.0064801234,
                  .busbw_gbps = 0.00972,
                  .wrong = 0,
                  .iterations = 20,
                  .algorithm = "ring \"fast\" \\ one"};
  Row second = first;
  second.bytes = 64;
  second.wrong = 3;
  second.algorithm = "tree\n";
  const std::vector<Row> rows = {first, second};
  const nlohmann::ordered_json doc = written(options, collective("allreduce", true, true, false), 3, rows);
  ASSERT_TRUE(doc.is_array());
  ASSERT_EQ(doc.size(), 2u);
  std::vector<std::string> keys;
  for (const auto& [key, value] : doc[0].items()) keys.push_back(key);
  EXPECT_EQ(keys, (std::vector<std::string>{"collective", "dtype", "op", "root", "ranks", "inplace", "blocking",
                                            "stream", "buffers", "memory", "fresh_inputs", "size_bytes", "count",
                                            "iterations", "time_us", "algbw_gbps", "busbw_gbps", "wrong", "algorithm",
                                            "forced"}));
  EXPECT_EQ(doc[0], nlohmann::ordered_json::parse(R"({"collective": "allreduce", "dtype": "int32", "op": "max",
      "root": null, "ranks": 3, "inplace": true, "blocking": true, "stream": false, "buffers": "malloc", "memory": "host",
      "fresh_inputs": false,
      "size_bytes": 8, "count": 2, "iterations": 20, "time_us": 1.235, "algbw_gbps": 0.00648, "busbw_gbps": 0.00972,
      "wrong": 0, "algorithm": "ring \"fast\" \\ one", "forced": "ring \"fast\" \\ one"})"));
  EXPECT_EQ(doc[1]["size_bytes"], 64);
  EXPECT_EQ(doc[1]["wrong"], 3);
  EXPECT_EQ(doc[1]["algorithm"], "tree\n");
}

TEST(PerfReport, JsonColumnsWithoutMeaningAreNull) {
  Options options;
  options.root = 2;
  options.blocking = false;
  options.buffers = Buffers::Alloc;
  const std::vector<Row> row = {
      {.bytes = 0, .count = 0, .time_us = 5, .median_us = 5, .wrong = 0, .iterations = 1, .algorithm = "a"}};
  const nlohmann::ordered_json barrier = written(options, collective("barrier", false, false, false), 4, row).at(0);
  for (const char* key : {"dtype", "op", "root", "wrong", "forced"}) EXPECT_TRUE(barrier[key].is_null()) << key;
  EXPECT_EQ(barrier["blocking"], false);
  EXPECT_EQ(barrier["buffers"], "alloc");
  const nlohmann::ordered_json broadcast = written(options, collective("broadcast", true, false, true), 4, row).at(0);
  EXPECT_EQ(broadcast["root"], 2);
  EXPECT_EQ(broadcast["dtype"], "float32");
  EXPECT_TRUE(broadcast["op"].is_null());
  EXPECT_EQ(broadcast["wrong"], 0);
  // No rows: an empty array.
  EXPECT_EQ(written(options, collective("barrier", false, false, false), 4, {}), nlohmann::ordered_json::array());
}

}  // namespace
}  // namespace hcomm::perf
