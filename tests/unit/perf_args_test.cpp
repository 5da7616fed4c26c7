// hcomm-perf's pure parts: the command line, the size sweep, the figures that
// close --sweep-algos, and the exact input and expected values of every
// collective, dtype and reduction.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "tools/hcomm-perf/algo_summary.hpp"
#include "tools/hcomm-perf/options.hpp"
#include "tools/hcomm-perf/values.hpp"

namespace hcomm::perf {
namespace {

constexpr std::string_view kCollectives[] = {"allreduce", "broadcast", "barrier"};

// Reads a command line (without the program's name) as hcomm-perf does.
Options parse(std::vector<std::string_view> args) {
  Options options;
  CLI::App app;
  define_options(app, options, kCollectives);
  app.parse(std::vector<std::string>(args.rbegin(), args.rend()));  // CLI11 takes them last first
  return options;
}

// The error hcomm-perf prints after its name, for a command line that cannot run.
std::string usage_error(std::vector<std::string_view> args) {
  try {
    parse(args);
  } catch (const CLI::ParseError& e) {
    EXPECT_NE(e.get_exit_code(), 0) << e.what();
    return tools::parse_error_text(e);
  }
  return "(no error)";
}

std::string help_text() {
  Options options;
  CLI::App app;
  define_options(app, options, kCollectives);
  return app.help();
}

TEST(PerfOptions, Defaults) {
  const Options o = parse({});
  EXPECT_EQ(o.collective, "allreduce");
  EXPECT_EQ(o.min_bytes, 8u);
  EXPECT_EQ(o.max_bytes, size_t{32} << 20);
  EXPECT_EQ(o.step_factor, 2u);
  EXPECT_EQ(o.dtype, HCOMM_FLOAT32);
  EXPECT_EQ(o.op, HCOMM_SUM);
  EXPECT_EQ(o.root, 0);
  EXPECT_EQ(o.warmup, 5);
  EXPECT_EQ(o.iters, 20);
  EXPECT_EQ(o.settle_ms, 200);
  EXPECT_FALSE(o.inplace);
  EXPECT_TRUE(o.check);
  EXPECT_TRUE(o.blocking);
  EXPECT_TRUE(o.json_path.empty());
  EXPECT_EQ(o.buffers, Buffers::Malloc);
  EXPECT_FALSE(o.fresh_inputs);
  EXPECT_EQ(o.min_time_ms, 0);
  EXPECT_TRUE(o.algorithm.empty());
  EXPECT_FALSE(o.sweep_algorithms);
  EXPECT_EQ(o.rounds, 1);
  EXPECT_TRUE(o.calibrate_path.empty());
  EXPECT_TRUE(o.select.empty());
}

TEST(PerfOptions, FreshInputs) {
  EXPECT_TRUE(parse({"--fresh-inputs"}).fresh_inputs);
  EXPECT_TRUE(parse({"--buffers", "register", "--fresh-inputs"}).fresh_inputs);
  EXPECT_EQ(usage_error({"--fresh-inputs=1"}), "--fresh-inputs takes no value");
  EXPECT_NE(help_text().find("--fresh-inputs"), std::string::npos);
}

TEST(PerfOptions, Buffers) {
  for (const BuffersInfo& info : kBuffers) {
    EXPECT_EQ(parse({"--buffers", info.name}).buffers, info.buffers);
    EXPECT_EQ(buffers_info(info.buffers).name, info.name);
  }
  EXPECT_EQ(usage_error({"--buffers=pinned"}), "--buffers: expected one of malloc, alloc, register, got 'pinned'");
  EXPECT_NE(help_text().find("--buffers KIND=malloc"), std::string::npos);
}

TEST(PerfOptions, ShortForms) {
  const Options o = parse({"-c", "broadcast", "-b", "1K", "-e", "4M", "-f", "4", "-d", "bfloat16", "-o", "max", "-r",
                           "3", "-w", "0", "-n", "7"});
  EXPECT_EQ(o.collective, "broadcast");
  EXPECT_EQ(o.min_bytes, 1024u);
  EXPECT_EQ(o.max_bytes, size_t{4} << 20);
  EXPECT_EQ(o.step_factor, 4u);
  EXPECT_EQ(o.dtype, HCOMM_BFLOAT16);
  EXPECT_EQ(o.op, HCOMM_MAX);
  EXPECT_EQ(o.root, 3);
  EXPECT_EQ(o.warmup, 0);
  EXPECT_EQ(o.iters, 7);
}

TEST(PerfOptions, LongFormsAndFlags) {
  const Options o = parse({"--collective=barrier", "--minbytes", "0", "--maxbytes=1G", "--stepfactor=8",
                           "--dtype=uint64", "--op", "avg", "--root=1", "--warmup=2", "--iters=3", "--settle=0",
                           "--inplace", "--no-check", "--nonblocking", "--json", "out.json"});
  EXPECT_EQ(o.collective, "barrier");
  EXPECT_EQ(o.min_bytes, 0u);
  EXPECT_EQ(o.max_bytes, size_t{1} << 30);
  EXPECT_EQ(o.step_factor, 8u);
  EXPECT_EQ(o.dtype, HCOMM_UINT64);
  EXPECT_EQ(o.op, HCOMM_AVG);
  EXPECT_EQ(o.root, 1);
  EXPECT_EQ(o.warmup, 2);
  EXPECT_EQ(o.iters, 3);
  EXPECT_EQ(o.settle_ms, 0);
  EXPECT_TRUE(o.inplace);
  EXPECT_FALSE(o.check);
  EXPECT_FALSE(o.blocking);
  EXPECT_EQ(o.json_path, "out.json");
  // The last of two opposite flags wins.
  EXPECT_TRUE(parse({"--no-check", "--check"}).check);
  EXPECT_TRUE(parse({"--nonblocking", "--blocking"}).blocking);
}

TEST(PerfOptions, EveryDtypeAndOpByName) {
  for (const DtypeInfo& info : kDtypes) {
    EXPECT_EQ(parse({"-d", info.name}).dtype, info.dtype);
    EXPECT_EQ(dtype_info(info.dtype).name, info.name);
  }
  for (const OpInfo& info : kOps) {
    EXPECT_EQ(parse({"-o", info.name}).op, info.op);
    EXPECT_EQ(op_name(info.op), info.name);
  }
}

TEST(PerfOptions, Help) {
  EXPECT_THROW(parse({"-h"}), CLI::CallForHelp);
  EXPECT_THROW(parse({"--help", "--no-such-option"}), CLI::CallForHelp);
  const std::string help = help_text();
  EXPECT_NE(help.find("-c,--collective NAME=allreduce"), std::string::npos) << help;
  EXPECT_NE(help.find("Collective to measure: allreduce, broadcast,\n"), std::string::npos) << help;
  EXPECT_NE(help.find(" barrier\n"), std::string::npos) << help;
  EXPECT_NE(help.find("-e,--maxbytes SIZE=32M"), std::string::npos) << help;
  EXPECT_NE(help.find("-d,--dtype TYPE=float32"), std::string::npos) << help;
  EXPECT_NE(help.find("--nonblocking"), std::string::npos) << help;
  // Wrapped to 80 columns.
  for (size_t start = 0, end; start < help.size(); start = end + 1) {
    end = std::min(help.find('\n', start), help.size());
    EXPECT_LE(end - start, 80u) << help.substr(start, end - start);
  }
}

TEST(PerfOptions, Sizes) {
  EXPECT_EQ(parse_size("0"), 0u);
  EXPECT_EQ(parse_size("4097"), 4097u);
  EXPECT_EQ(parse_size("3k"), 3u * 1024);
  EXPECT_EQ(parse_size("64K"), 64u * 1024);
  EXPECT_EQ(parse_size("5m"), size_t{5} << 20);
  EXPECT_EQ(parse_size("2G"), size_t{2} << 30);
  for (const char* bad : {"", "K", "12X", "-1", "1.5M", "+4", " 4", "4 ", "4KB"})
    EXPECT_THROW(parse_size(bad), CLI::ValidationError) << "'" << bad << "'";
  EXPECT_THROW(parse_size("99999999999999999999"), CLI::ValidationError);
  EXPECT_THROW(parse_size("17179869184G"), CLI::ValidationError);
  EXPECT_EQ(parse_size("17179869183G"), size_t{17179869183} << 30);
  // On the command line, as transforms of -b and -e.
  EXPECT_EQ(parse({"-b", "3k", "-e", "17179869183G"}).max_bytes, size_t{17179869183} << 30);
  EXPECT_EQ(parse({"-b", "3k"}).min_bytes, 3u * 1024);
  EXPECT_EQ(usage_error({"-e", "17179869184G"}),
            "--maxbytes: expected at most 18446744073709551615 bytes, got '17179869184G'");
}

TEST(PerfOptions, ErrorsNameTheArgument) {
  EXPECT_EQ(usage_error({"--frobnicate"}), "The following argument was not expected: --frobnicate");
  EXPECT_EQ(usage_error({"-x"}), "The following argument was not expected: -x");
  EXPECT_EQ(usage_error({"-b"}), "--minbytes: 1 required SIZE missing");
  EXPECT_EQ(usage_error({"-n", "5", "--iters"}), "--iters: 1 required N missing");
  EXPECT_EQ(usage_error({"--inplace=yes"}), "--inplace takes no value");
  EXPECT_EQ(usage_error({"--no-check=1"}), "--no-check takes no value");
  EXPECT_EQ(usage_error({"-e", "12X"}),
            "--maxbytes: expected a number of bytes, optionally with a K, M or G suffix, got '12X'");
  EXPECT_EQ(usage_error({"-d", "float8"}),
            "--dtype: expected one of int8, uint8, int32, uint32, int64, uint64, float16, bfloat16, float32, "
            "float64, got 'float8'");
  EXPECT_EQ(usage_error({"--op=mean"}), "--op: expected one of sum, prod, min, max, avg, got 'mean'");
  EXPECT_EQ(usage_error({"-c", "alltoall"}),
            "--collective: expected one of allreduce, broadcast, barrier, got 'alltoall'");
  EXPECT_EQ(usage_error({"-b", "1M", "-e", "64K"}), "--minbytes 1048576 is larger than --maxbytes 65536");
  EXPECT_EQ(usage_error({"-f", "1"}), "--stepfactor: expected an integer from 2 to 1024, got '1'");
  EXPECT_EQ(usage_error({"-f", "1025"}), "--stepfactor: expected an integer from 2 to 1024, got '1025'");
  EXPECT_EQ(usage_error({"-n", "0"}), "--iters: expected an integer from 1 to 1000000000, got '0'");
  EXPECT_EQ(usage_error({"-w", "-1"}), "--warmup: expected an integer from 0 to 1000000000, got '-1'");
  EXPECT_EQ(usage_error({"--root", "two"}), "--root: expected an integer from 0 to 1000000000, got 'two'");
  EXPECT_EQ(usage_error({"--settle", "-5"}), "--settle: expected an integer from 0 to 600000, got '-5'");
  EXPECT_EQ(usage_error({"--iters=99999999999"}),
            "--iters: expected an integer from 1 to 1000000000, got '99999999999'");
  EXPECT_EQ(usage_error({"-n", "1.5"}), "--iters: expected an integer from 1 to 1000000000, got '1.5'");
  // The ends of a range are in it; integers are decimal (CLI11 alone would read 010 as octal).
  EXPECT_EQ(parse({"-f", "1024"}).step_factor, 1024u);
  EXPECT_EQ(parse({"-n", "1000000000"}).iters, 1000000000);
  EXPECT_EQ(parse({"-n", "010"}).iters, 10);
  EXPECT_EQ(parse({"-r", "09"}).root, 9);
}

TEST(PerfOptions, AlgorithmChoiceAndCalibration) {
  const Options forced = parse({"--algo", "ring", "-c", "broadcast"});
  EXPECT_EQ(forced.algorithm, "ring");
  EXPECT_FALSE(forced.sweep_algorithms);
  EXPECT_TRUE(forced.calibrate_path.empty());
  EXPECT_EQ(parse({"--algo=halving_doubling"}).algorithm, "halving_doubling");
  EXPECT_TRUE(parse({"--sweep-algos"}).sweep_algorithms);
  EXPECT_EQ(parse({"--sweep-algos"}).rounds, 1);
  EXPECT_EQ(parse({"--sweep-algos", "--rounds", "3"}).rounds, 3);
  EXPECT_EQ(parse({"--calibrate", "link.tune", "-w", "1", "-n", "9"}).calibrate_path, "link.tune");
  EXPECT_EQ(parse({"--calibrate=/tmp/a b.tune"}).calibrate_path, "/tmp/a b.tune");
  const std::string help = help_text();
  for (const char* option : {"--algo NAME", "--sweep-algos", "--rounds R=1", "--calibrate FILE", "--select COLLS"})
    EXPECT_NE(help.find(option), std::string::npos) << option;
}

TEST(PerfOptions, MinTime) {
  EXPECT_EQ(parse({}).min_time_ms, 0);
  EXPECT_EQ(parse({"--min-time", "25"}).min_time_ms, 25);
  EXPECT_EQ(usage_error({"--min-time", "20", "-w", "0"}),
            "--min-time sets the iterations from the warm-up's calls: it needs -w 1 or more");
  EXPECT_EQ(usage_error({"--min-time", "-1"}), "--min-time: expected an integer from 0 to 600000, got '-1'");
}

TEST(PerfOptions, AlgorithmOptionsThatDoNotCombine) {
  EXPECT_EQ(usage_error({"--algo"}), "--algo: 1 required NAME missing");
  EXPECT_EQ(usage_error({"--algo="}), "--algo: 1 required NAME missing");
  EXPECT_EQ(usage_error({"--algo", ""}), "--algo: expected an algorithm name, got ''");
  EXPECT_EQ(usage_error({"--calibrate", ""}), "--calibrate: expected a file name, got ''");
  EXPECT_EQ(usage_error({"--sweep-algos=yes"}), "--sweep-algos takes no value");
  EXPECT_EQ(usage_error({"--sweep-algos", "--algo", "ring"}),
            "--sweep-algos forces every algorithm in turn: it does not combine with --algo");
  EXPECT_EQ(usage_error({"--sweep-algos", "--json", "x.json"}),
            "--json writes one algorithm per size: it does not combine with --sweep-algos");
  EXPECT_EQ(usage_error({"--rounds", "2"}),
            "--rounds repeats the algorithms of --sweep-algos in turn: it needs --sweep-algos or --select");
  EXPECT_EQ(usage_error({"--sweep-algos", "--rounds", "0"}), "--rounds: expected an integer from 1 to 100, got '0'");
  const std::string calibrate =
      "--calibrate measures the links, not a collective: it does not combine with --algo, "
      "--sweep-algos or --json";
  EXPECT_EQ(usage_error({"--calibrate", "f", "--algo", "ring"}), calibrate);
  EXPECT_EQ(usage_error({"--sweep-algos", "--calibrate", "f"}), calibrate);
  EXPECT_EQ(usage_error({"--calibrate", "f", "--json", "x.json"}), calibrate);
}

// Three algorithms over four sizes; "-" where one does not serve a size.
std::vector<AlgoTimes> four_sizes() {
  constexpr std::nullopt_t none = std::nullopt;
  return {
      // within 10% of 10, and so is its choice's forced time
      {.forced_us = {10.0, 20.0, none}, .auto_us = 10.5, .chosen = 0},
      // 22.1 > 22: not within; the choice (20.0) is the best
      {.forced_us = {30.0, 20.0, 25.0}, .auto_us = 22.1, .chosen = 1},
      // nothing forced: not counted
      {.forced_us = {none, none, none}, .auto_us = 7.0},
      // exactly 10% over: within; the choice's forced time (50) is not
      {.forced_us = {none, 40.0, 50.0}, .auto_us = 44.0, .chosen = 2},
  };
}

TEST(PerfAlgoSummary, CountsSizesWhereAutoIsCloseToTheBest) {
  const std::vector<std::string> names = {"ring", "tree", "direct"};
  const AlgoSummary s = summarize(four_sizes(), names, "ring");
  EXPECT_EQ(s.sizes, 3);
  EXPECT_EQ(s.auto_close, 2);
  EXPECT_EQ(s.choice_close, 2);
  // ring ran at the first two sizes: (10.5 + 22.1) / (10 + 30) - 1.
  EXPECT_EQ(s.reference_sizes, 2);
  ASSERT_TRUE(s.vs_reference_percent.has_value());
  EXPECT_NEAR(*s.vs_reference_percent, (32.6 / 40 - 1) * 100, 1e-9);
  // the best forced at those sizes: (10 + 20) / (10 + 30) - 1
  ASSERT_TRUE(s.best_vs_reference_percent.has_value());
  EXPECT_NEAR(*s.best_vs_reference_percent, -25.0, 1e-9);
  EXPECT_EQ(summary_text(s, "ring"),
            "# auto within 10% of the best forced algorithm at 2 of 3 sizes\n"
            "# auto's choice, forced, within 10% of the best forced algorithm at 2 of 3 sizes\n"
            "# auto against ring forced: sum(auto) / sum(ring) - 1 = -18.5% over the 2 sizes ring serves\n"
            "# the best forced algorithm at each of those sizes against ring: -25.0%\n");
  const AlgoSummary tree = summarize(four_sizes(), names, "tree");
  EXPECT_EQ(tree.reference_sizes, 3);
  EXPECT_NEAR(*tree.vs_reference_percent, ((10.5 + 22.1 + 44.0) / 80 - 1) * 100, 1e-9);
  EXPECT_NEAR(*tree.best_vs_reference_percent, ((10.0 + 20.0 + 40.0) / 80 - 1) * 100, 1e-9);
  const std::string tree_text = summary_text(tree, "tree");
  EXPECT_NE(tree_text.find("# auto against tree forced: sum(auto) / sum(tree) - 1 = -4.3% over the 3 sizes tree "
                           "serves\n# the best forced algorithm at each of those sizes against tree: -12.5%\n"),
            std::string::npos);
}

// Without a forced time of its own (auto's algorithm is no column, or did not
// run forced at that size), the choice is judged by auto's time.
TEST(PerfAlgoSummary, ChoiceWithoutAForcedTime) {
  constexpr std::nullopt_t none = std::nullopt;
  const std::vector<AlgoTimes> sizes = {
      {.forced_us = {none, 20.0}, .auto_us = 21.0, .chosen = 0},
      {.forced_us = {none, 20.0}, .auto_us = 23.0, .chosen = 0},
      {.forced_us = {10.0, 20.0}, .auto_us = 10.0},
      {.forced_us = {10.0, 20.0}, .auto_us = 12.0},
  };
  const AlgoSummary s = summarize(sizes, {"a", "b"}, "ring");
  EXPECT_EQ(s.sizes, 4);
  EXPECT_EQ(s.auto_close, 2);
  EXPECT_EQ(s.choice_close, 2);
}

TEST(PerfAlgoSummary, WithoutTheReference) {
  const AlgoSummary s = summarize(four_sizes(), {"a", "b", "c"}, "ring");
  EXPECT_EQ(s.sizes, 3);
  EXPECT_EQ(s.reference_sizes, 0);
  EXPECT_FALSE(s.vs_reference_percent.has_value());
  EXPECT_FALSE(s.best_vs_reference_percent.has_value());
  const std::string text = summary_text(s, "ring");
  EXPECT_NE(text.find("# auto against ring forced: ring serves no size of this sweep\n"), std::string::npos);
  EXPECT_EQ(text.find("at each of those sizes"), std::string::npos);
  const AlgoSummary empty = summarize({}, {}, "ring");
  EXPECT_EQ(empty.sizes, 0);
  EXPECT_EQ(empty.auto_close, 0);
  EXPECT_FALSE(empty.vs_reference_percent.has_value());
}

// Two sweeps (two kinds of buffers): the algorithm least behind the best in
// its worst sweep; auto's own where it comes within 3% of that.
TEST(PerfCalibrate, FastestChoiceIsTheLeastBehindInEverySweep) {
  constexpr std::nullopt_t none = std::nullopt;
  // a: best in the first, 1.5x in the second; b: 1.2x and best; c: 1.1x in both.
  const std::vector<AlgoTimes> sweeps = {{.forced_us = {10.0, 12.0, 11.0}, .auto_us = 12.0, .chosen = 1},
                                         {.forced_us = {15.0, 10.0, 11.0}, .auto_us = 10.0, .chosen = 1}};
  EXPECT_EQ(fastest_choice(sweeps), std::optional<size_t>(2));
  // auto's b at 1.12 against c at 1.10: within 3%, so b stays.
  const std::vector<AlgoTimes> near = {{.forced_us = {10.0, 11.2, 11.0}, .auto_us = 11.2, .chosen = 1},
                                       {.forced_us = {15.0, 10.0, 11.0}, .auto_us = 10.0, .chosen = 1}};
  EXPECT_EQ(fastest_choice(near), std::optional<size_t>(1));
  // An algorithm missing from one sweep is not chosen, however fast elsewhere.
  const std::vector<AlgoTimes> gaps = {{.forced_us = {1.0, 12.0, none}, .auto_us = 12.0},
                                       {.forced_us = {none, 10.0, 5.0}, .auto_us = 10.0}};
  EXPECT_EQ(fastest_choice(gaps), std::optional<size_t>(1));
  EXPECT_EQ(fastest_choice({{.forced_us = {none, none}, .auto_us = 1.0}}), std::nullopt);
  EXPECT_EQ(fastest_choice({}), std::nullopt);
  EXPECT_EQ(fastest_choice({{.forced_us = {3.0, 2.0}, .auto_us = 2.0}}), std::optional<size_t>(1));
  const std::vector<std::optional<double>> worst = worst_ratios(sweeps);
  ASSERT_EQ(worst.size(), 3u);
  EXPECT_DOUBLE_EQ(*worst[0], 1.5);
  EXPECT_DOUBLE_EQ(*worst[1], 1.2);
  EXPECT_DOUBLE_EQ(*worst[2], 1.1);
  EXPECT_EQ(worst_ratios(gaps), (std::vector<std::optional<double>>{std::nullopt, 12.0, std::nullopt}));
}

// A lone size's winner between two sizes of another gives way to that one
// where it comes within 10% there; not where it is further behind, nor at
// the ends, nor between neighbours that disagree.
TEST(PerfCalibrate, LoneWinnersGiveWayToTheirNeighbours) {
  const auto size = [](double a, double b) {
    return std::vector<AlgoTimes>{{.forced_us = {a, b}, .auto_us = a}, {.forced_us = {a, b}, .auto_us = a}};
  };
  using Choices = std::vector<std::optional<size_t>>;
  // b wins alone at the second size, where a is 8% behind: a keeps it.
  EXPECT_EQ(smoothed_choices({size(1, 2), size(1.08, 1), size(1, 2)}), (Choices{0, 0, 0}));
  // 20% behind: b keeps it.
  EXPECT_EQ(smoothed_choices({size(1, 2), size(1.2, 1), size(1, 2)}), (Choices{0, 1, 0}));
  // At the ends, and between neighbours that disagree, winners stay.
  EXPECT_EQ(smoothed_choices({size(1.05, 1), size(1, 2), size(1, 2)}), (Choices{1, 0, 0}));
  EXPECT_EQ(smoothed_choices({size(1, 2), size(1.05, 1), size(2, 1.01)}), (Choices{0, 1, 1}));
  EXPECT_EQ(smoothed_choices({}), Choices{});
  EXPECT_EQ(lone_winners({0, 1, 0, 0, 2, 0, 1, std::nullopt, 1, 1}), (std::vector<size_t>{1, 4, 7}));
  EXPECT_EQ(lone_winners({std::nullopt, 1, std::nullopt}), std::vector<size_t>{});
}

// Measured again, each contender keeps its better time.
TEST(PerfCalibrate, KeepBestTakesTheBetterTimes) {
  AlgoTimes first{.forced_us = {10.0, std::nullopt, 30.0}, .auto_us = 12.0, .chosen = 0};
  keep_best(first, {.forced_us = {11.0, 5.0, 20.0}, .auto_us = 9.0, .chosen = 2});
  EXPECT_EQ(first.forced_us, (std::vector<std::optional<double>>{10.0, 5.0, 20.0}));
  EXPECT_EQ(first.auto_us, 9.0);
  EXPECT_EQ(first.chosen, std::optional<size_t>(0));
}

// A choice holds from its size (the first from 0) to the next size with
// another one; a size without one leaves a gap; the last has no end.
TEST(PerfCalibrate, ChoiceRangesMergeNeighbours) {
  const auto text = [](const std::vector<ChoiceRange>& ranges) {
    std::string out;
    for (const ChoiceRange& r : ranges)
      out += std::to_string(r.lo) + "-" + (r.hi ? std::to_string(r.hi) : "inf") + ":" + std::to_string(r.choice) + " ";
    return out;
  };
  constexpr std::nullopt_t none = std::nullopt;
  const std::vector<uint64_t> starts = {8, 16, 32, 64, 128, 256};
  EXPECT_EQ(text(choice_ranges(starts, {0, 0, 1, 1, 1, 0})), "0-32:0 32-256:1 256-inf:0 ");
  EXPECT_EQ(text(choice_ranges(starts, {0, 0, 0, 0, 0, 0})), "0-inf:0 ");
  EXPECT_EQ(text(choice_ranges(starts, {none, 2, none, none, 2, 2})), "16-32:2 128-inf:2 ");
  EXPECT_EQ(text(choice_ranges(starts, {1, none, none, none, none, none})), "0-16:1 ");
  EXPECT_EQ(text(choice_ranges({}, {})), "");
}

TEST(PerfOptions, SelectNamesCollectivesForCalibrate) {
  EXPECT_EQ(parse({"--calibrate", "f", "--select", "allreduce,broadcast"}).select,
            (std::vector<std::string>{"allreduce", "broadcast"}));
  EXPECT_EQ(parse({"--calibrate", "f", "--select=all"}).select,
            (std::vector<std::string>{"allreduce", "broadcast", "barrier"}));
  EXPECT_EQ(parse({"--calibrate", "f", "--select", "allreduce", "--rounds", "3"}).rounds, 3);
  EXPECT_EQ(usage_error({"--select", "allreduce"}),
            "--select measures choices of algorithm into a tune file: it needs --calibrate FILE");
  const std::string accepted = "--select: expected all, or some of allreduce, broadcast, barrier separated by commas, ";
  EXPECT_EQ(usage_error({"--calibrate", "f", "--select", "allreduce,nosuch"}),
            accepted + "got 'allreduce,nosuch': 'nosuch' is none of them");
  EXPECT_EQ(usage_error({"--calibrate", "f", "--select", "all,allreduce"}),
            accepted + "got 'all,allreduce': 'all' is none of them");
  EXPECT_EQ(usage_error({"--calibrate", "f", "--select", "allreduce,"}), accepted + "got 'allreduce,': an empty name");
  EXPECT_EQ(usage_error({"--calibrate", "f", "--select", ""}), accepted + "got '': an empty name");
}

// Every round runs every contender once; in no two rounds in a row does a
// contender run last and then first (back to back), nor after the same one.
TEST(PerfSweep, RoundsInterleaveTheContenders) {
  for (size_t contenders = 2; contenders <= 9; ++contenders)
    for (int round = 0; round < 4; ++round) {
      std::vector<size_t> order, next;
      for (size_t k = 0; k < contenders; ++k) order.push_back(contender_at(round, k, contenders));
      for (size_t k = 0; k < contenders; ++k) next.push_back(contender_at(round + 1, k, contenders));
      std::vector<size_t> sorted = order;
      std::sort(sorted.begin(), sorted.end());
      for (size_t k = 0; k < contenders; ++k) ASSERT_EQ(sorted[k], k) << contenders << " contenders, round " << round;
      EXPECT_NE(order.back(), next.front()) << contenders << " contenders, round " << round;
      if (contenders <= 2) continue;  // each has one possible predecessor
      for (size_t k = 1; k < contenders; ++k)
        for (size_t j = 1; j < contenders; ++j) {
          if (next[j] != order[k]) continue;
          EXPECT_NE(next[j - 1], order[k - 1]) << contenders << " contenders, round " << round;
        }
    }
}

TEST(PerfSweep, PowersOfTheFactor) {
  EXPECT_EQ(size_sweep(8, 32, 2, 4), (std::vector<SweepPoint>{{8, 2}, {16, 4}, {32, 8}}));
  EXPECT_EQ(size_sweep(3, 100, 3, 1), (std::vector<SweepPoint>{{3, 3}, {9, 9}, {27, 27}, {81, 81}}));
  EXPECT_EQ(size_sweep(64, 64, 2, 8), (std::vector<SweepPoint>{{64, 8}}));
}

TEST(PerfSweep, RoundsDownToWholeElementsWithoutRepeats) {
  // 6, 12, 24, 48 bytes of 4-byte elements.
  EXPECT_EQ(size_sweep(6, 48, 2, 4), (std::vector<SweepPoint>{{4, 1}, {12, 3}, {24, 6}, {48, 12}}));
  // Below one element: a single row of count 0.
  EXPECT_EQ(size_sweep(1, 16, 2, 8), (std::vector<SweepPoint>{{0, 0}, {8, 1}, {16, 2}}));
  EXPECT_EQ(size_sweep(1, 1, 2, 8), (std::vector<SweepPoint>{{0, 0}}));
}

TEST(PerfSweep, StartsFromZero) {
  EXPECT_EQ(size_sweep(0, 0, 2, 4), (std::vector<SweepPoint>{{0, 0}}));
  EXPECT_EQ(size_sweep(0, 16, 2, 4), (std::vector<SweepPoint>{{0, 0}, {4, 1}, {8, 2}, {16, 4}}));
}

TEST(PerfSweep, NoOverflowNearTheLargestSize) {
  const size_t max = std::numeric_limits<size_t>::max();
  EXPECT_EQ(size_sweep(size_t{1} << 62, max, 2, 1),
            (std::vector<SweepPoint>{{size_t{1} << 62, size_t{1} << 62}, {size_t{1} << 63, size_t{1} << 63}}));
  EXPECT_EQ(size_sweep(max, max, 1024, 1).size(), 1u);
}

// The codecs: known bit patterns, and every exact integer back unchanged.
TEST(PerfValues, Float16Bits) {
  EXPECT_EQ(Float16Codec::encode(0), 0x0000);
  EXPECT_EQ(Float16Codec::encode(1), 0x3C00);
  EXPECT_EQ(Float16Codec::encode(3), 0x4200);
  EXPECT_EQ(Float16Codec::encode(-2), 0xC000);
  EXPECT_EQ(Float16Codec::encode(2048), 0x6800);
  EXPECT_EQ(Float16Codec::encode(-2047), 0xE7FF);
  EXPECT_EQ(Float16Codec::encode(int64_t{1} << 15), 0x7800);
  EXPECT_EQ(Float16Codec::decode(0x0001), std::ldexp(1.0, -24));
  EXPECT_EQ(Float16Codec::decode(0x7C00), HUGE_VAL);
  EXPECT_TRUE(std::isnan(Float16Codec::decode(0x7E00)));
  for (int64_t v = -2048; v <= 2048; ++v) ASSERT_EQ(Float16Codec::decode(Float16Codec::encode(v)), v);
}

TEST(PerfValues, BFloat16Bits) {
  EXPECT_EQ(BFloat16Codec::encode(1), 0x3F80);
  EXPECT_EQ(BFloat16Codec::encode(-256), 0xC380);
  EXPECT_EQ(BFloat16Codec::encode(int64_t{1} << 62), 0x5E80);
  for (int64_t v = -256; v <= 256; ++v) ASSERT_EQ(BFloat16Codec::decode(BFloat16Codec::encode(v)), v);
}

TEST(PerfValues, EveryDtypeHoldsItsExactRange) {
  for (const DtypeInfo& info : kDtypes) {
    const DtypeLimits limits = dtype_limits(info.dtype);
    const int64_t lo = limits.is_signed ? -limits.exact : 0;
    std::vector<int64_t> samples = {
        lo, lo + 1, -1, 0, 1, 2, limits.exact - 1, limits.exact, int64_t{1} << limits.max_exponent};
    for (const int64_t v : samples) {
      if (v < lo) continue;
      visit_dtype(info.dtype, [&](auto codec) {
        using Codec = decltype(codec);
        EXPECT_EQ(sizeof(typename Codec::Bits), info.size) << info.name;
        const auto bits = Codec::encode(v);
        EXPECT_EQ(element_value(info.dtype, &bits, 0), static_cast<double>(v)) << info.name << " " << v;
      });
    }
  }
}

// Reduces the inputs of all ranks exactly (int64) and checks the formulas:
// the result, and that no value or partial result leaves what the dtype
// holds exactly whatever the order of the reduction.
void check_reduction(hcomm_dtype_t dtype, hcomm_op_t op, int nranks, size_t count) {
  SCOPED_TRACE(std::string(dtype_info(dtype).name) + " " + std::string(op_name(op)) + " ranks " +
               std::to_string(nranks));
  const DtypeLimits limits = dtype_limits(dtype);
  const int64_t lo = limits.is_signed ? -limits.exact : 0;
  const ReductionValues values(dtype, op, nranks);
  for (size_t i = 0; i < count; ++i) {
    int64_t sum = 0, abs_sum = 0, prod = 1;
    int64_t min = std::numeric_limits<int64_t>::max(), max = std::numeric_limits<int64_t>::min();
    for (int r = 0; r < nranks; ++r) {
      const int64_t v = values.input(r, i);
      ASSERT_GE(v, lo) << "element " << i << " rank " << r;
      ASSERT_LE(v, limits.exact) << "element " << i << " rank " << r;
      sum += v;
      abs_sum += v < 0 ? -v : v;
      min = std::min(min, v);
      max = std::max(max, v);
      if (op == HCOMM_PROD) {
        ASSERT_TRUE(v == 1 || v == 2);
        prod *= v;
      }
    }
    int64_t want = 0;
    switch (op) {
      case HCOMM_SUM:
        want = sum;
        break;
      case HCOMM_PROD:
        want = prod;
        break;
      case HCOMM_MIN:
        want = min;
        break;
      case HCOMM_MAX:
        want = max;
        break;
      case HCOMM_AVG:
        ASSERT_EQ(sum % nranks, 0) << "element " << i << ": the average must not need rounding";
        want = sum / nranks;
        break;
      case HCOMM_NUM_OPS:
      case HCOMM_OP_ENUM_MIN:
        break;
    }
    ASSERT_EQ(values.expected(i), want) << "element " << i;
    if (op == HCOMM_SUM || op == HCOMM_AVG) {
      ASSERT_LE(abs_sum, limits.exact) << "element " << i;
    }
    if (op == HCOMM_PROD) {
      ASSERT_LE(prod, int64_t{1} << limits.max_exponent) << "element " << i;
    }
  }
}

TEST(PerfValues, ReductionsAreExactInEveryDtypeOpAndRankCount) {
  for (const DtypeInfo& dtype : kDtypes)
    for (const OpInfo& op : kOps)
      for (const int nranks : {1, 2, 3, 4, 7, 8, 64, 1024})
        check_reduction(dtype.dtype, op.op, nranks, nranks > 8 ? 300 : 3000);
}

TEST(PerfValues, ValuesDependOnRankAndElement) {
  const int nranks = 4;
  for (const OpInfo& op : kOps) {
    const ReductionValues values(HCOMM_FLOAT32, op.op, nranks);
    std::vector<int> extreme_of(nranks, 0);
    bool results_vary = false, inputs_vary = false;
    for (size_t i = 0; i < 200; ++i) {
      results_vary |= values.expected(i) != values.expected(0);
      inputs_vary |= values.input(0, i) != values.input(1, i);
      for (int r = 0; r < nranks; ++r) extreme_of[r] += values.input(r, i) == values.expected(i);
    }
    EXPECT_TRUE(results_vary) << op.name;
    EXPECT_TRUE(inputs_vary) << op.name;
    if (op.op == HCOMM_MIN || op.op == HCOMM_MAX) {
      for (int r = 0; r < nranks; ++r) EXPECT_GT(extreme_of[r], 0) << op.name << ": rank " << r << " never decides";
    }
  }
  // A product has every number of factors 2 from none to all ranks.
  const ReductionValues prod(HCOMM_FLOAT64, HCOMM_PROD, nranks);
  for (size_t i = 0; i <= static_cast<size_t>(nranks); ++i) EXPECT_EQ(prod.expected(i), int64_t{1} << i);
}

TEST(PerfValues, FillReductionWritesEncodedValues) {
  const size_t count = 37;
  for (const hcomm_dtype_t dtype : {HCOMM_INT8, HCOMM_UINT32, HCOMM_FLOAT16, HCOMM_BFLOAT16, HCOMM_FLOAT64}) {
    const DataSpec spec{.dtype = dtype, .op = HCOMM_MIN, .nranks = 3, .rank = 2, .root = 0};
    const size_t elem = dtype_info(dtype).size;
    std::vector<unsigned char> input(count * elem), expected(count * elem);
    fill_reduction(spec, input.data(), expected.data(), count);
    const ReductionValues values(dtype, HCOMM_MIN, 3);
    for (size_t i = 0; i < count; ++i) {
      ASSERT_EQ(element_value(dtype, input.data(), i), values.input(2, i)) << dtype_info(dtype).name << " " << i;
      ASSERT_EQ(element_value(dtype, expected.data(), i), values.expected(i)) << dtype_info(dtype).name << " " << i;
    }
  }
}

TEST(PerfValues, FillBroadcastLeavesNonRootsWrong) {
  const size_t count = 101;
  for (const hcomm_dtype_t dtype : {HCOMM_UINT8, HCOMM_INT64, HCOMM_FLOAT16, HCOMM_FLOAT32}) {
    const size_t elem = dtype_info(dtype).size;
    std::vector<unsigned char> root_in(count * elem), root_expected(count * elem);
    std::vector<unsigned char> other_in(count * elem), other_expected(count * elem);
    fill_broadcast({.dtype = dtype, .op = HCOMM_SUM, .nranks = 4, .rank = 1, .root = 1}, root_in.data(),
                   root_expected.data(), count);
    fill_broadcast({.dtype = dtype, .op = HCOMM_SUM, .nranks = 4, .rank = 3, .root = 1}, other_in.data(),
                   other_expected.data(), count);
    EXPECT_EQ(root_in, root_expected);
    EXPECT_EQ(other_expected, root_expected);
    EXPECT_EQ(compare_elements(other_in.data(), other_expected.data(), count, elem).wrong, count);
    const BroadcastValues values(dtype, 1);
    for (size_t i = 0; i < count; ++i) ASSERT_EQ(element_value(dtype, root_expected.data(), i), values.expected(i));
  }
  // Another root sends other data.
  EXPECT_NE(BroadcastValues(HCOMM_INT32, 0).expected(5), BroadcastValues(HCOMM_INT32, 1).expected(5));
}

TEST(PerfValues, CompareCountsWrongElements) {
  const size_t count = 9, elem = 2;
  std::vector<unsigned char> expected(count * elem), got(count * elem);
  for (size_t i = 0; i < expected.size(); ++i) expected[i] = static_cast<unsigned char>(i * 37);
  got = expected;
  EXPECT_EQ(compare_elements(got.data(), expected.data(), count, elem).wrong, 0u);
  got[7 * elem + 1] ^= 0x10;  // one byte of element 7
  got[3 * elem] ^= 0x01;      // one byte of element 3
  const Mismatch two = compare_elements(got.data(), expected.data(), count, elem);
  EXPECT_EQ(two.wrong, 2u);
  EXPECT_EQ(two.first_index, 3u);
  write_complement(got.data(), expected.data(), got.size());
  EXPECT_EQ(compare_elements(got.data(), expected.data(), count, elem).wrong, count);
  EXPECT_EQ(compare_elements(got.data(), expected.data(), 0, elem).wrong, 0u);
}

}  // namespace
}  // namespace hcomm::perf
