// The loader's distinct errors, with plugins broken on purpose (fixtures/).
#include "core/plugin/loader.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/common/error.hpp"
#include "core/transport/transport.hpp"

namespace hcomm::plugin {
namespace {

std::string fixture(const char* file) { return std::string(HCOMM_TEST_FIXTURE_DIR) + "/" + file; }

// Loads `path` and returns the error text (empty if it loaded).
std::string load_error(const std::string& path) {
  try {
    load(path);
    return "";
  } catch (const hcomm::Error& e) {
    EXPECT_EQ(e.code(), HCOMM_ERR_PLUGIN);
    return e.what();
  }
}

void expect_contains(const std::string& text, const std::string& part) {
  EXPECT_NE(text.find(part), std::string::npos) << "'" << text << "' lacks '" << part << "'";
}

TEST(Loader, FileNotFound) {
  std::string e = load_error("/nonexistent/libhcomm_transport_ghost.so");
  expect_contains(e, "file not found");
  expect_contains(e, "/nonexistent/libhcomm_transport_ghost.so");
}

TEST(Loader, CorruptFileGivesTheLoadersReason) {
  auto dir = std::filesystem::temp_directory_path() / ("hcomm-loader-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::string path = (dir / "libhcomm_transport_corrupt.so").string();
  std::ofstream(path) << std::string(4096, 'x');  // long enough to be read as a header
  std::string e = load_error(path);
  expect_contains(e, "load failed");
  expect_contains(e, "ELF");  // the dynamic loader's own words
  std::filesystem::remove_all(dir);
}

TEST(Loader, SymbolMissing) {
  std::string e = load_error(fixture("libhcomm_transport_nosymbol.so"));
  expect_contains(e, "symbol hcomm_plugin_v1 missing");
}

TEST(Loader, WrongAbiNamesBothVersions) {
  std::string e = load_error(fixture("libhcomm_transport_wrongabi.so"));
  expect_contains(e, "ABI version 99.0 unsupported");
  expect_contains(e, "ABI " + std::to_string(HCOMM_PLUGIN_ABI_MAJOR) + ".x");
}

TEST(Loader, NameMismatch) {
  std::string e = load_error(fixture("libhcomm_transport_misnamed.so"));
  expect_contains(e, "name mismatch");
  expect_contains(e, "'misnamed'");
  expect_contains(e, "'other'");
}

TEST(Loader, FileNameMustFollowTheConvention) {
  expect_contains(load_error(fixture("libhcomm_transport_wrongabi.so") + ".missing"), "file not found");
}

TEST(Loader, DiscoversTheBuiltPlugins) {
  bool tcp = false, shm = false, basic = false;
  for (const PluginInfo& p : load_all()) {
    EXPECT_TRUE(p.loaded()) << p.path << ": " << p.error;
    tcp |= p.expected_name == "tcp" && p.loaded();
    shm |= p.expected_name == "shm" && p.loaded();
    basic |= p.expected_name == "ring" && p.loaded();
  }
  EXPECT_TRUE(tcp && shm && basic);
}

// Whether this process has mapped a file whose path contains `part`.
bool mapped(const std::string& part) {
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);)
    if (line.find(part) != std::string::npos) return true;
  return false;
}

TEST(Loader, OnlyTheTransportsAdmittedAreLoaded) {
  setenv("HCOMM_TRANSPORTS", "tcp", 1);
  const transport::Allowed allowed = transport::allowed("tcp");
  ASSERT_EQ(allowed.transports.size(), 1u);
  EXPECT_EQ(allowed.transports[0]->name(), "tcp");
  EXPECT_TRUE(mapped("libhcomm_transport_tcp.so"));
  for (const char* other :
       {"libhcomm_transport_shm.so", "libhcomm_transport_ucx.so", "libhcomm_transport_ofi.so", "libucp", "libfabric"})
    EXPECT_FALSE(mapped(other)) << other << " was loaded although HCOMM_TRANSPORTS=tcp";
  bool listed = false;
  for (const PluginInfo& p : discovered()) listed |= p.expected_name == "shm" && !p.loaded();
  EXPECT_TRUE(listed) << "the shm plugin is no longer listed as found";
  unsetenv("HCOMM_TRANSPORTS");
}

TEST(Loader, APluginSettingOutOfRangeStopsCreationNamingIt) {
  setenv("HCOMM_TCP_NSOCKS", "99", 1);
  try {
    transport::allowed("");
    FAIL() << "HCOMM_TCP_NSOCKS=99 was taken";
  } catch (const hcomm::Error& e) {
    EXPECT_EQ(e.code(), HCOMM_ERR_CONFIG);
    expect_contains(e.what(), "HCOMM_TCP_NSOCKS='99' is out of range: expected an integer from 1 to 16");
  }
  unsetenv("HCOMM_TCP_NSOCKS");
}

}  // namespace
}  // namespace hcomm::plugin
