// The command line of hcomm-perf and the message sizes it sweeps. Header-only
// and free of library calls, so that it is unit-tested on its own.
#pragma once

#include <algorithm>
#include <array>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "hcomm/types.h"

namespace hcomm::perf {

struct DtypeInfo {
  std::string_view name;
  hcomm_dtype_t dtype;
  size_t size;
};

inline constexpr std::array<DtypeInfo, HCOMM_NUM_DTYPES> kDtypes = {{
    {"int8", HCOMM_INT8, 1},
    {"uint8", HCOMM_UINT8, 1},
    {"int32", HCOMM_INT32, 4},
    {"uint32", HCOMM_UINT32, 4},
    {"int64", HCOMM_INT64, 8},
    {"uint64", HCOMM_UINT64, 8},
    {"float16", HCOMM_FLOAT16, 2},
    {"bfloat16", HCOMM_BFLOAT16, 2},
    {"float32", HCOMM_FLOAT32, 4},
    {"float64", HCOMM_FLOAT64, 8},
}};

struct OpInfo {
  std::string_view name;
  hcomm_op_t op;
};

inline constexpr std::array<OpInfo, HCOMM_NUM_OPS> kOps = {{
    {"sum", HCOMM_SUM},
    {"prod", HCOMM_PROD},
    {"min", HCOMM_MIN},
    {"max", HCOMM_MAX},
    {"avg", HCOMM_AVG},
}};

// Where the message buffers come from: plain memory, the library's mappable
// memory, or plain memory registered with the communicator (the zero-copy
// paths; nccl-tests' -R).
enum class Buffers { Malloc, Alloc, Register };

struct BuffersInfo {
  std::string_view name;
  Buffers buffers;
  std::string_view description;  // for the report's header
};

inline constexpr std::array<BuffersInfo, 3> kBuffers = {{
    {"malloc", Buffers::Malloc, "buffers from malloc"},
    {"alloc", Buffers::Alloc, "buffers from hcomm_mem_alloc"},
    {"register", Buffers::Register, "buffers registered with hcomm_mem_register"},
}};

inline const BuffersInfo& buffers_info(Buffers buffers) { return kBuffers.at(static_cast<size_t>(buffers)); }
inline const DtypeInfo& dtype_info(hcomm_dtype_t dtype) { return kDtypes.at(static_cast<size_t>(dtype)); }
inline std::string_view op_name(hcomm_op_t op) { return kOps.at(static_cast<size_t>(op)).name; }

struct Options {
  std::string collective = "allreduce";
  size_t min_bytes = 8;
  size_t max_bytes = size_t{32} << 20;
  size_t step_factor = 2;
  hcomm_dtype_t dtype = HCOMM_FLOAT32;
  hcomm_op_t op = HCOMM_SUM;
  int root = 0;
  int warmup = 5;
  int iters = 20;
  int min_time_ms = 0;  // more timed iterations than `iters` where calls are short: about this long in all
  int settle_ms = 200;  // small calls before the sweep, so that the ranks start it settled on their cores
  bool inplace = false;
  bool check = true;
  bool blocking = true;
  Buffers buffers = Buffers::Malloc;
  bool fresh_inputs = false;      // every cache line of the input written before each call (untimed)
  std::string json_path;          // empty: no JSON file
  std::string algorithm;          // --algo: forced for the timed calls; empty: the library's choice
  bool sweep_algorithms = false;  // every algorithm forced in turn, then the library's choice
  int rounds = 1;                 // --sweep-algos: rounds of all of them in turn; each one's best round
  std::string calibrate_path;     // --calibrate: measure the link model into this file instead of a sweep
  std::vector<std::string> select;  // --calibrate --select: collectives whose fastest algorithms it measures
  bool help = false;
};

// A command line that cannot run; the text names the option and says why.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// "4096", "64K", "1M", "2G" (K, M, G are powers of 1024; lower case too).
inline size_t parse_size(std::string_view text, std::string_view option) {
  const auto bad = [&](const char* why) {
    return UsageError(std::string(option) + " '" + std::string(text) + "': " + why);
  };
  size_t shift = 0;
  std::string_view digits = text;
  if (!digits.empty()) {
    switch (digits.back()) {
      case 'K':
      case 'k':
        shift = 10;
        break;
      case 'M':
      case 'm':
        shift = 20;
        break;
      case 'G':
      case 'g':
        shift = 30;
        break;
      default:
        break;
    }
    if (shift != 0) digits.remove_suffix(1);
  }
  uint64_t value = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (digits.empty() || error == std::errc::invalid_argument || end != digits.data() + digits.size())
    throw bad("expected a number of bytes, optionally with a K, M or G suffix");
  if (error == std::errc::result_out_of_range || value > (std::numeric_limits<size_t>::max() >> shift))
    throw bad("too large");
  return static_cast<size_t>(value) << shift;
}

inline int parse_int(std::string_view text, std::string_view option, int min, int max) {
  int value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || value < min || value > max)
    throw UsageError(std::string(option) + " '" + std::string(text) + "': expected an integer from " +
                     std::to_string(min) + " to " + std::to_string(max));
  return value;
}

// "a, b, c" from names, or from table entries that have a name.
template <class Range>
std::string join_names(const Range& entries, std::string_view separator) {
  std::string out;
  for (const auto& entry : entries) {
    if (!out.empty()) out += separator;
    if constexpr (std::is_convertible_v<decltype(entry), std::string_view>)
      out += entry;
    else
      out += entry.name;
  }
  return out;
}

template <class Table>
auto parse_name(const Table& table, std::string_view text, std::string_view option) {
  for (const auto& entry : table)
    if (entry.name == text) return entry;
  throw UsageError(std::string(option) + " '" + std::string(text) + "': expected one of " + join_names(table, ", "));
}

// One option: its names, whether it takes a value, and what it sets.
struct OptionSpec {
  char short_name;  // 0: long form only
  std::string_view long_name;
  bool takes_value;
  void (*apply)(Options& options, std::string_view value, std::string_view option);
};

// Iteration counts stay below this, so that warm-up plus timed iterations fit an int.
inline constexpr int kMaxCount = 1000000000;

inline std::string non_empty(std::string_view text, std::string_view option, const char* what) {
  if (text.empty()) throw UsageError(std::string(option) + " needs " + what);
  return std::string(text);
}

// "allreduce,broadcast" into names; "all" stands for every collective (checked in parse_options).
inline std::vector<std::string> split_names(std::string_view text, std::string_view option) {
  std::vector<std::string> names;
  for (size_t start = 0; start <= text.size();) {
    const size_t end = std::min(text.find(',', start), text.size());
    if (end == start) throw UsageError(std::string(option) + " '" + std::string(text) + "': an empty name");
    names.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  return names;
}

inline constexpr std::array<OptionSpec, 25> kOptionSpecs = {{
    {'c', "collective", true, [](Options& o, std::string_view v, std::string_view) { o.collective = v; }},
    {'b', "minbytes", true, [](Options& o, std::string_view v, std::string_view n) { o.min_bytes = parse_size(v, n); }},
    {'e', "maxbytes", true, [](Options& o, std::string_view v, std::string_view n) { o.max_bytes = parse_size(v, n); }},
    {'f', "stepfactor", true,
     [](Options& o, std::string_view v, std::string_view n) {
       o.step_factor = static_cast<size_t>(parse_int(v, n, 2, 1024));
     }},
    {'d', "dtype", true,
     [](Options& o, std::string_view v, std::string_view n) { o.dtype = parse_name(kDtypes, v, n).dtype; }},
    {'o', "op", true, [](Options& o, std::string_view v, std::string_view n) { o.op = parse_name(kOps, v, n).op; }},
    {'r', "root", true,
     [](Options& o, std::string_view v, std::string_view n) { o.root = parse_int(v, n, 0, kMaxCount); }},
    {'w', "warmup", true,
     [](Options& o, std::string_view v, std::string_view n) { o.warmup = parse_int(v, n, 0, kMaxCount); }},
    {'n', "iters", true,
     [](Options& o, std::string_view v, std::string_view n) { o.iters = parse_int(v, n, 1, kMaxCount); }},
    {0, "min-time", true,
     [](Options& o, std::string_view v, std::string_view n) { o.min_time_ms = parse_int(v, n, 0, 600000); }},
    {0, "settle", true,
     [](Options& o, std::string_view v, std::string_view n) { o.settle_ms = parse_int(v, n, 0, 600000); }},
    {0, "json", true, [](Options& o, std::string_view v, std::string_view) { o.json_path = v; }},
    {0, "algo", true,
     [](Options& o, std::string_view v, std::string_view n) { o.algorithm = non_empty(v, n, "an algorithm name"); }},
    {0, "sweep-algos", false, [](Options& o, std::string_view, std::string_view) { o.sweep_algorithms = true; }},
    {0, "rounds", true, [](Options& o, std::string_view v, std::string_view n) { o.rounds = parse_int(v, n, 1, 100); }},
    {0, "calibrate", true,
     [](Options& o, std::string_view v, std::string_view n) { o.calibrate_path = non_empty(v, n, "a file name"); }},
    {0, "select", true, [](Options& o, std::string_view v, std::string_view n) { o.select = split_names(v, n); }},
    {0, "inplace", false, [](Options& o, std::string_view, std::string_view) { o.inplace = true; }},
    {0, "check", false, [](Options& o, std::string_view, std::string_view) { o.check = true; }},
    {0, "no-check", false, [](Options& o, std::string_view, std::string_view) { o.check = false; }},
    {0, "blocking", false, [](Options& o, std::string_view, std::string_view) { o.blocking = true; }},
    {0, "nonblocking", false, [](Options& o, std::string_view, std::string_view) { o.blocking = false; }},
    {0, "buffers", true,
     [](Options& o, std::string_view v, std::string_view n) { o.buffers = parse_name(kBuffers, v, n).buffers; }},
    {0, "fresh-inputs", false, [](Options& o, std::string_view, std::string_view) { o.fresh_inputs = true; }},
    {'h', "help", false, [](Options& o, std::string_view, std::string_view) { o.help = true; }},
}};

inline const OptionSpec* find_option(std::string_view arg) {
  for (const OptionSpec& spec : kOptionSpecs) {
    if (arg.starts_with("--") && arg.substr(2) == spec.long_name) return &spec;
    if (spec.short_name != 0 && arg.size() == 2 && arg[0] == '-' && arg[1] == spec.short_name) return &spec;
  }
  return nullptr;
}

// args excludes the program name; `collectives` are the names -c accepts.
inline Options parse_options(std::span<const std::string_view> args, std::span<const std::string_view> collectives) {
  Options options;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string_view arg = args[i];
    std::string_view value;
    bool has_value = false;
    if (const size_t eq = arg.find('='); arg.starts_with("--") && eq != std::string_view::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
      has_value = true;
    }
    const OptionSpec* spec = find_option(arg);
    if (!spec) throw UsageError("unknown argument '" + std::string(args[i]) + "'");
    if (spec->takes_value && !has_value) {
      if (i + 1 >= args.size()) throw UsageError(std::string(arg) + " needs a value");
      value = args[++i];
    } else if (!spec->takes_value && has_value) {
      throw UsageError(std::string(arg) + " takes no value");
    }
    spec->apply(options, value, arg);
    if (options.help) return options;
  }
  if (std::find(collectives.begin(), collectives.end(), options.collective) == collectives.end())
    throw UsageError("--collective '" + options.collective + "': expected one of " + join_names(collectives, ", "));
  if (!options.calibrate_path.empty() &&
      (!options.algorithm.empty() || options.sweep_algorithms || !options.json_path.empty()))
    throw UsageError(
        "--calibrate measures the links, not a collective: it does not combine with --algo, --sweep-algos "
        "or --json");
  if (!options.select.empty() && options.calibrate_path.empty())
    throw UsageError("--select measures choices of algorithm into a tune file: it needs --calibrate FILE");
  if (options.select == std::vector<std::string>{"all"}) options.select.assign(collectives.begin(), collectives.end());
  for (const std::string& name : options.select)
    if (std::find(collectives.begin(), collectives.end(), name) == collectives.end())
      throw UsageError("--select '" + name + "': expected all, or some of " + join_names(collectives, ", ") +
                       " separated by commas");
  if (options.sweep_algorithms && !options.algorithm.empty())
    throw UsageError("--sweep-algos forces every algorithm in turn: it does not combine with --algo");
  if (options.sweep_algorithms && !options.json_path.empty())
    throw UsageError("--json writes one algorithm per size: it does not combine with --sweep-algos");
  if (options.min_time_ms > 0 && options.warmup == 0)
    throw UsageError("--min-time sets the iterations from the warm-up's calls: it needs -w 1 or more");
  if (options.rounds > 1 && !options.sweep_algorithms && options.select.empty())
    throw UsageError("--rounds repeats the algorithms of --sweep-algos in turn: it needs --sweep-algos or --select");
  if (options.min_bytes > options.max_bytes)
    throw UsageError("--minbytes " + std::to_string(options.min_bytes) + " is larger than --maxbytes " +
                     std::to_string(options.max_bytes));
  return options;
}

inline std::string usage_text(std::span<const std::string_view> collectives) {
  return "usage: hcomm-run -n N hcomm-perf [options]\n\n  -c, --collective " + join_names(collectives, "|") +
         "   (default allreduce)\n"
         "  -b, --minbytes SIZE      smallest message (default 8); SIZE takes a K, M or G suffix\n"
         "  -e, --maxbytes SIZE      largest message (default 32M)\n"
         "  -f, --stepfactor F       multiply the size by F between rows (default 2)\n"
         "  -d, --dtype T            int8 uint8 int32 uint32 int64 uint64 float16 bfloat16\n"
         "                           float32 float64 (default float32)\n"
         "  -o, --op OP              sum prod min max avg (default sum)\n"
         "  -r, --root R             root rank of rooted collectives (default 0)\n"
         "  -w, --warmup N           untimed iterations per size (default 5)\n"
         "  -n, --iters N            timed iterations per size (default 20)\n"
         "      --min-time MS        more timed iterations where calls are short, about MS\n"
         "                           milliseconds of calls per size (at least -n, at most\n"
         "                           100000; the warm-up's median call sets the number; needs\n"
         "                           -w 1 or more; default 0: -n at every size)\n"
         "      --settle MS          small calls for MS milliseconds before the sweep (default 200;\n"
         "                           0: none): ranks started on one core have moved apart by then\n"
         "      --inplace            receive into the send buffer\n"
         "      --check, --no-check  check every element of every iteration (default on)\n"
         "      --blocking, --nonblocking\n"
         "                           blocking calls, or the i-forms and hcomm_wait (default blocking)\n"
         "      --buffers KIND       malloc (default), alloc (hcomm_mem_alloc) or register\n"
         "                           (page-aligned, hcomm_mem_register'd): where the send and\n"
         "                           receive buffers come from; the last two are the zero-copy\n"
         "                           paths of ranks that map each other's memory\n"
         "      --fresh-inputs       write the input before each call, untimed, as a training\n"
         "                           step writes its gradients (default: the same input every\n"
         "                           call, which a peer that reads it in place may keep cached)\n"
         "      --json FILE          also write the rows to FILE as a JSON array\n"
         "      --algo NAME          force algorithm NAME for the collective (hcomm-info lists\n"
         "                           them); an error where NAME does not serve it\n"
         "      --sweep-algos        per size, every algorithm that serves the collective, then\n"
         "                           the library's own choice (auto), and how close auto comes\n"
         "      --rounds R           with --sweep-algos: R rounds of them all in turn per size,\n"
         "                           each one's best round reported (default 1)\n"
         "      --calibrate FILE     measure the link model (latency, bandwidth, reduction) on\n"
         "                           this communicator into FILE, for HCOMM_TUNE_FILE=FILE;\n"
         "                           uses -w and -n, needs at least 2 ranks\n"
         "      --select COLLS       with --calibrate: also sweep every algorithm of each of\n"
         "                           COLLS (comma separated, or all) over -b to -e with\n"
         "                           malloc'd and hcomm_mem_alloc'd buffers (as --sweep-algos,\n"
         "                           with --rounds, --min-time, --fresh-inputs), and write\n"
         "                           the fastest per size into FILE, for host-memory calls of\n"
         "                           communicators of this one's ranks, hosts and transports\n"
         "  -h, --help               show this text\n"
         "\n"
         "Sizes are rounded down to whole elements; a size that rounds to the same\n"
         "count as the row before is skipped, so a sweep that starts below one element\n"
         "begins with one row of count 0. The last column names the algorithm used at\n"
         "that size. Exits non-zero when any element was wrong or any call failed.\n";
}

// One row of the sweep: the bytes actually moved per rank, and the count.
struct SweepPoint {
  size_t bytes;
  size_t count;
  bool operator==(const SweepPoint&) const = default;
};

// min, min*f, min*f^2, ... up to max (0 is followed by 1), rounded down to
// whole elements, without repeating a count.
inline std::vector<SweepPoint> size_sweep(size_t min_bytes, size_t max_bytes, size_t factor, size_t elem_size) {
  std::vector<SweepPoint> points;
  for (size_t bytes = min_bytes; bytes <= max_bytes;) {
    const size_t count = bytes / elem_size;
    if (points.empty() || points.back().count != count) points.push_back({count * elem_size, count});
    if (bytes == 0) {
      bytes = 1;
    } else if (bytes > max_bytes / factor) {
      break;
    } else {
      bytes *= factor;
    }
  }
  return points;
}

}  // namespace hcomm::perf
