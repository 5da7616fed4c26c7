// transport_bench: point-to-point latency and bandwidth of one transport
// plugin, through its ABI alone (no libhcomm). It forks two processes that
// connect through the plugin, then for every size measures the ping-pong
// latency (half a round trip) and the streaming bandwidth (a window of
// isends in flight, the receiver acknowledging each window's end).
//   transport_bench build/lib/hcomm/libhcomm_transport_tcp.so
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "bench_link.hpp"
#include "failure.hpp"

using namespace hcomm::tbench;
using hcomm::tcheck::format;

namespace {

constexpr uint64_t kPingTag = 1;
constexpr uint64_t kStreamTag = 2;
constexpr uint64_t kAckTag = 3;
constexpr size_t kLatencyBudget = size_t{256} << 20;  // bytes each way per size, at most
constexpr size_t kStreamBudget = size_t{512} << 20;
constexpr size_t kWindowBytes = size_t{256} << 20;  // in flight at once, at most

struct Options {
  std::string plugin;
  size_t min_bytes = 8;
  size_t max_bytes = size_t{64} << 20;
  int iterations = 1000;  // ping-pongs of the smallest sizes; fewer for large ones
  int window = 16;
  double timeout_s = 60;
  std::string json;
};

struct Row {
  size_t bytes;
  double latency_us;
  double bandwidth_gbps;
  int window;  // sends in flight for the bandwidth
};

const char* kUsage =
    "usage: transport_bench [--min BYTES] [--max BYTES] [--iters N] [--window N] [--timeout S] [--json FILE]\n"
    "                       PLUGIN.so\n"
    "\n"
    "Loads a transport plugin (libhcomm_transport_<name>.so), forks two processes that connect through it,\n"
    "and prints for every power of two from --min (default 8) to --max (default 64M; K, M, G accepted):\n"
    "the ping-pong latency (half a round trip, us) and the streaming bandwidth (GB/s) with --window\n"
    "(default 16) sends in flight. --iters (default 1000) ping-pongs for small sizes, fewer for large ones.\n"
    "The plugin's settings come from the environment (HCOMM_TCP_IF_ADDR=127.0.0.1, ...).\n";

[[noreturn]] void usage_error(const std::string& why) {
  std::fprintf(stderr, "transport_bench: %s\n\n%s", why.c_str(), kUsage);
  std::exit(2);
}

size_t parse_bytes(const std::string& option, const char* text) {
  char* end = nullptr;
  unsigned long long n = std::strtoull(text, &end, 10);
  int shift = *end == 'K' || *end == 'k' ? 10 : *end == 'M' || *end == 'm' ? 20 : *end == 'G' || *end == 'g' ? 30 : 0;
  if (end == text || (shift && end[1] != '\0') || (!shift && *end != '\0') || n == 0)
    usage_error(format("%s %s: give a size above 0, with an optional K, M or G", option.c_str(), text));
  return static_cast<size_t>(n) << shift;
}

long parse_int(const std::string& option, const char* text, long low, long high) {
  char* end = nullptr;
  long n = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || n < low || n > high)
    usage_error(format("%s %s: give a number from %ld to %ld", option.c_str(), text, low, high));
  return n;
}

Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    }
    if (arg.rfind("--", 0) != 0) {
      if (!o.plugin.empty()) usage_error("give one plugin");
      o.plugin = arg;
      continue;
    }
    if (i + 1 >= argc) usage_error(arg + " needs a value");
    const char* value = argv[++i];
    if (arg == "--min")
      o.min_bytes = parse_bytes(arg, value);
    else if (arg == "--max")
      o.max_bytes = parse_bytes(arg, value);
    else if (arg == "--iters")
      o.iterations = static_cast<int>(parse_int(arg, value, 1, 1000000));
    else if (arg == "--window")
      o.window = static_cast<int>(parse_int(arg, value, 1, 4096));
    else if (arg == "--timeout")
      o.timeout_s = static_cast<double>(parse_int(arg, value, 1, 3600));
    else if (arg == "--json")
      o.json = value;
    else
      usage_error("unknown option " + arg);
  }
  if (o.plugin.empty()) usage_error("give the plugin's path");
  if (o.min_bytes > o.max_bytes) usage_error("--min is above --max");
  return o;
}

// Never 0, so that a byte that did not arrive shows in a cleared buffer.
// Page-aligned, as ucx_perftest's and fi_pingpong's buffers are: the
// copies in and out of kernel sockets (rep movsb) slow down on a destination
// that is not aligned to a cache line, which malloc's large blocks are not.
template <typename T>
struct PageAligned {
  using value_type = T;
  PageAligned() = default;
  template <typename U>
  PageAligned(const PageAligned<U>&) {}
  T* allocate(size_t n) {
    void* p = std::aligned_alloc(4096, (n * sizeof(T) + 4095) / 4096 * 4096);
    if (!p) throw std::bad_alloc();
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t) { std::free(p); }
  bool operator==(const PageAligned&) const { return true; }
};
using Bytes = std::vector<uint8_t, PageAligned<uint8_t>>;

uint8_t pattern(size_t bytes, size_t i) { return static_cast<uint8_t>(1 + (i * 131 + bytes) % 255); }

void fill(Bytes& buf, size_t bytes) {
  for (size_t i = 0; i < bytes; ++i) buf[i] = pattern(bytes, i);
}

void check(const Bytes& buf, size_t bytes, size_t got, int rank, const char* what) {
  if (got != bytes) throw BenchError(format("rank %d: %s of %zu bytes reported %zu bytes", rank, what, bytes, got));
  for (size_t i = 0; i < bytes; ++i)
    if (buf[i] != pattern(bytes, i))
      throw BenchError(format("rank %d: %s of %zu bytes: byte %zu is 0x%02x, expected 0x%02x", rank, what, bytes, i,
                              buf[i], pattern(bytes, i)));
}

double seconds_since(std::chrono::steady_clock::time_point begin) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
}

int clamp_count(size_t budget, size_t per_round, int low, int high) {
  return static_cast<int>(std::clamp<size_t>(budget / std::max<size_t>(per_round, 1), low, high));
}

// Rank 0 sends, rank 1 echoes; the first round is checked byte by byte and
// not timed. Returns half the average round trip, in microseconds.
double ping_pong(Link& link, int rank, size_t bytes, const Options& o, Bytes& send,
                 Bytes& recv) {
  const int rounds = clamp_count(kLatencyBudget, bytes, 10, o.iterations);
  std::fill_n(recv.begin(), bytes, 0);
  link.barrier();
  auto begin = std::chrono::steady_clock::now();
  for (int round = -1; round < rounds; ++round) {
    if (round == 0) begin = std::chrono::steady_clock::now();
    if (rank == 0) {
      void* r = link.irecv(recv.data(), bytes, kPingTag);
      link.wait(link.isend(send.data(), bytes, kPingTag));
      size_t got = link.wait(r);
      if (round < 0) check(recv, bytes, got, rank, "the echo");
    } else {
      size_t got = link.wait(link.irecv(recv.data(), bytes, kPingTag));
      if (round < 0) check(recv, bytes, got, rank, "the ping");
      link.wait(link.isend(send.data(), bytes, kPingTag));
    }
  }
  return seconds_since(begin) / rounds / 2 * 1e6;
}

// Rank 0 keeps `window` sends in flight, rank 1 the receives (all into one
// buffer, as osu_bw does); after each window rank 1 acknowledges, so that the
// time covers delivery. The first window is not timed; the buffer is checked
// at the end. Returns GB/s; *window_out is the window used.
double stream(Link& link, int rank, size_t bytes, const Options& o, Bytes& send,
              Bytes& recv, int* window_out) {
  const int window = static_cast<int>(std::clamp<size_t>(kWindowBytes / bytes, 1, static_cast<size_t>(o.window)));
  const int rounds = clamp_count(kStreamBudget, bytes * static_cast<size_t>(window), 3, o.iterations);
  std::fill_n(recv.begin(), bytes, 0);
  uint8_t ack = 0;
  std::vector<void*> requests;
  link.barrier();
  auto begin = std::chrono::steady_clock::now();
  for (int round = -1; round < rounds; ++round) {
    if (round == 0) begin = std::chrono::steady_clock::now();
    for (int i = 0; i < window; ++i)
      requests.push_back(rank == 0 ? link.isend(send.data(), bytes, kStreamTag)
                                   : link.irecv(recv.data(), bytes, kStreamTag));
    link.wait_all(requests);
    if (rank == 0)
      link.wait(link.irecv(&ack, 1, kAckTag));
    else
      link.wait(link.isend(&ack, 1, kAckTag));
  }
  double seconds = seconds_since(begin);
  *window_out = window;
  if (rank == 1) check(recv, bytes, bytes, rank, "the last streamed message");
  return static_cast<double>(bytes) * window * rounds / seconds / 1e9;
}

std::vector<Row> run_rank(const hcomm::tcheck::PluginLibrary& plugin, int rank, int control_fd, const Options& o,
                          uint64_t* retries) {
  Link link(plugin, rank, control_fd, o.timeout_s);
  Bytes send(o.max_bytes), recv(o.max_bytes);
  std::vector<Row> rows;
  for (size_t bytes = o.min_bytes; bytes <= o.max_bytes; bytes *= 2) {
    fill(send, bytes);
    double latency = ping_pong(link, rank, bytes, o, send, recv);
    int window = 0;
    double bandwidth = stream(link, rank, bytes, o, send, recv, &window);
    rows.push_back({bytes, latency, bandwidth, window});
    if (rank == 0) {
      std::printf("%12zu %14.2f %16.4f\n", bytes, latency, bandwidth);
      std::fflush(stdout);
    }
  }
  link.barrier();  // neither closes while the other still uses the link
  *retries = link.retries();
  return rows;
}

void write_json(const Options& o, const hcomm_plugin_header_t& h, const std::vector<Row>& rows) {
  FILE* f = std::fopen(o.json.c_str(), "w");
  if (!f) throw BenchError(format("--json %s: %s", o.json.c_str(), std::strerror(errno)));
  std::fprintf(f, "{\n  \"plugin\": \"%s\",\n  \"version\": \"%s\",\n  \"path\": \"%s\",\n", h.name, h.version,
               o.plugin.c_str());
  std::fprintf(f, "  \"results\": [\n");
  for (size_t i = 0; i < rows.size(); ++i)
    std::fprintf(f, "    {\"bytes\": %zu, \"latency_us\": %.3f, \"bandwidth_gbps\": %.5f, \"window\": %d}%s\n",
                 rows[i].bytes, rows[i].latency_us, rows[i].bandwidth_gbps, rows[i].window,
                 i + 1 < rows.size() ? "," : "");
  std::fprintf(f, "  ]\n}\n");
  if (std::fclose(f) != 0) throw BenchError(format("--json %s: write failed", o.json.c_str()));
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse_options(argc, argv);
  hcomm::tcheck::PluginLibrary plugin(o.plugin);
  if (!plugin.usable()) {
    for (const std::string& p : plugin.problems()) std::fprintf(stderr, "transport_bench: %s\n", p.c_str());
    return 1;
  }
  int control[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, control) != 0) {
    std::perror("transport_bench: socketpair");
    return 1;
  }
  std::fflush(stdout);
  pid_t child = ::fork();
  if (child < 0) {
    std::perror("transport_bench: fork");
    return 1;
  }
  const int rank = child == 0 ? 1 : 0;
  ::close(control[rank == 0 ? 1 : 0]);
  if (rank == 0) {
    std::printf("# transport_bench: %s\n# %s\n", o.plugin.c_str(), plugin.summary().c_str());
    std::printf("# 2 processes; latency: half a ping-pong round trip; bandwidth: up to %d sends (256 MiB) in flight\n",
                o.window);
    std::printf("# %10s %14s %16s\n", "bytes", "latency_us", "bandwidth_GB/s");
  }
  int status = 0;
  try {
    uint64_t retries = 0;
    std::vector<Row> rows = run_rank(plugin, rank, control[rank == 0 ? 0 : 1], o, &retries);
    if (rank == 0) {
      std::printf("# null requests retried: %llu\n", static_cast<unsigned long long>(retries));
      if (!o.json.empty()) write_json(o, plugin.header(), rows);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "transport_bench: %s\n", e.what());
    status = 1;
    if (rank == 0) ::kill(child, SIGKILL);  // it may wait on this process for a while
  }
  if (rank == 1) std::_Exit(status);
  int child_status = 0;
  ::waitpid(child, &child_status, 0);
  if (status == 0 && !(WIFEXITED(child_status) && WEXITSTATUS(child_status) == 0)) {
    std::fprintf(stderr, "transport_bench: the second process failed\n");
    status = 1;
  }
  return status;
}
