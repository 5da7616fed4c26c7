// The command line of hcomm-perf and the message sizes it sweeps. Header-only
// and free of library calls, so that it is unit-tested on its own.
#pragma once

#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "common/command_line.hpp"
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

// Where the buffers live: host memory, or the current CUDA device's (the
// calls' device-memory path; --buffers alloc is then hcomm_mem_alloc_device).
enum class Memory { Host, Cuda };

struct MemoryInfo {
  std::string_view name;
  Memory memory;
};

inline constexpr std::array<MemoryInfo, 2> kMemories = {{{"host", Memory::Host}, {"cuda", Memory::Cuda}}};
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
  bool stream = false;  // stream-ordered calls on a CUDA stream, each timed to the stream's end
  Buffers buffers = Buffers::Malloc;
  Memory memory = Memory::Host;
  bool fresh_inputs = false;        // every cache line of the input written before each call (untimed)
  std::string json_path;            // empty: no JSON file
  std::string algorithm;            // --algo: forced for the timed calls; empty: the library's choice
  bool sweep_algorithms = false;    // every algorithm forced in turn, then the library's choice
  int rounds = 1;                   // --sweep-algos: rounds of all of them in turn; each one's best round
  std::string calibrate_path;       // --calibrate: measure the link model into this file instead of a sweep
  std::vector<std::string> select;  // --calibrate --select: collectives whose fastest algorithms it measures
};

// "4096", "64K", "1M", "2G" (K, M, G are powers of 1024; lower case too).
// Throws CLI::ValidationError saying what it accepts.
inline size_t parse_size(std::string_view text) {
  const std::string shown(text);
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
    throw CLI::ValidationError(tools::expected("a number of bytes, optionally with a K, M or G suffix", shown));
  if (error == std::errc::result_out_of_range || value > (std::numeric_limits<size_t>::max() >> shift))
    throw CLI::ValidationError(
        tools::expected("at most " + std::to_string(std::numeric_limits<size_t>::max()) + " bytes", shown));
  return static_cast<size_t>(value) << shift;
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

// A size option's transform: the text as parse_size reads it, into digits.
inline CLI::Validator size_value() {
  return CLI::Validator(
      [](std::string& text) {
        text = std::to_string(parse_size(text));
        return std::string();
      },
      "");
}

// An option that takes the name of one of `table`'s entries (-d, -o,
// --buffers) and sets `target` to that entry's `field`; --help shows the
// name of target's entry as the default.
template <class T, class Table, class Field>
CLI::Option* add_named(CLI::App& app, const std::string& names, T& target, const Table& table, Field field,
                       const std::string& type, const std::string& doc) {
  std::string shown;
  for (const auto& entry : table)
    if (entry.*field == target) shown = entry.name;
  const auto by_name = [&table, field](std::string& text) {
    for (const auto& entry : table)
      if (entry.name == text) {
        text = std::to_string(static_cast<long long>(entry.*field));  // CLI11 reads an enum as its number
        return std::string();
      }
    return tools::expected("one of " + join_names(table, ", "), text);
  };
  return app.add_option(names, target, doc)
      ->type_name(type)
      ->transform(CLI::Validator(by_name, ""))
      ->default_str(shown);
}

// Iteration counts stay below this, so that warm-up plus timed iterations fit an int.
inline constexpr int kMaxCount = 1000000000;

// What no single option can check: the options that do not combine, and
// --minbytes against --maxbytes. Expands --select all. Throws
// CLI::ValidationError.
inline void check_combinations(Options& options, std::span<const std::string_view> collectives) {
  const auto refuse = [](const std::string& why) { throw CLI::ValidationError(why); };
  if (!options.calibrate_path.empty() &&
      (!options.algorithm.empty() || options.sweep_algorithms || !options.json_path.empty()))
    refuse(
        "--calibrate measures the links, not a collective: it does not combine with --algo, --sweep-algos "
        "or --json");
  if (!options.select.empty() && options.calibrate_path.empty())
    refuse("--select measures choices of algorithm into a tune file: it needs --calibrate FILE");
  if (options.select == std::vector<std::string>{"all"}) options.select.assign(collectives.begin(), collectives.end());
  if (options.sweep_algorithms && !options.algorithm.empty())
    refuse("--sweep-algos forces every algorithm in turn: it does not combine with --algo");
  if (options.sweep_algorithms && !options.json_path.empty())
    refuse("--json writes one algorithm per size: it does not combine with --sweep-algos");
  if (options.min_time_ms > 0 && options.warmup == 0)
    refuse("--min-time sets the iterations from the warm-up's calls: it needs -w 1 or more");
  if (options.rounds > 1 && !options.sweep_algorithms && options.select.empty())
    refuse("--rounds repeats the algorithms of --sweep-algos in turn: it needs --sweep-algos or --select");
  if (options.memory == Memory::Cuda && options.buffers == Buffers::Register)
    refuse("--buffers register registers host memory: with --memory cuda take malloc (cudaMalloc) or alloc "
           "(hcomm_mem_alloc_device)");
  if (options.stream && options.memory != Memory::Cuda)
    refuse("--stream queues the calls on a CUDA stream: it needs --memory cuda");
  if (options.stream && !options.blocking)
    refuse("--stream and --nonblocking: a call is stream-ordered or nonblocking, not both");
  if (options.memory == Memory::Cuda && !options.calibrate_path.empty())
    refuse("--calibrate measures host memory's links: it does not combine with --memory cuda");
  if (options.min_bytes > options.max_bytes)
    refuse("--minbytes " + std::to_string(options.min_bytes) + " is larger than --maxbytes " +
           std::to_string(options.max_bytes));
}

// hcomm-perf's command line on `app`: every option writes its field of
// `options`, and check_combinations runs when app.parse has read them all.
// `collectives` are the names -c takes; it and `options` outlive the parse.
inline void define_options(CLI::App& app, Options& o, std::span<const std::string_view> collectives) {
  const std::vector<std::string> names(collectives.begin(), collectives.end());
  tools::describe(
      app, "hcomm-perf",
      "Measures a collective over a sweep of message sizes, in the manner of nccl-tests, checking every element "
      "of every result; or compares its algorithms at every size (--sweep-algos); or measures the link model "
      "(--calibrate). Run it under a launcher: hcomm-run -n N hcomm-perf [OPTIONS]",
      "Sizes are rounded down to whole elements; a size that rounds to the same count as the row before is "
      "skipped, so a sweep that starts below one element begins with one row of count 0. The last column names "
      "the algorithm used at that size. Exits non-zero when any element was wrong or any call failed.");
  app.add_option("-c,--collective", o.collective, "Collective to measure: " + tools::join(names))
      ->type_name("NAME")
      ->check(tools::one_of(names))
      ->default_str(o.collective);
  app.add_option("-b,--minbytes", o.min_bytes, "Smallest message; SIZE takes a K, M or G suffix")
      ->type_name("SIZE")
      ->transform(size_value())
      ->default_str("8");
  app.add_option("-e,--maxbytes", o.max_bytes, "Largest message")
      ->type_name("SIZE")
      ->transform(size_value())
      ->default_str("32M");
  tools::add_integer(app, "-f,--stepfactor", o.step_factor, 2, 1024, "F",
                     "Multiply the size by F between rows, 2 to 1024")
      ->capture_default_str();
  add_named(app, "-d,--dtype", o.dtype, kDtypes, &DtypeInfo::dtype, "TYPE",
            "Element type: " + join_names(kDtypes, ", "));
  add_named(app, "-o,--op", o.op, kOps, &OpInfo::op, "OP", "Reduction: " + join_names(kOps, ", "));
  tools::add_integer(app, "-r,--root", o.root, 0, kMaxCount, "R", "Root rank of rooted collectives")
      ->capture_default_str();
  tools::add_integer(app, "-w,--warmup", o.warmup, 0, kMaxCount, "N", "Untimed iterations per size")
      ->capture_default_str();
  tools::add_integer(app, "-n,--iters", o.iters, 1, kMaxCount, "N", "Timed iterations per size")->capture_default_str();
  tools::add_integer(app, "--min-time", o.min_time_ms, 0, 600000, "MS",
                     "More timed iterations where calls are short: about MS milliseconds of calls per size (at least "
                     "-n, at most 100000 iterations; the warm-up's median call sets the number; needs -w 1 or more; "
                     "0: -n at every size), 0 to 600000")
      ->capture_default_str();
  tools::add_integer(app, "--settle", o.settle_ms, 0, 600000, "MS",
                     "Small calls for MS milliseconds before the sweep (0: none): ranks started on one core have moved "
                     "apart by then, 0 to 600000")
      ->capture_default_str();
  tools::add_switch(app, "--inplace", o.inplace, "Receive into the send buffer");
  tools::add_switch(app, "--check,!--no-check", o.check,
                    "Check every element of every iteration, each call then starting after a barrier; or not, the calls "
                    "back to back (default: check)");
  tools::add_switch(app, "--stream", o.stream,
                    "Stream-ordered calls (with --memory cuda): each queued on a CUDA stream of hcomm-perf's and "
                    "timed until that stream is done");
  tools::add_switch(app, "--blocking,!--nonblocking", o.blocking,
                    "Blocking calls, or the i-forms and hcomm_wait (default: blocking)");
  add_named(app, "--buffers", o.buffers, kBuffers, &BuffersInfo::buffers, "KIND",
            "Where the send and receive buffers come from: malloc, alloc (hcomm_mem_alloc) or register "
            "(page-aligned, hcomm_mem_register'd); the last two are the zero-copy paths of ranks that map each "
            "other's memory");
  add_named(app, "--memory", o.memory, kMemories, &MemoryInfo::memory, "KIND",
            "Where the buffers live: host, or cuda (the current CUDA device; --buffers malloc is then cudaMalloc, "
            "alloc hcomm_mem_alloc_device)");
  tools::add_switch(app, "--fresh-inputs", o.fresh_inputs,
                    "Write the input before each call, untimed, as a training step writes its gradients (default: "
                    "the same input every call, which a peer that reads it in place may keep cached)");
  app.add_option("--json", o.json_path, "Also write the rows to FILE as a JSON array")->type_name("FILE");
  app.add_option("--algo", o.algorithm,
                 "Force algorithm NAME for the collective (hcomm-info lists them); an error where NAME does not "
                 "serve it")
      ->type_name("NAME")
      ->check(tools::non_empty("an algorithm name"));
  tools::add_switch(app, "--sweep-algos", o.sweep_algorithms,
                    "Per size, every algorithm that serves the collective, then the library's own choice (auto), "
                    "and how close auto comes");
  tools::add_integer(app, "--rounds", o.rounds, 1, 100, "R",
                     "With --sweep-algos or --select: R rounds of them all in turn per size, each one's best round "
                     "reported, 1 to 100")
      ->capture_default_str();
  app.add_option("--calibrate", o.calibrate_path,
                 "Measure the link model (latency, bandwidth, reduction) on this communicator into FILE, for "
                 "HCOMM_TUNE_FILE=FILE; uses -w and -n, needs at least 2 ranks")
      ->type_name("FILE")
      ->check(tools::non_empty("a file name"));
  app.add_option_function<std::string>(
         "--select", [&o](const std::string& text) { o.select = tools::split_list(text); },
         "With --calibrate: also sweep every algorithm of each of COLLS (comma separated, or all) over -b to -e "
         "with malloc'd and hcomm_mem_alloc'd buffers (as --sweep-algos, with --rounds, --min-time, "
         "--fresh-inputs), and write the fastest per size into FILE, for host-memory calls of communicators of "
         "this one's ranks, hosts and transports")
      ->type_name("COLLS")
      ->check(tools::list_of(names, "all"));
  app.callback([&o, collectives] { check_combinations(o, collectives); });
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
