#include <gtest/gtest.h>
#include <stdlib.h>

#include "core/comm/config.hpp"
#include "core/common/error.hpp"
#include "core/common/log.hpp"

namespace hcomm::comm {
namespace {

// Unsets the communicator settings for the test and restores nothing: each
// unit test runs in its own process.
class ConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* v : {"HCOMM_TRANSPORTS", "HCOMM_TIMEOUT", "HCOMM_CHUNK_BYTES"}) unsetenv(v);
  }
};

TEST_F(ConfigTest, NullAndTheInitializerTakeTheDefaults) {
  const hcomm_config_t init = HCOMM_CONFIG_INITIALIZER;
  for (const hcomm_config_t* c : {static_cast<const hcomm_config_t*>(nullptr), &init}) {
    const Config r = Config::resolve(c);
    EXPECT_EQ(r.transports, "");
    EXPECT_EQ(r.timeout_s, 30.0);
    EXPECT_EQ(r.chunk_bytes, 512u * 1024);
  }
}

TEST_F(ConfigTest, FieldsThatAreSetWinOverTheDefaults) {
  hcomm_config_t c = HCOMM_CONFIG_INITIALIZER;
  c.transports = "tcp";
  c.timeout_s = 7.5;
  c.chunk_bytes = 65537;
  const Config r = Config::resolve(&c);
  EXPECT_EQ(r.transports, "tcp");
  EXPECT_EQ(r.timeout_s, 7.5);
  EXPECT_EQ(r.chunk_bytes, 65537u);
}

TEST_F(ConfigTest, EnvironmentVariablesThatAreSetWinOverFieldsWithALogLine) {
  setenv("HCOMM_DEBUG", "INFO", 1);
  setenv("HCOMM_TRANSPORTS", "^shm", 1);
  setenv("HCOMM_CHUNK_BYTES", "3K", 1);
  hcomm_config_t c = HCOMM_CONFIG_INITIALIZER;
  c.transports = "shm,tcp";
  c.timeout_s = 9;
  c.chunk_bytes = 2048;
  ::testing::internal::CaptureStderr();
  const Config r = Config::resolve(&c);
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(r.transports, "^shm");
  EXPECT_EQ(r.timeout_s, 9.0);  // HCOMM_TIMEOUT is unset: the field stands
  EXPECT_EQ(r.chunk_bytes, 3072u);
  if (!log::enabled(HCOMM_LOG_INFO, log::INIT)) GTEST_SKIP() << "logging was set up before HCOMM_DEBUG=INFO";
  EXPECT_NE(log.find("HCOMM_TRANSPORTS=^shm overrides transports = 'shm,tcp' of the communicator's hcomm_config_t"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("HCOMM_CHUNK_BYTES=3K overrides chunk_bytes = 2048 of the communicator's hcomm_config_t"),
            std::string::npos)
      << log;
  EXPECT_EQ(log.find("timeout_s"), std::string::npos) << log;
}

TEST_F(ConfigTest, EnvironmentAloneAppliesWhenTheFieldIsUnset) {
  setenv("HCOMM_TIMEOUT", "2.5", 1);
  EXPECT_EQ(Config::resolve(nullptr).timeout_s, 2.5);
  setenv("HCOMM_TIMEOUT", "soon", 1);
  try {
    Config::resolve(nullptr);
    FAIL() << "a bad HCOMM_TIMEOUT was taken";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), HCOMM_ERR_CONFIG);
    EXPECT_NE(std::string(e.what()).find("HCOMM_TIMEOUT='soon' does not parse"), std::string::npos) << e.what();
  }
}

TEST_F(ConfigTest, ABadStructIsRefusedWithItsReason) {
  auto error = [](const hcomm_config_t& c) {
    try {
      Config::resolve(&c);
    } catch (const Error& e) {
      return std::to_string(e.code()) + " " + e.what();
    }
    return std::string("accepted");
  };
  hcomm_config_t c = HCOMM_CONFIG_INITIALIZER;
  c.size = 8;
  EXPECT_NE(error(c).find("hcomm_config_t: size is 8"), std::string::npos) << error(c);
  c = HCOMM_CONFIG_INITIALIZER;
  c.version = 0;
  EXPECT_NE(error(c).find("hcomm_config_t: version is 0"), std::string::npos) << error(c);
  c = HCOMM_CONFIG_INITIALIZER;
  c.timeout_s = 0;
  EXPECT_NE(error(c).find("hcomm_config_t: timeout_s is 0"), std::string::npos) << error(c);
  c = HCOMM_CONFIG_INITIALIZER;
  c.transports = "shm,^tcp";
  EXPECT_NE(error(c).find("does not parse"), std::string::npos) << error(c);
  EXPECT_EQ(error(c).rfind(std::to_string(HCOMM_ERR_CONFIG) + " ", 0), 0u) << error(c);
}

TEST_F(ConfigTest, FieldsGoThroughTheChecksOfTheirVariables) {
  auto error = [](const hcomm_config_t& c) {
    try {
      Config::resolve(&c);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  hcomm_config_t c = HCOMM_CONFIG_INITIALIZER;
  c.chunk_bytes = 1;
  EXPECT_EQ(error(c),
            "hcomm_config_t.chunk_bytes='1' is out of range: expected a byte count from 1K to 1G, with an "
            "optional K, M or G suffix");
  c = HCOMM_CONFIG_INITIALIZER;
  c.timeout_s = 1e10;
  EXPECT_EQ(error(c),
            "hcomm_config_t.timeout_s='10000000000' is out of range: expected a number from 0.001 to 1000000");
  c = HCOMM_CONFIG_INITIALIZER;
  c.transports = "^nonsense";
  EXPECT_NE(error(c).find("hcomm_config_t.transports='^nonsense' names transport 'nonsense', which was not found: "
                          "the transports found are "),
            std::string::npos)
      << error(c);
  EXPECT_NE(error(c).find("tcp"), std::string::npos) << error(c);
}

TEST_F(ConfigTest, TransportsNamesMustExist) {
  setenv("HCOMM_TRANSPORTS", "^nonsense", 1);
  try {
    Config::resolve(nullptr);
    FAIL() << "HCOMM_TRANSPORTS=^nonsense was taken";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), HCOMM_ERR_CONFIG);
    EXPECT_NE(std::string(e.what()).find("HCOMM_TRANSPORTS='^nonsense' names transport 'nonsense', which was not "
                                         "found: the transports found are "),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace hcomm::comm
