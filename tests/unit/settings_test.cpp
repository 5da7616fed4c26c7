#include <gtest/gtest.h>
#include <stdlib.h>

#include "core/common/error.hpp"
#include "core/common/log.hpp"
#include "core/common/settings.hpp"

namespace hcomm::settings {
namespace {

TEST(Settings, ParsesSizesWithSuffixes) {
  uint64_t v = 0;
  EXPECT_TRUE(parse_size("0", &v));
  EXPECT_EQ(v, 0u);
  EXPECT_TRUE(parse_size("64", &v));
  EXPECT_EQ(v, 64u);
  EXPECT_TRUE(parse_size("4K", &v));
  EXPECT_EQ(v, 4096u);
  EXPECT_TRUE(parse_size("1m", &v));
  EXPECT_EQ(v, 1u << 20);
  EXPECT_TRUE(parse_size("2G", &v));
  EXPECT_EQ(v, 2ull << 30);
  EXPECT_TRUE(parse_size("8KB", &v));
  EXPECT_EQ(v, 8192u);
  for (const char* bad : {"", "-1", "+3", "4X", "K", "1.5M", "4K4", "99999999999999999999", "17179869184G"})
    EXPECT_FALSE(parse_size(bad, &v)) << bad;
}

TEST(Settings, ParsesIntsBoolsDoubles) {
  int64_t i = 0;
  EXPECT_TRUE(parse_int("-42", &i));
  EXPECT_EQ(i, -42);
  EXPECT_FALSE(parse_int("4x", &i));
  EXPECT_FALSE(parse_int("", &i));
  bool b = false;
  for (const char* t : {"1", "true", "YES", "on"}) EXPECT_TRUE(parse_bool(t, &b) && b) << t;
  for (const char* f : {"0", "false", "No", "off"}) EXPECT_TRUE(parse_bool(f, &b) && !b) << f;
  EXPECT_FALSE(parse_bool("maybe", &b));
  double d = 0;
  EXPECT_TRUE(parse_double("2.5", &d));
  EXPECT_EQ(d, 2.5);
  EXPECT_FALSE(parse_double("2.5s", &d));
  EXPECT_FALSE(parse_double("inf", &d));
}

TEST(Settings, EveryCoreSettingHasTypeDefaultAndDoc) {
  for (const Decl& d : all()) {
    EXPECT_EQ(d.name.rfind("HCOMM_", 0), 0u) << d.name;
    EXPECT_FALSE(d.doc.empty()) << d.name;
  }
}

TEST(Settings, ReadsEnvironmentElseDefault) {
  unsetenv("HCOMM_CHUNK_BYTES");
  EXPECT_EQ(get_size("HCOMM_CHUNK_BYTES"), 512u * 1024);
  setenv("HCOMM_CHUNK_BYTES", "64K", 1);
  EXPECT_EQ(get_size("HCOMM_CHUNK_BYTES"), 64u * 1024);
  unsetenv("HCOMM_CHUNK_BYTES");
}

TEST(Settings, ValueThatDoesNotParseNamesVariableAndAcceptedValues) {
  setenv("HCOMM_TIMEOUT", "soon", 1);
  try {
    validate();
    FAIL() << "validate accepted HCOMM_TIMEOUT=soon";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), HCOMM_ERR_CONFIG);
    EXPECT_NE(std::string(e.what()).find("HCOMM_TIMEOUT='soon'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("a number"), std::string::npos) << e.what();
  }
  unsetenv("HCOMM_TIMEOUT");
  setenv("HCOMM_DEBUG", "LOUD", 1);
  EXPECT_THROW(validate(), Error);
  unsetenv("HCOMM_DEBUG");
  setenv("HCOMM_DEBUG_SUBSYS", "NET,NOPE", 1);
  EXPECT_THROW(validate(), Error);
  unsetenv("HCOMM_DEBUG_SUBSYS");
}

TEST(Settings, UnknownNameOnlyWarns) {
  setenv("HCOMM_TIMEOUTT", "3", 1);
  EXPECT_NO_THROW(validate());
  unsetenv("HCOMM_TIMEOUTT");
}

TEST(Settings, UndeclaredReadIsAnInternalError) {
  try {
    raw("HCOMM_NEVER_DECLARED");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), HCOMM_ERR_INTERNAL);
  }
}

TEST(Logging, SubsystemListsWithNegation) {
  EXPECT_EQ(log::parse_subsys_list(""), static_cast<unsigned>(log::ALL));
  EXPECT_EQ(log::parse_subsys_list("NET,ALGO"), static_cast<unsigned>(log::NET | log::ALGO));
  EXPECT_EQ(log::parse_subsys_list("^EXEC"), static_cast<unsigned>(log::ALL & ~log::EXEC));
  EXPECT_EQ(log::parse_subsys_list("ALL"), static_cast<unsigned>(log::ALL));
}

}  // namespace
}  // namespace hcomm::settings
