// hcomm_setting_check and hcomm_setting_known: the C API checks a setting's
// value from the environment as communicator creation does, and tells a
// known name from one communicators ignore (what hcomm-info reports).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "hcomm/hcomm.h"

namespace {

int setting_index(const char* name) {
  for (int i = 0; i < hcomm_setting_count(); ++i) {
    hcomm_setting_desc_t d;
    if (hcomm_setting_get(i, &d) == HCOMM_SUCCESS && std::string(d.name) == name) return i;
  }
  return -1;
}

TEST(SettingCheck, UnsetAndGoodValuesPassABadOneNamesVariableValueAndRange) {
  const int timeout = setting_index("HCOMM_TIMEOUT");
  ASSERT_GE(timeout, 0);
  unsetenv("HCOMM_TIMEOUT");
  EXPECT_EQ(hcomm_setting_check(timeout), HCOMM_SUCCESS) << hcomm_get_last_error();
  setenv("HCOMM_TIMEOUT", "5", 1);
  EXPECT_EQ(hcomm_setting_check(timeout), HCOMM_SUCCESS) << hcomm_get_last_error();
  setenv("HCOMM_TIMEOUT", "soon", 1);
  EXPECT_EQ(hcomm_setting_check(timeout), HCOMM_ERR_CONFIG);
  EXPECT_EQ(std::string(hcomm_get_last_error()),
            "HCOMM_TIMEOUT='soon' does not parse: expected a number from 0.001 "
            "to 1000000");
  setenv("HCOMM_TIMEOUT", "0", 1);
  EXPECT_EQ(hcomm_setting_check(timeout), HCOMM_ERR_CONFIG);
  EXPECT_NE(std::string(hcomm_get_last_error()).find("HCOMM_TIMEOUT='0' is out of range"), std::string::npos)
      << hcomm_get_last_error();
  unsetenv("HCOMM_TIMEOUT");
}

TEST(SettingCheck, IndexOutOfRangeIsAnError) {
  EXPECT_EQ(hcomm_setting_check(-1), HCOMM_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hcomm_setting_check(hcomm_setting_count()), HCOMM_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(hcomm_get_last_error()).find("hcomm_setting_check: index"), std::string::npos)
      << hcomm_get_last_error();
}

TEST(SettingKnown, DeclaredNamesAreKnownAMisspellingGetsTheNearestName) {
  const char* nearest = "unchanged";
  EXPECT_EQ(hcomm_setting_known("HCOMM_TIMEOUT", &nearest), 1);
  EXPECT_EQ(nearest, nullptr);
  EXPECT_EQ(hcomm_setting_known("HCOMM_TCP_NSOCKS", nullptr), 1);  // a plugin's
  ASSERT_EQ(hcomm_setting_known("HCOMM_TIMOUT", &nearest), 0);
  ASSERT_NE(nearest, nullptr);
  EXPECT_STREQ(nearest, "HCOMM_TIMEOUT");
  EXPECT_EQ(hcomm_setting_known("HCOMM_FROBNICATE_EVERYTHING", &nearest), 0);
  EXPECT_EQ(nearest, nullptr);
  EXPECT_EQ(hcomm_setting_known(nullptr, &nearest), -1);
  EXPECT_NE(std::string(hcomm_get_last_error()).find("hcomm_setting_known: name is NULL"), std::string::npos)
      << hcomm_get_last_error();
}

}  // namespace
