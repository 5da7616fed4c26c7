// Tune files: parsing (good and bad, each error naming the file, the line and
// the key), the text hcomm-perf --calibrate writes, what a communicator's view
// takes from a file, and the local rates calibration measures.
#include "core/algorithm/tune_file.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "core/algorithm/calibration.hpp"
#include "core/algorithm/tuning.hpp"
#include "core/common/error.hpp"

namespace hcomm {
namespace {

using algorithm::format_tune_file;
using algorithm::parse_tune_file;
using algorithm::TuneFile;

constexpr const char* kPath = "/tmp/link.tune";

std::string config_error(const std::string& text) {
  try {
    parse_tune_file(text, kPath);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), HCOMM_ERR_CONFIG);
    return e.what();
  }
  return "(no error)";
}

const char* const kComplete = "alpha_us = 2.5\nbeta_us_per_byte = 0.0003\ngamma_us_per_byte = 5e-05\n";

TEST(TuneFile, ParsesKeysCommentsAndBlankLines) {
  const TuneFile f = parse_tune_file(
      "# measured on the test machine\n"
      "\n"
      "   gamma_us_per_byte=0.00005   # float32 sum\n"
      "ranks = 3\r\n"
      "transports = shm,tcp\n"
      "alpha_us = 2.5\n"
      "\t beta_us_per_byte =0.0003\n"
      "mapped.beta_us_per_byte = 4e-05\n",
      kPath);
  EXPECT_EQ(f.ranks, 3);
  EXPECT_EQ(f.transports, "shm,tcp");
  EXPECT_EQ(f.link.alpha_us, 2.5);
  EXPECT_EQ(f.link.beta_us_per_byte, 0.0003);
  EXPECT_EQ(f.link.gamma_us_per_byte, 0.00005);
  EXPECT_FALSE(f.mapped.alpha_us.has_value());
  EXPECT_EQ(f.mapped.beta_us_per_byte, 4e-05);
  EXPECT_FALSE(f.mapped.gamma_us_per_byte.has_value());
  const TuneFile minimal = parse_tune_file(kComplete, kPath);
  EXPECT_EQ(minimal.ranks, 0);
  EXPECT_EQ(minimal.transports, "");
  EXPECT_EQ(minimal.link.gamma_us_per_byte, 5e-05);
  EXPECT_EQ(parse_tune_file("alpha_us = 0\nbeta_us_per_byte = 0\ngamma_us_per_byte = 0", kPath).link.alpha_us, 0);
}

TEST(TuneFile, WrittenTextReadsBackExactly) {
  TuneFile f;
  f.ranks = 7;
  f.transports = "tcp";
  f.link = {.alpha_us = 12.345678901234, .beta_us_per_byte = 1.0 / 3e3, .gamma_us_per_byte = 2.5e-5};
  f.hosts = 2;
  f.mapped.alpha_us = 0.125;
  f.mapped.gamma_us_per_byte = 1e-6 / 7;
  f.intra.beta_us_per_byte = 1e-4 / 3;
  f.inter = {.alpha_us = 99.5, .beta_us_per_byte = 8e-3, .gamma_us_per_byte = 0};
  const std::string text = format_tune_file(f);
  EXPECT_EQ(text.rfind("# HComm tune file", 0), 0u) << text;
  EXPECT_NE(text.find("\nranks = 7\nhosts = 2\ntransports = tcp\nalpha_us = 12.345678901234\n"), std::string::npos)
      << text;
  EXPECT_EQ(text.find("mapped.beta_us_per_byte"), std::string::npos) << text;
  const TuneFile back = parse_tune_file(text, kPath);
  EXPECT_EQ(back.ranks, 7);
  EXPECT_EQ(back.transports, "tcp");
  EXPECT_EQ(back.link.alpha_us, f.link.alpha_us);
  EXPECT_EQ(back.link.beta_us_per_byte, f.link.beta_us_per_byte);
  EXPECT_EQ(back.link.gamma_us_per_byte, f.link.gamma_us_per_byte);
  EXPECT_EQ(back.mapped.alpha_us, f.mapped.alpha_us);
  EXPECT_FALSE(back.mapped.beta_us_per_byte.has_value());
  EXPECT_EQ(back.mapped.gamma_us_per_byte, f.mapped.gamma_us_per_byte);
  EXPECT_EQ(back.hosts, 2);
  EXPECT_FALSE(back.intra.alpha_us.has_value());
  EXPECT_EQ(back.intra.beta_us_per_byte, f.intra.beta_us_per_byte);
  EXPECT_EQ(back.inter.alpha_us, 99.5);
  EXPECT_EQ(back.inter.beta_us_per_byte, 8e-3);
  EXPECT_EQ(back.inter.gamma_us_per_byte, 0);
}

TEST(TuneFile, BadFilesNameTheFileLineAndKey) {
  const std::string file = std::string("HCOMM_TUNE_FILE ") + kPath;
  EXPECT_EQ(config_error(std::string(kComplete) + "latency = 3\n"),
            file +
                " line 4: unknown key 'latency' (the keys: ranks, hosts, transports, alpha_us, beta_us_per_byte, "
                "gamma_us_per_byte, mapped.alpha_us, mapped.beta_us_per_byte, mapped.gamma_us_per_byte, "
                "intra.alpha_us, intra.beta_us_per_byte, intra.gamma_us_per_byte, inter.alpha_us, "
                "inter.beta_us_per_byte, inter.gamma_us_per_byte, select)");
  EXPECT_EQ(config_error(std::string(kComplete) + "# again\nalpha_us = 3\n"),
            file + " line 5: key 'alpha_us' appears again (first on line 1)");
  EXPECT_EQ(config_error("ranks 3\n"), file + " line 1: 'ranks 3' is not 'key = value'");
  EXPECT_EQ(config_error("alpha_us = 1\nbeta_us_per_byte = 1\n"),
            file + ": key 'gamma_us_per_byte' is missing (hcomm-perf --calibrate writes a complete file)");
  EXPECT_EQ(config_error(""), file + ": key 'alpha_us' is missing (hcomm-perf --calibrate writes a complete file)");
  for (const char* bad : {"-1", "", "abc", "1e", "inf", "nan", "0x10", "1,5", "2 us", "+3"})
    EXPECT_EQ(config_error(std::string("\nbeta_us_per_byte = ") + bad + "\n"),
              file + " line 2: key 'beta_us_per_byte': '" + bad + "' is not a finite number >= 0");
  EXPECT_EQ(config_error("mapped.gamma_us_per_byte = -0.5"),
            file + " line 1: key 'mapped.gamma_us_per_byte': '-0.5' is not a finite number >= 0");
  for (const char* bad : {"0", "-2", "3.5", "x"}) {
    EXPECT_EQ(config_error(std::string("ranks = ") + bad),
              file + " line 1: key 'ranks': '" + bad + "' is not a whole number >= 1");
    EXPECT_EQ(config_error(std::string("hosts = ") + bad),
              file + " line 1: key 'hosts': '" + bad + "' is not a whole number >= 1");
  }
  EXPECT_EQ(config_error("inter.alpha_us = x"), file + " line 1: key 'inter.alpha_us': 'x' is not a finite number >= 0");
  EXPECT_EQ(config_error("transports ="), file + " line 1: key 'transports': '' is empty");
  // A select line holds one rule of HCOMM_TUNE's grammar.
  EXPECT_EQ(config_error(std::string(kComplete) + "select = allreduce:8K:@ring\n"),
            file +
                " line 4: key 'select': HCOMM_TUNE rule 'allreduce:8K:@ring' does not parse: a size range needs "
                "'<min>-<max>'; expected <collective>:[<min>-<max>:]@<algorithm> or profile:<name> (thresholds), "
                "rules separated by '#', e.g. allreduce:0-64K:@ring");
  EXPECT_EQ(config_error(std::string(kComplete) + "select = profile:thresholds\n"),
            file +
                " line 4: key 'select': 'profile:thresholds' is not one rule; each select line holds one, "
                "<collective>:[<min>-<max>:]@<algorithm>");
  EXPECT_EQ(config_error(std::string(kComplete) + "select =\n"),
            file +
                " line 4: key 'select': '' is not one rule; each select line holds one, "
                "<collective>:[<min>-<max>:]@<algorithm>");
}

TEST(TuneFile, UnreadableFileIsNamed) {
  for (const char* path : {"/nonexistent/link.tune", "/tmp"}) {
    try {
      algorithm::read_tune_file(path);
      ADD_FAILURE() << "read " << path;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), HCOMM_ERR_CONFIG);
      EXPECT_EQ(std::string(e.what()),
                std::string("HCOMM_TUNE_FILE ") + path + ": not a file (hcomm-perf --calibrate FILE writes one)");
    }
  }
}

hcomm_comm_view_t measured_view(uint32_t flags) {
  return hcomm_comm_view_t{.size = sizeof(hcomm_comm_view_t),
                           .rank = 1,
                           .nranks = 3,
                           .link = {.alpha_us = 30, .beta_us_per_byte = 1e-3, .gamma_us_per_byte = 5e-5},
                           .flags = flags,
                           .window_bytes = flags ? 1u << 20 : 0,
                           .mapped = {.alpha_us = 0.5, .beta_us_per_byte = 1e-4, .gamma_us_per_byte = 5e-5}};
}

TEST(TuneFile, ViewTakesTheLinkAndMappedFieldsOnlyWhereMapped) {
  TuneFile f;
  f.link = {.alpha_us = 2, .beta_us_per_byte = 3e-4, .gamma_us_per_byte = 6e-5};
  f.mapped.beta_us_per_byte = 2e-5;
  const hcomm_comm_view_t plain = algorithm::apply_tune_file(f, measured_view(0));
  EXPECT_EQ(plain.link.alpha_us, 2);
  EXPECT_EQ(plain.link.beta_us_per_byte, 3e-4);
  EXPECT_EQ(plain.link.gamma_us_per_byte, 6e-5);
  EXPECT_EQ(plain.mapped.beta_us_per_byte, 1e-4);
  EXPECT_EQ(plain.rank, 1);
  EXPECT_EQ(plain.nranks, 3);
  const hcomm_comm_view_t mapped = algorithm::apply_tune_file(f, measured_view(HCOMM_VIEW_MAPPED));
  EXPECT_EQ(mapped.mapped.alpha_us, 0.5);
  EXPECT_EQ(mapped.mapped.beta_us_per_byte, 2e-5);
  EXPECT_EQ(mapped.mapped.gamma_us_per_byte, 5e-5);
  EXPECT_EQ(mapped.flags, static_cast<uint32_t>(HCOMM_VIEW_MAPPED));
  EXPECT_EQ(mapped.window_bytes, 1u << 20);
}

// Across hosts the view takes the file's intra and inter fields that are
// there (and keeps the measured ones that are not); on one host both links
// are the file's link.
TEST(TuneFile, ViewTakesIntraAndInterAcrossHosts) {
  TuneFile f;
  f.link = {.alpha_us = 90, .beta_us_per_byte = 8e-3, .gamma_us_per_byte = 6e-5};
  f.inter = {.alpha_us = 80, .beta_us_per_byte = 7e-3};
  f.intra.alpha_us = 3;
  const int node_of[3] = {0, 0, 1};
  hcomm_comm_view_t measured = measured_view(0);
  measured.nnodes = 2;
  measured.node_of = node_of;
  measured.intra = {.alpha_us = 1, .beta_us_per_byte = 1e-4, .gamma_us_per_byte = 5e-5};
  measured.inter = {.alpha_us = 20, .beta_us_per_byte = 8e-4, .gamma_us_per_byte = 5e-5};
  const hcomm_comm_view_t across = algorithm::apply_tune_file(f, measured);
  EXPECT_EQ(across.link.alpha_us, 90);
  EXPECT_EQ(across.inter.alpha_us, 80);
  EXPECT_EQ(across.inter.beta_us_per_byte, 7e-3);
  EXPECT_EQ(across.inter.gamma_us_per_byte, 5e-5);
  EXPECT_EQ(across.intra.alpha_us, 3);
  EXPECT_EQ(across.intra.beta_us_per_byte, 1e-4);
  EXPECT_EQ(across.node_of, node_of);
  measured.nnodes = 1;
  measured.node_of = nullptr;
  const hcomm_comm_view_t one = algorithm::apply_tune_file(f, measured);
  for (const hcomm_link_model_t& l : {one.intra, one.inter}) {
    EXPECT_EQ(l.alpha_us, 90);
    EXPECT_EQ(l.beta_us_per_byte, 8e-3);
    EXPECT_EQ(l.gamma_us_per_byte, 6e-5);
  }
}

// A setting for the rest of one test, gone also when an assertion ends it.
class Setting {
 public:
  Setting(const char* name, const std::string& value) : name_(name) { setenv(name, value.c_str(), 1); }
  ~Setting() { unsetenv(name_); }

 private:
  const char* name_;
};

TEST(TuneFile, TuningReadsTheSetting) {
  const hcomm_comm_view_t measured = measured_view(0);
  EXPECT_EQ(algorithm::tuning(measured, "shm").view.link.alpha_us, 30);
  const std::string path = testing::TempDir() + "tuning_test.tune";
  {
    std::ofstream(path) << "alpha_us = 4\nbeta_us_per_byte = 2e-4\ngamma_us_per_byte = 1e-5\n";
    Setting setting("HCOMM_TUNE_FILE", path);
    const hcomm_comm_view_t tuned = algorithm::tuning(measured, "shm").view;
    EXPECT_EQ(tuned.link.alpha_us, 4);
    EXPECT_EQ(tuned.link.beta_us_per_byte, 2e-4);
    EXPECT_EQ(tuned.link.gamma_us_per_byte, 1e-5);
  }
  {
    std::ofstream(path) << "alpha_us = 4\nbeta_us_per_byte = fast\n";
    Setting setting("HCOMM_TUNE_FILE", path);
    try {
      algorithm::tuning(measured, "shm");
      ADD_FAILURE() << "took a bad file";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), HCOMM_ERR_CONFIG);
      EXPECT_EQ(std::string(e.what()),
                "HCOMM_TUNE_FILE " + path + " line 2: key 'beta_us_per_byte': 'fast' is not a finite number >= 0");
    }
  }
  std::remove(path.c_str());
  EXPECT_EQ(algorithm::tuning(measured, "shm").view.link.beta_us_per_byte, 1e-3);
}

// Measured choices: one rule per select line, for host memory, naming the
// file; written back as they were read.
TEST(TuneFile, SelectLinesAreHostRulesOfTheFile) {
  const TuneFile f = parse_tune_file(std::string(kComplete) +
                                         "select = allreduce:0-8K:@one_shot\n"
                                         "select = allreduce:8K-inf:@ring   # from 8 KiB\n"
                                         "select=broadcast:@binomial\n",
                                     kPath);
  ASSERT_EQ(f.select.size(), 3u);
  EXPECT_EQ(f.select[0].text(), "allreduce:0-8K:@one_shot");
  EXPECT_EQ(f.select[1].text(), "allreduce:8K-inf:@ring");
  EXPECT_EQ(f.select[2].text(), "broadcast:@binomial");
  for (const algorithm::TuneRule& r : f.select) {
    EXPECT_EQ(r.file, kPath);
    EXPECT_EQ(r.mem_kinds, static_cast<uint32_t>(HCOMM_MEM_HOST));
    EXPECT_FALSE(r.written());
  }
  EXPECT_TRUE(f.select[1].covers(HCOMM_COLL_ALLREDUCE, HCOMM_MEM_HOST, 8192));
  EXPECT_FALSE(f.select[1].covers(HCOMM_COLL_ALLREDUCE, HCOMM_MEM_CUDA, 8192));
  EXPECT_EQ(f.select[1].described(), std::string("rule 'allreduce:8K-inf:@ring' of HCOMM_TUNE_FILE ") + kPath);
  const std::string text = format_tune_file(f);
  EXPECT_NE(text.find("\nselect = allreduce:0-8K:@one_shot\nselect = allreduce:8K-inf:@ring\n"
                      "select = broadcast:@binomial\n"),
            std::string::npos)
      << text;
  const TuneFile back = parse_tune_file(text, kPath);
  ASSERT_EQ(back.select.size(), 3u);
  for (size_t i = 0; i < back.select.size(); ++i) EXPECT_EQ(back.select[i].text(), f.select[i].text());
  EXPECT_EQ(format_tune_file(parse_tune_file(kComplete, kPath)).find("select"), std::string::npos);
}

// A file's choices hold for communicators of its shape only; HCOMM_TUNE's
// rules come first.
TEST(TuneFile, TuningTakesSelectRulesOfTheSameShape) {
  TuneFile f = parse_tune_file(std::string(kComplete) + "select = allreduce:0-8K:@one_shot\n", kPath);
  std::string why;
  EXPECT_TRUE(algorithm::select_applies(f, 3, 1, "shm,tcp", &why));
  f.ranks = 3, f.hosts = 1, f.transports = "shm";
  EXPECT_TRUE(algorithm::select_applies(f, 3, 1, "shm", &why));
  EXPECT_FALSE(algorithm::select_applies(f, 4, 1, "shm", &why));
  EXPECT_EQ(why, "measured on 3 ranks, this communicator has 4");
  EXPECT_FALSE(algorithm::select_applies(f, 3, 2, "shm", &why));
  EXPECT_EQ(why, "measured across 1 hosts, this communicator spans 2");
  EXPECT_FALSE(algorithm::select_applies(f, 3, 1, "tcp", &why));
  EXPECT_EQ(why, "measured over transports shm, this communicator's are tcp");

  const std::string path = testing::TempDir() + "tuning_select_test.tune";
  std::ofstream(path) << format_tune_file(f);
  Setting setting("HCOMM_TUNE_FILE", path);
  Setting rule("HCOMM_TUNE", "allreduce:0-1K:@ring");
  hcomm_comm_view_t measured = measured_view(0);
  measured.nnodes = 1;
  algorithm::Tuning t = algorithm::tuning(measured, "shm");
  ASSERT_EQ(t.rules.size(), 2u);
  EXPECT_EQ(t.rules[0].text(), "allreduce:0-1K:@ring");
  EXPECT_TRUE(t.rules[0].written());
  EXPECT_EQ(t.rules[1].text(), "allreduce:0-8K:@one_shot");
  EXPECT_EQ(t.rules[1].file, path);
  EXPECT_EQ(algorithm::tuning(measured, "tcp").rules.size(), 1u);
  measured.nranks = 2;
  EXPECT_EQ(algorithm::tuning(measured, "shm").rules.size(), 1u);
  std::remove(path.c_str());
}

// Memory-bound rates of this machine: above 1 MB/s and below 10 TB/s.
TEST(Calibration, LocalRatesArePlausible) {
  const algorithm::LocalRates rates = algorithm::measure_local_rates();
  for (double us_per_byte : {rates.reduce_us_per_byte, rates.copy_us_per_byte}) {
    EXPECT_TRUE(std::isfinite(us_per_byte));
    EXPECT_LT(us_per_byte, 1.0);
    EXPECT_GT(us_per_byte, 1e-7);
  }
  const algorithm::LocalRates small = algorithm::measure_local_rates(4096 + 3, 1);  // rounded down to whole floats
  EXPECT_GT(small.reduce_us_per_byte, 0);
  EXPECT_GT(small.copy_us_per_byte, 0);
}

// The selector's reduction cost, measured at the first call and then kept:
// every communicator of the process ranks the algorithms alike.
TEST(Calibration, ReduceToCopyRatioIsMeasuredOnceAndBounded) {
  const double first = algorithm::reduce_to_copy_ratio();
  EXPECT_GE(first, 0.5);
  EXPECT_LE(first, 4.0);
  EXPECT_EQ(algorithm::reduce_to_copy_ratio(), first);
}

}  // namespace
}  // namespace hcomm
