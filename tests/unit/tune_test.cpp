#include <gtest/gtest.h>

#include "core/algorithm/tune.hpp"
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
  EXPECT_TRUE(rules[0].covers(HCOMM_COLL_ALLREDUCE, 65535));
  EXPECT_FALSE(rules[0].covers(HCOMM_COLL_ALLREDUCE, 65536));
  EXPECT_TRUE(rules[1].covers(HCOMM_COLL_ALLREDUCE, 65536));
  EXPECT_TRUE(rules[1].covers(HCOMM_COLL_ALLREDUCE, UINT64_MAX));
  EXPECT_FALSE(rules[1].covers(HCOMM_COLL_BROADCAST, 70000));
  EXPECT_EQ(rules[2].coll, HCOMM_COLL_BROADCAST);
  EXPECT_TRUE(rules[2].covers(HCOMM_COLL_BROADCAST, 0));
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
