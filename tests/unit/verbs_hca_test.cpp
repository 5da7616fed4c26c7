// HCOMM_IB_HCA parsing and matching (NCCL's syntax), and the GID choice.
#if HCOMM_HAVE_VERBS
#include <gtest/gtest.h>

#include <string>

#include "hcomm/plugin/util.hpp"
#include "plugins/transport/verbs/gid.hpp"
#include "plugins/transport/verbs/hca_filter.hpp"

namespace hcomm::verbs {
namespace {

TEST(VerbsHca, EmptyAcceptsEverything) {
  HcaFilter f = HcaFilter::parse("");
  EXPECT_TRUE(f.entries().empty());
  EXPECT_TRUE(f.accepts("mlx5_0", 1));
  EXPECT_TRUE(f.accepts("rxe0", 3));
}

TEST(VerbsHca, IncludeListWithPorts) {
  HcaFilter f = HcaFilter::parse("mlx5_0:1,mlx5_1");
  ASSERT_EQ(f.entries().size(), 2u);
  EXPECT_EQ(f.entries()[0].name, "mlx5_0");
  EXPECT_EQ(f.entries()[0].port, 1);
  EXPECT_EQ(f.entries()[1].name, "mlx5_1");
  EXPECT_EQ(f.entries()[1].port, 0);
  EXPECT_FALSE(f.exclude());
  EXPECT_TRUE(f.accepts("mlx5_0", 1));
  EXPECT_FALSE(f.accepts("mlx5_0", 2));
  EXPECT_TRUE(f.accepts("mlx5_1", 1));
  EXPECT_TRUE(f.accepts("mlx5_1", 2));
  EXPECT_FALSE(f.accepts("mlx5_2", 1));
  EXPECT_TRUE(f.accepts("mlx5_10", 1));  // names are prefixes, as in NCCL
}

TEST(VerbsHca, ExactNames) {
  HcaFilter f = HcaFilter::parse("=mlx5_1");
  EXPECT_TRUE(f.exact());
  EXPECT_TRUE(f.accepts("mlx5_1", 1));
  EXPECT_FALSE(f.accepts("mlx5_10", 1));
}

TEST(VerbsHca, Exclusion) {
  HcaFilter f = HcaFilter::parse("^mlx5_2");
  EXPECT_TRUE(f.exclude());
  EXPECT_TRUE(f.accepts("mlx5_0", 1));
  EXPECT_FALSE(f.accepts("mlx5_2", 1));
  EXPECT_FALSE(f.accepts("mlx5_2", 2));
  HcaFilter ports = HcaFilter::parse("^=mlx5_0:2,rxe0");
  EXPECT_TRUE(ports.exact());
  EXPECT_TRUE(ports.accepts("mlx5_0", 1));
  EXPECT_FALSE(ports.accepts("mlx5_0", 2));
  EXPECT_FALSE(ports.accepts("rxe0", 1));
  EXPECT_TRUE(ports.accepts("rxe01", 1));
}

TEST(VerbsHca, BadTextNamesTheSettingAndTheFault) {
  for (const char* text : {"^", "=", "^=", "mlx5_0,", ",mlx5_0", "mlx5_0:", "mlx5_0:x", "mlx5_0:0", "mlx5_0:256",
                           "mlx5_0:1:2", "a,^b", "mlx5 0"}) {
    try {
      HcaFilter::parse(text);
      ADD_FAILURE() << "'" << text << "' parsed";
    } catch (const plugin::Error& e) {
      EXPECT_EQ(e.code(), HCOMM_ERR_CONFIG);
      EXPECT_NE(std::string(e.what()).find(std::string("HCOMM_IB_HCA='") + text + "'"), std::string::npos) << e.what();
    }
  }
}

Gid ipv4_gid(uint8_t a, uint8_t b, uint8_t c, uint8_t d) {
  return Gid{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, a, b, c, d};
}

Gid link_local_gid() { return Gid{0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x02, 0x11, 0x22, 0xff, 0xfe, 0x33, 0x44, 0x55}; }

TEST(VerbsGid, PrefersRoceV2Ipv4Mapped) {
  std::vector<GidEntry> table = {
      {.index = 0, .type = GidType::kRoceV1, .gid = link_local_gid()},
      {.index = 1, .type = GidType::kRoceV2, .gid = link_local_gid()},
      {.index = 2, .type = GidType::kRoceV1, .gid = ipv4_gid(10, 0, 0, 1)},
      {.index = 3, .type = GidType::kRoceV2, .gid = ipv4_gid(10, 0, 0, 1)},
      {.index = 4, .type = GidType::kRoceV2, .gid = ipv4_gid(10, 0, 0, 2)},
  };
  EXPECT_TRUE(ipv4_mapped(table[3].gid));
  EXPECT_FALSE(ipv4_mapped(table[1].gid));
  EXPECT_EQ(choose_gid(table, -1)->index, 3);
  table.erase(table.begin() + 3, table.end());
  EXPECT_EQ(choose_gid(table, -1)->index, 1);  // RoCE v2 of an IPv6 address
  table.erase(table.begin() + 1);
  EXPECT_EQ(choose_gid(table, -1)->index, 2);  // RoCE v1, IPv4-mapped
  table.pop_back();
  EXPECT_EQ(choose_gid(table, -1)->index, 0);
  EXPECT_FALSE(choose_gid({}, -1).has_value());
  EXPECT_FALSE(choose_gid({{.index = 0, .type = GidType::kRoceV2, .gid = Gid{}}}, -1).has_value());
}

TEST(VerbsGid, ExplicitIndexMustExist) {
  std::vector<GidEntry> table = {{.index = 0, .type = GidType::kRoceV1, .gid = link_local_gid()},
                                 {.index = 3, .type = GidType::kRoceV2, .gid = ipv4_gid(192, 168, 1, 9)}};
  EXPECT_EQ(choose_gid(table, 0)->index, 0);  // the setting wins over the preference
  EXPECT_EQ(choose_gid(table, 3)->gid[15], 9);
  EXPECT_FALSE(choose_gid(table, 1).has_value());
}

}  // namespace
}  // namespace hcomm::verbs
#endif
