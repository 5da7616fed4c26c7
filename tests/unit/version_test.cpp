// The version the library reports, the headers' macros and the project's
// version (CMake's project(), passed in as HCOMM_TEST_PROJECT_VERSION) are one.
#include <gtest/gtest.h>

#include <string>

#include "hcomm/hcomm.h"
#include "hcomm/hcomm.hpp"

namespace {

TEST(Version, LibraryEqualsHeaderMacros) {
  int version = -1;
  ASSERT_EQ(hcomm_get_version(&version), HCOMM_SUCCESS) << hcomm_get_last_error();
  EXPECT_EQ(version, HCOMM_VERSION_CODE);
  EXPECT_EQ(version, HCOMM_VERSION_MAJOR * 10000 + HCOMM_VERSION_MINOR * 100 + HCOMM_VERSION_PATCH);
  EXPECT_EQ(hcomm::version(), version);
}

TEST(Version, HeaderMacrosEqualTheProjectVersion) {
  const std::string dotted = std::to_string(HCOMM_VERSION_MAJOR) + "." + std::to_string(HCOMM_VERSION_MINOR) + "." +
                             std::to_string(HCOMM_VERSION_PATCH);
  EXPECT_EQ(dotted, HCOMM_TEST_PROJECT_VERSION);
  EXPECT_STREQ(HCOMM_VERSION_STRING, HCOMM_TEST_PROJECT_VERSION);
}

TEST(Version, OrdersVersions) {
  EXPECT_LT(HCOMM_VERSION(0, 9, 9), HCOMM_VERSION(1, 0, 0));
  EXPECT_LT(HCOMM_VERSION(1, 2, 3), HCOMM_VERSION(1, 3, 0));
}

TEST(Version, NullArgumentIsAnError) {
  EXPECT_EQ(hcomm_get_version(nullptr), HCOMM_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(hcomm_get_last_error()).find("hcomm_get_version: version is NULL"), std::string::npos)
      << hcomm_get_last_error();
}

}  // namespace
