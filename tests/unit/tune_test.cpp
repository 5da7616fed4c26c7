#include "core/algorithm/tune.hpp"

#include <gtest/gtest.h>

#include "core/common/error.hpp"
#include "core/transport/transport.hpp"

namespace hcomm {
namespace {

using algorithm::parse_tune;

TEST(Tune, ParsesRangesAndOpenRules) {
  auto rules = parse_tune("allreduce:0-64K:@recursive_doubling#allreduce:64K-inf:@ring#broadcast:@binomial");
  ASSERT_EQ(rules.size(), 3u);
  EXPECT_EQ(rules[0].coll, HCOMM_COLL_ALLREDUCE);
  EXPECT_EQ(rules[0].lo, 0u);
  EXPECT_EQ(rules[0].hi, 65536u);
  EXPECT_EQ(rules[0].algorithm, "recursive_doubling");
  EXPECT_TRUE(rules[0].covers(HCOMM_COLL_ALLREDUCE, HCOMM_MEM_HOST, 65535));
  EXPECT_FALSE(rules[0].covers(HCOMM_COLL_ALLREDUCE, HCOMM_MEM_HOST, 65536));
  EXPECT_TRUE(rules[1].covers(HCOMM_COLL_ALLREDUCE, HCOMM_MEM_HOST, 65536));
  EXPECT_TRUE(rules[1].covers(HCOMM_COLL_ALLREDUCE, HCOMM_MEM_HOST, UINT64_MAX));
  EXPECT_FALSE(rules[1].covers(HCOMM_COLL_BROADCAST, HCOMM_MEM_HOST, 70000));
  EXPECT_EQ(rules[2].coll, HCOMM_COLL_BROADCAST);
  EXPECT_TRUE(rules[2].covers(HCOMM_COLL_BROADCAST, HCOMM_MEM_HOST, 0));
  EXPECT_TRUE(parse_tune("").empty());
}

TEST(Tune, RejectsMalformedRulesNamingThem) {
  for (const char* bad : {"allreduce", "allreduce:@", "nosuch:@ring", "allreduce:64K:@ring", "allreduce:8-4:@ring",
                          "allreduce:x-4:@ring", "allreduce:@ring##broadcast:@binomial", "allreduce:0-inf"}) {
    try {
      parse_tune(bad);
      ADD_FAILURE() << "accepted " << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), HCOMM_ERR_CONFIG);
      EXPECT_NE(std::string(e.what()).find("HCOMM_TUNE"), std::string::npos) << e.what();
    }
  }
}

TEST(Tune, ProfilesExpandInPlace) {
  auto rules = parse_tune("profile:thresholds");
  ASSERT_EQ(rules.size(), 3u);
  const std::vector<std::string> texts = {rules[0].text(), rules[1].text(), rules[2].text()};
  EXPECT_EQ(texts, (std::vector<std::string>{"allreduce:0-128K:@ring", "allreduce:128K-8M:@double_binary_tree",
                                             "allreduce:8M-inf:@halving_doubling"}));
  for (const auto& r : rules) EXPECT_EQ(r.profile, "thresholds");
  EXPECT_TRUE(rules[1].covers(HCOMM_COLL_ALLREDUCE, HCOMM_MEM_HOST, 128 << 10));
  EXPECT_FALSE(rules[1].covers(HCOMM_COLL_ALLREDUCE, HCOMM_MEM_HOST, 8 << 20));
  // Rules around a profile keep their places; only the profile's are marked.
  rules = parse_tune("allreduce:0-4K:@recursive_doubling#profile:thresholds#broadcast:@binomial");
  ASSERT_EQ(rules.size(), 5u);
  EXPECT_EQ(rules[0].algorithm, "recursive_doubling");
  EXPECT_EQ(rules[0].profile, "");
  EXPECT_EQ(rules[1].algorithm, "ring");
  EXPECT_EQ(rules[3].algorithm, "halving_doubling");
  EXPECT_EQ(rules[4].coll, HCOMM_COLL_BROADCAST);
  EXPECT_EQ(rules[4].profile, "");
  EXPECT_EQ(algorithm::profile_names(), "thresholds");
}

TEST(Tune, UnknownProfileNamesTheKnownOnes) {
  for (const char* bad : {"profile:nosuch", "profile:", "allreduce:@ring#profile:Thresholds"}) {
    try {
      parse_tune(bad);
      ADD_FAILURE() << "accepted " << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), HCOMM_ERR_CONFIG);
      EXPECT_NE(std::string(e.what()).find("unknown profile"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("(thresholds)"), std::string::npos) << e.what();
    }
  }
}

TEST(Tune, RulesAndSizesReadBackAsWritten) {
  EXPECT_EQ(algorithm::bytes_text(0), "0");
  EXPECT_EQ(algorithm::bytes_text(1), "1");
  EXPECT_EQ(algorithm::bytes_text(1000), "1000");
  EXPECT_EQ(algorithm::bytes_text(1024), "1K");
  EXPECT_EQ(algorithm::bytes_text(1536 << 10), "1536K");
  EXPECT_EQ(algorithm::bytes_text(8 << 20), "8M");
  EXPECT_EQ(algorithm::bytes_text(uint64_t{3} << 30), "3G");
  EXPECT_EQ(algorithm::bytes_text(UINT64_MAX), "inf");
  for (const char* text : {"allreduce:0-64K:@recursive_doubling", "broadcast:@binomial", "alltoallv:7-5000:@bruck",
                           "reduce_scatter_v:1M-inf:@ring", "barrier:0-1:@dissemination",
                           "scan:0-64K:@recursive_doubling", "exscan:@ring"}) {
    auto rules = parse_tune(text);
    ASSERT_EQ(rules.size(), 1u);
    EXPECT_EQ(rules[0].text(), text);
  }
}

TEST(TransportFilter, IncludeExcludeAndMixing) {
  auto f = transport::parse_filter("shm,tcp");
  EXPECT_FALSE(f.exclude);
  EXPECT_EQ(f.names, (std::vector<std::string>{"shm", "tcp"}));
  f = transport::parse_filter("^shm");
  EXPECT_TRUE(f.exclude);
  EXPECT_EQ(f.names, (std::vector<std::string>{"shm"}));
  EXPECT_TRUE(transport::parse_filter("").names.empty());
  for (const char* bad : {"shm,^tcp", "^", "shm,,tcp", "^shm,^tcp", ","}) {
    try {
      transport::parse_filter(bad);
      ADD_FAILURE() << "accepted " << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), HCOMM_ERR_CONFIG) << bad;
    }
  }
}

}  // namespace
}  // namespace hcomm
