#include "options.hpp"

#include <sys/random.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <filesystem>

#include "failure.hpp"
#include "shared_state.hpp"
#include "test_case.hpp"

namespace hcomm::tcheck {

namespace {

constexpr double kMaxTimeoutSeconds = 3600;

std::string test_names() {
  std::string names;
  for (const TestCase& t : test_cases()) names += (names.empty() ? "" : ", ") + std::string(t.name);
  return names;
}

long long parse_integer(const std::string& option, const std::string& text, long long low, long long high) {
  char* end = nullptr;
  errno = 0;
  long long value = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno != 0 || value < low || value > high)
    throw UsageError(format("%s %s: expected an integer from %lld to %lld", option.c_str(), text.c_str(), low, high));
  return value;
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  size_t begin = 0;
  for (size_t end; (end = text.find(separator, begin)) != std::string::npos; begin = end + 1)
    parts.push_back(text.substr(begin, end - begin));
  parts.push_back(text.substr(begin));
  return parts;
}

uint64_t random_seed() {
  uint64_t seed = 0;
  if (::getrandom(&seed, sizeof seed, 0) != sizeof seed) seed = static_cast<uint64_t>(std::time(nullptr));
  return seed;
}

}  // namespace

bool Options::selected(const std::string& test) const {
  return only.empty() || std::find(only.begin(), only.end(), test) != only.end();
}

std::string usage() {
  std::string text =
      "usage: hcomm-transport-check [--ranks N] [--only TEST[,TEST...]] [--timeout S] [--seed S] PLUGIN.so\n"
      "\n"
      "Checks that a transport plugin (libhcomm_transport_<name>.so) keeps the HComm transport contract.\n"
      "Every test runs in its own group of forked processes, with 2 and 4 ranks unless --ranks is given.\n"
      "\n"
      "  --ranks N      run the tests with N ranks only (2.." +
      std::to_string(kMaxRanks) +
      ")\n"
      "  --only LIST    run only these tests (abi always runs first)\n"
      "  --timeout S    seconds each test may take before its ranks are killed (default 60)\n"
      "  --seed S       seed of the random message plans, to repeat a run\n"
      "\n"
      "HCOMM_DEBUG=WARN|INFO|DEBUG|TRACE shows the plugin's log on stderr. Exit status: 0 when every test\n"
      "passed or was skipped, 1 when one failed, 2 for a usage error.\n"
      "\n"
      "tests:\n";
  for (const TestCase& t : test_cases()) text += format("  %-11s  %s\n", t.name, t.checks);
  return text;
}

Options parse_options(int argc, char** argv) {
  Options o;
  o.seed = random_seed();
  std::vector<std::string> args(argv + 1, argv + argc);
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    auto value = [&]() -> const std::string& {
      if (i + 1 >= args.size()) throw UsageError(arg + ": needs a value");
      return args[++i];
    };
    if (arg == "-h" || arg == "--help") {
      o.help = true;
    } else if (arg == "--ranks") {
      o.rank_counts = {static_cast<int>(parse_integer(arg, value(), 2, kMaxRanks))};
    } else if (arg == "--only") {
      o.only = split(value(), ',');
      for (const std::string& name : o.only) {
        auto known = [&](const TestCase& t) { return name == t.name; };
        if (std::none_of(test_cases().begin(), test_cases().end(), known))
          throw UsageError(format("--only: unknown test \"%s\" (tests: %s)", name.c_str(), test_names().c_str()));
      }
    } else if (arg == "--timeout") {
      const std::string& text = value();
      char* end = nullptr;
      double seconds = std::strtod(text.c_str(), &end);
      if (text.empty() || *end != '\0' || !std::isfinite(seconds) || seconds < 1 || seconds > kMaxTimeoutSeconds)
        throw UsageError(format("--timeout %s: expected seconds from 1 to %.0f", text.c_str(), kMaxTimeoutSeconds));
      o.timeout_seconds = seconds;
    } else if (arg == "--seed") {
      const std::string& text = value();
      char* end = nullptr;
      errno = 0;
      o.seed = std::strtoull(text.c_str(), &end, 0);
      if (text.empty() || *end != '\0' || errno != 0 || text[0] == '-')
        throw UsageError(format("--seed %s: expected an unsigned 64-bit integer", text.c_str()));
    } else if (!arg.empty() && arg[0] == '-') {
      throw UsageError(format("unknown option %s", arg.c_str()));
    } else if (o.plugin_path.empty()) {
      o.plugin_path = std::filesystem::absolute(arg).string();  // dlopen searches the library path for bare names
    } else {
      throw UsageError(format("one plugin at a time: got %s and %s", o.plugin_path.c_str(), arg.c_str()));
    }
  }
  if (o.plugin_path.empty() && !o.help) throw UsageError("missing the plugin to check (PLUGIN.so)");
  return o;
}

}  // namespace hcomm::tcheck
