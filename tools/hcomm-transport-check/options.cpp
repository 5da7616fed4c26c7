#include "options.hpp"

#include <sys/random.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <optional>

#include "common/command_line.hpp"
#include "failure.hpp"
#include "shared_state.hpp"
#include "test_case.hpp"

namespace hcomm::tcheck {

namespace {

constexpr double kMaxTimeoutSeconds = 3600;

std::vector<std::string> test_names() {
  std::vector<std::string> names;
  for (const TestCase& t : test_cases()) names.emplace_back(t.name);
  return names;
}

uint64_t random_seed() {
  uint64_t seed = 0;
  if (::getrandom(&seed, sizeof seed, 0) != sizeof seed) seed = static_cast<uint64_t>(std::time(nullptr));
  return seed;
}

// Decimal, or hexadecimal and octal as C writes them.
CLI::Validator seed_value() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        char* end = nullptr;
        errno = 0;
        std::strtoull(text.c_str(), &end, 0);
        if (text.empty() || *end != '\0' || errno != 0 || text[0] == '-')
          return tools::expected("an unsigned 64-bit integer", text);
        return {};
      },
      "");
}

// Each test and what it checks, in 80 columns.
std::string test_list() {
  std::string text = "tests:\n";
  for (const TestCase& t : test_cases())
    text += tools::wrap(format("  %-11s  %s", t.name, t.checks), tools::Formatter::kWidth, 15) + "\n";
  return text;
}

}  // namespace

bool Options::selected(const std::string& test) const {
  return only.empty() || std::find(only.begin(), only.end(), test) != only.end();
}

void define_options(CLI::App& app, Options& o) {
  o.seed = random_seed();
  tools::describe(app, "hcomm-transport-check",
                  "Checks that a transport plugin (libhcomm_transport_<name>.so) keeps the HComm transport "
                  "contract. Every test runs in its own group of forked processes, with 2 and 4 ranks unless "
                  "--ranks is given.",
                  "HCOMM_DEBUG=WARN|INFO|DEBUG|TRACE shows the plugin's log on stderr. Exit status: 0 when every "
                  "test passed or was skipped, 1 when one failed, 2 for a usage error.\n\n" +
                      test_list());
  app.add_option("PLUGIN.so", o.plugin_path, "The plugin to check")
      ->type_name("")
      ->required()
      ->check(tools::non_empty("a plugin file"))
      ->transform(CLI::Validator(
          [](std::string& path) {
            path = std::filesystem::absolute(path).string();  // dlopen searches the library path for bare names
            return std::string();
          },
          ""));
  app.add_option_function<int>(
         "--ranks", [&o](int n) { o.rank_counts = {n}; },
         "Run the tests with N ranks only, 2 to " + std::to_string(kMaxRanks))
      ->type_name("N")
      ->transform(tools::integer_in(2, kMaxRanks));
  app.add_option_function<std::string>(
         "--only", [&o](const std::string& text) { o.only = tools::split_list(text); },
         "Run only these tests, comma separated (abi always runs first)")
      ->type_name("LIST")
      ->check(tools::list_of(test_names()));
  app.add_option("--timeout", o.timeout_seconds, "Seconds each test may take before its ranks are killed, 1 to 3600")
      ->type_name("S")
      ->check(tools::number_in(1, true, kMaxTimeoutSeconds, "seconds from 1 to 3600"))
      ->default_str("60");
  app.add_option("--seed", o.seed, "Seed of the random message plans, to repeat a run")
      ->type_name("S")
      ->check(seed_value());
}

}  // namespace hcomm::tcheck
