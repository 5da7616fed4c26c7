// The loader's distinct errors, with plugins broken on purpose (fixtures/).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/common/error.hpp"
#include "core/plugin/loader.hpp"

namespace hcomm::plugin {
namespace {

std::string fixture(const char* file) { return std::string(HCOMM_TEST_FIXTURE_DIR) + "/" + file; }

// Loads `path` and returns the error text (empty if it loaded).
std::string load_error(const std::string& path) {
  try {
    load(path);
    return "";
  } catch (const Error& e) {
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
  for (const PluginInfo& p : discovered()) {
    EXPECT_TRUE(p.loaded()) << p.path << ": " << p.error;
    tcp |= p.expected_name == "tcp" && p.loaded();
    shm |= p.expected_name == "shm" && p.loaded();
    basic |= p.expected_name == "ring" && p.loaded();
  }
  EXPECT_TRUE(tcp && shm && basic);
}

}  // namespace
}  // namespace hcomm::plugin
