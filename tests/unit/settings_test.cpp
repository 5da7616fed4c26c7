#include "core/common/settings.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <optional>
#include <string>

#include "core/common/error.hpp"
#include "core/common/log.hpp"

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

TEST(Settings, UnknownNameOnlyWarnsAndSuggestsTheNearest) {
  setenv("HCOMM_TIMEOUTT", "3", 1);
  setenv("HCOMM_CHUNK_SIZE", "3", 1);
  setenv("HCOMM_ZZZQQQXXX", "3", 1);
  ::testing::internal::CaptureStderr();
  EXPECT_NO_THROW(validate());
  const std::string log = ::testing::internal::GetCapturedStderr();
  unsetenv("HCOMM_TIMEOUTT");
  unsetenv("HCOMM_CHUNK_SIZE");
  unsetenv("HCOMM_ZZZQQQXXX");
  if (!log::enabled(HCOMM_LOG_WARN, log::INIT)) GTEST_SKIP() << "warnings are off";
  EXPECT_NE(log.find("unknown setting HCOMM_TIMEOUTT (ignored): did you mean HCOMM_TIMEOUT?"), std::string::npos)
      << log;
  EXPECT_NE(log.find("unknown setting HCOMM_CHUNK_SIZE (ignored): did you mean HCOMM_CHUNK_BYTES?"), std::string::npos)
      << log;
  EXPECT_NE(log.find("unknown setting HCOMM_ZZZQQQXXX (ignored); hcomm-info"), std::string::npos) << log;
}

// validate()'s error for NAME=value, or "" if it accepts it.
std::string validate_error(const char* name, const char* value) {
  setenv(name, value, 1);
  std::string error;
  try {
    validate();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), HCOMM_ERR_CONFIG) << e.what();
    error = e.what();
  }
  unsetenv(name);
  return error;
}

TEST(Settings, ValuesOutsideTheirRangeNameTheSettingTheValueAndTheRange) {
  EXPECT_EQ(validate_error("HCOMM_CHUNK_BYTES", "0"),
            "HCOMM_CHUNK_BYTES='0' is out of range: expected a byte count from 1K to 1G, with an optional K, M or G "
            "suffix");
  EXPECT_EQ(validate_error("HCOMM_TIMEOUT", "1e10"),
            "HCOMM_TIMEOUT='1e10' is out of range: expected a number from 0.001 to 1000000");
  EXPECT_EQ(validate_error("HCOMM_TIMEOUT", "0"),
            "HCOMM_TIMEOUT='0' is out of range: expected a number from 0.001 to 1000000");
  EXPECT_EQ(validate_error("HCOMM_RANK", "-1"), "HCOMM_RANK='-1' is out of range: expected an integer of at least 0");
  EXPECT_EQ(validate_error("HCOMM_CACHES_APART", "maybe"),
            "HCOMM_CACHES_APART='maybe' is not accepted: expected one of auto, on, off");
  EXPECT_EQ(validate_error("HCOMM_CHUNK_BYTES", "64K"), "");
  EXPECT_EQ(validate_error("HCOMM_DEBUG", "info"), "");
}

TEST(Settings, LeadingBlanksAndSignsDoNotParse) {
  uint64_t u = 0;
  int64_t i = 0;
  double d = 0;
  EXPECT_FALSE(parse_size(" -1", &u));  // strtoull would read 2^64-1
  EXPECT_FALSE(parse_size(" 4K", &u));
  EXPECT_FALSE(parse_int(" 5", &i));
  EXPECT_FALSE(parse_int("+5", &i));
  EXPECT_FALSE(parse_double(" 2", &d));
  EXPECT_EQ(validate_error("HCOMM_WINDOW_BYTES", " -1"),
            "HCOMM_WINDOW_BYTES=' -1' does not parse: expected a byte count from 0 to 1G, with an optional K, M or G "
            "suffix");
}

TEST(Settings, AnUnwritableDebugFileIsAnError) {
  const std::string error = validate_error("HCOMM_DEBUG_FILE", "/nonexistent-hcomm-dir/log.%p");
  EXPECT_NE(error.find("HCOMM_DEBUG_FILE='/nonexistent-hcomm-dir/log.%p' does not parse: expected a file this "
                       "process may write"),
            std::string::npos)
      << error;
  EXPECT_EQ(validate_error("HCOMM_DEBUG_FILE", "/tmp/hcomm-settings-test.%h.%p.log"), "");
}

TEST(Settings, APluginsDeclaredRangeIsChecked) {
  declare({.name = "HCOMM_RANGETEST_N",
           .type = HCOMM_SETTING_INT,
           .default_value = "2",
           .doc = "a test setting",
           .owner = "rangetest",
           .min = "1",
           .max = "16"});
  EXPECT_EQ(validate_error("HCOMM_RANGETEST_N", "99"),
            "HCOMM_RANGETEST_N='99' is out of range: expected an integer from 1 to 16");
  try {
    declare({.name = "HCOMM_RANGETEST_BAD",
             .type = HCOMM_SETTING_SIZE,
             .default_value = "1K",
             .doc = "bad bounds",
             .owner = "rangetest",
             .min = "lots"});
    FAIL() << "a min that is no size was declared";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), HCOMM_ERR_PLUGIN);
    EXPECT_NE(std::string(e.what()).find("min 'lots' is not a byte count"), std::string::npos) << e.what();
  }
}

TEST(Settings, DormantPluginsSettingsAreNeitherCheckedNorUnknown) {
  declare_dormant("sleepy");
  EXPECT_EQ(validate_error("HCOMM_SLEEPY_ANYTHING", "x"), "");
  declare({.name = "HCOMM_SLEEPY_N",
           .type = HCOMM_SETTING_INT,
           .default_value = "1",
           .doc = "now loaded",
           .owner = "sleepy",
           .min = "1",
           .max = "2"});
  setenv("HCOMM_SLEEPY_N", "3", 1);
  EXPECT_THROW(validate("sleepy"), Error);
  unsetenv("HCOMM_SLEEPY_N");
}

TEST(Settings, UndeclaredReadIsAnInternalError) {
  try {
    raw("HCOMM_NEVER_DECLARED");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), HCOMM_ERR_INTERNAL);
  }
}

// The mask of a list, or nullopt where it does not parse.
std::optional<unsigned> subsys_mask(const std::string& text) {
  unsigned mask = 0;
  return log::parse_subsys_list(text, &mask) ? std::optional<unsigned>(mask) : std::nullopt;
}

TEST(Logging, SubsystemListsWithNegation) {
  EXPECT_EQ(subsys_mask(""), static_cast<unsigned>(log::ALL));
  EXPECT_EQ(subsys_mask("NET,ALGO"), static_cast<unsigned>(log::NET | log::ALGO));
  EXPECT_EQ(subsys_mask("^EXEC"), static_cast<unsigned>(log::ALL & ~log::EXEC));
  EXPECT_EQ(subsys_mask("ALL"), static_cast<unsigned>(log::ALL));
  EXPECT_EQ(subsys_mask("NET,NOPE"), std::nullopt);
  EXPECT_EQ(subsys_mask("NET,"), std::nullopt);
}

}  // namespace
}  // namespace hcomm::settings
