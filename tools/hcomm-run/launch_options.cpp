#include "launch_options.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string_view>

namespace hcomm::run {
namespace {

// Longest --timeout accepted: far beyond any job, short of overflowing a clock.
constexpr double kMaxTimeoutS = 1e8;

int parse_rank_count(std::string_view text) {
  const std::string shown(text);
  if (text.empty() || text.find_first_not_of("0123456789") != std::string_view::npos)
    throw UsageError("-n '" + shown + "': the number of ranks must be a positive integer");
  if (text.size() > 5 || std::stoi(shown) > kMaxRanks)
    throw UsageError("-n " + shown + ": at most " + std::to_string(kMaxRanks) + " ranks can be started");
  const int n = std::stoi(shown);
  if (n < 1) throw UsageError("-n " + shown + ": the number of ranks must be at least 1");
  return n;
}

double parse_timeout(std::string_view text) {
  const std::string shown(text);
  char* end = nullptr;
  errno = 0;
  const double s = std::strtod(shown.c_str(), &end);
  if (shown.empty() || *end != '\0' || errno != 0 || !std::isfinite(s) || s <= 0 || s > kMaxTimeoutS)
    throw UsageError("--timeout '" + shown + "': expected a positive number of seconds");
  return s;
}

// One option as written: "-n4" and "--timeout=5" carry their value, "-n 4"
// and "--timeout 5" take it from the next argument.
struct OptionArg {
  std::string_view name;
  std::string_view attached;
  bool has_attached = false;

  explicit OptionArg(std::string_view arg) : name(arg) {
    const size_t split = arg.starts_with("--") ? arg.find('=') : (arg.size() > 2 ? 2 : std::string_view::npos);
    if (split == std::string_view::npos) return;
    name = arg.substr(0, split);
    attached = arg.substr(split + (arg[split] == '=' ? 1 : 0));
    has_attached = true;
  }

  std::string_view value(int argc, const char* const* argv, int& i) const {
    if (has_attached) return attached;
    if (i + 1 >= argc) throw UsageError(std::string(name) + " needs a value");
    return argv[++i];
  }
  void expect_no_value() const {
    if (has_attached) throw UsageError(std::string(name) + " takes no value");
  }
};

}  // namespace

LaunchOptions parse_launch_options(int argc, const char* const* argv) {
  LaunchOptions options;
  int i = 1;
  for (; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--") {
      ++i;
      break;
    }
    if (arg.size() < 2 || arg[0] != '-') break;  // the program starts here
    const OptionArg option(arg);
    if (option.name == "-h" || option.name == "--help") {
      option.expect_no_value();
      options.help = true;
      return options;
    }
    if (option.name == "--tag-output") {
      option.expect_no_value();
      options.tag_output = true;
    } else if (option.name == "-n") {
      options.nranks = parse_rank_count(option.value(argc, argv, i));
    } else if (option.name == "--timeout") {
      options.timeout_s = parse_timeout(option.value(argc, argv, i));
    } else {
      throw UsageError("unknown option '" + std::string(arg) + "'");
    }
  }
  options.command.assign(argv + i, argv + argc);
  if (options.nranks == 0) throw UsageError("missing -n N, the number of ranks to start");
  if (options.command.empty()) throw UsageError("missing the program to run");
  return options;
}

const char* usage_line() { return "usage: hcomm-run -n N [--tag-output] [--timeout S] [--] program [args...]\n"; }

const char* help_text() {
  return "\n"
         "Starts N ranks of `program` on this machine, each with HCOMM_RANK, HCOMM_SIZE,\n"
         "HCOMM_LOCAL_RANK, HCOMM_LOCAL_SIZE, HCOMM_ROOT and HCOMM_SECRET set.\n"
         "\n"
         "  -n N           number of ranks, 1 to 1024\n"
         "  --tag-output   prefix every output line of rank i with \"[i] \"\n"
         "  --timeout S    stop the job after S seconds and exit with 124\n"
         "  -h, --help     show this text\n"
         "\n"
         "When a rank fails (non-zero exit or a signal), the others are stopped and\n"
         "hcomm-run exits with that rank's code (128+signal for a signal). SIGINT,\n"
         "SIGTERM and SIGHUP are forwarded to every rank; a second one kills them.\n"
         "Ranks read standard input from /dev/null. Each rank has a process group of\n"
         "its own: when the job ends, processes a rank left in it are killed, and the\n"
         "ranks' leftover shared memory (/dev/shm/hcomm-ofi-<pid>-*) is removed.\n"
         "Exit status: 0 when every rank exits 0; 2 for a command line that cannot run;\n"
         "124 after --timeout; 1 when hcomm-run itself fails (the message says why).\n";
}

}  // namespace hcomm::run
