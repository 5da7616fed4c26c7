#include "address.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <sstream>

#include "hcomm/plugin/util.hpp"

namespace hcomm::ucx {

namespace {

constexpr uint32_t kMagic = 0x48554358;  // "HUCX"
constexpr uint16_t kVersion = 1;

// The blob's fixed part, in host byte order (peers of a communicator share
// the architecture, as they share the plugin).
struct BlobHeader {
  uint32_t magic;
  uint16_t version;
  uint16_t worker_len;
  uint32_t reach;
  int32_t pid;
  uint64_t host_id;
  uint64_t pid_ns;
};
static_assert(sizeof(BlobHeader) == PeerAddress::kHeaderBytes);

struct LinkEstimate {
  double bandwidth_gbps;
  double latency_us;
};
// From ucx_perftest tag_bw (1 MiB) and tag_lat (8 B); the shared-memory
// latency adds the plugin's own matching and progress to UCX's. The
// shared-memory figure equals the shm transport's estimate, so the core's
// tie-break (priority, below shm and tcp) keeps the native transports.
constexpr LinkEstimate kSharedMemory{10.0, 0.5};
constexpr LinkEstimate kTcpLoopback{4.9, 6.0};
// Assumed, not measured: a typical 100 Gb/s InfiniBand link,
// and a 10 GbE link as the tcp transport assumes.
constexpr LinkEstimate kRdma{12.0, 2.0};
constexpr LinkEstimate kTcpNetwork{1.25, 20.0};

uint64_t fnv1a(const std::string& text) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : text) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

std::string first_line(const char* path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

std::string link_target(const char* path) {
  char target[128] = {};
  ssize_t n = ::readlink(path, target, sizeof target - 1);
  return n < 0 ? std::string() : std::string(target, static_cast<size_t>(n));
}

hcomm_link_score_t reachable(const LinkEstimate& e) {
  return hcomm_link_score_t{.reachable = 1, .bandwidth_gbps = e.bandwidth_gbps, .latency_us = e.latency_us};
}

}  // namespace

uint32_t reach_of_resources(const std::string& listing) {
  uint32_t reach = 0;
  std::istringstream lines(listing);
  for (std::string line; std::getline(lines, line);) {
    // "#      resource 1  :  md 1  dev 1  flags -- posix/memory"
    if (line.find("resource") == std::string::npos) continue;
    size_t slash = line.rfind('/');
    size_t space = line.rfind(' ', slash);
    if (slash == std::string::npos || space == std::string::npos) continue;
    std::string tl = line.substr(space + 1, slash - space - 1);
    std::string device = line.substr(slash + 1);
    if (tl == "posix" || tl == "sysv" || tl == "xpmem") reach |= kReachSharedMemory;
    if (tl == "tcp") reach |= device.starts_with("lo") ? kReachTcpLoopback : kReachTcpNetwork;
    if (tl.starts_with("rc") || tl.starts_with("ud") || tl.starts_with("dc")) reach |= kReachRdma;
  }
  return reach;
}

PeerAddress PeerAddress::local(uint32_t reach, std::vector<uint8_t> worker) {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  struct stat ns {};
  return PeerAddress{
      .reach = reach,
      .host_id =
          fnv1a(first_line("/proc/sys/kernel/random/boot_id") + '\n' + host + '\n' + link_target("/proc/self/ns/net")),
      .pid_ns = ::stat("/proc/self/ns/pid", &ns) == 0 ? static_cast<uint64_t>(ns.st_ino) : 0,
      .pid = ::getpid(),
      .worker = std::move(worker),
  };
}

void PeerAddress::encode(void* buf, size_t* len) const {
  size_t need = kHeaderBytes + worker.size();
  if (*len < need)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT, "ucx: address buffer holds %zu bytes; this rank's address needs %zu",
                       *len, need);
  BlobHeader header{.magic = kMagic,
                    .version = kVersion,
                    .worker_len = static_cast<uint16_t>(worker.size()),
                    .reach = reach,
                    .pid = pid,
                    .host_id = host_id,
                    .pid_ns = pid_ns};
  std::memcpy(buf, &header, sizeof header);
  std::memcpy(static_cast<uint8_t*>(buf) + sizeof header, worker.data(), worker.size());
  *len = need;
}

PeerAddress PeerAddress::decode(const void* buf, size_t len, const char* what) {
  BlobHeader header{};
  if (!buf || len < sizeof header)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT, "ucx: %s is %zu bytes, shorter than a ucx address (%zu or more)",
                       what, buf ? len : 0, sizeof header);
  std::memcpy(&header, buf, sizeof header);
  if (header.magic != kMagic || header.version != kVersion)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT,
                       "ucx: %s is not a ucx address of version %u (magic 0x%08x, version %u): are all ranks running "
                       "the same HComm?",
                       what, kVersion, header.magic, header.version);
  if (len != sizeof header + header.worker_len || header.worker_len == 0)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT, "ucx: %s is %zu bytes but announces a worker address of %u bytes",
                       what, len, header.worker_len);
  const uint8_t* worker = static_cast<const uint8_t*>(buf) + sizeof header;
  return PeerAddress{.reach = header.reach,
                     .host_id = header.host_id,
                     .pid_ns = header.pid_ns,
                     .pid = header.pid,
                     .worker = std::vector<uint8_t>(worker, worker + header.worker_len)};
}

hcomm_link_score_t score_link(const PeerAddress& a, const PeerAddress& b) {
  uint32_t both = a.reach & b.reach;
  if (a.host_id == b.host_id) {
    if (both & kReachSharedMemory) return reachable(kSharedMemory);
    if (both & kReachRdma) return reachable(kRdma);
    if (both & (kReachTcpLoopback | kReachTcpNetwork)) return reachable(kTcpLoopback);
  } else {
    if (both & kReachRdma) return reachable(kRdma);
    if (both & kReachTcpNetwork) return reachable(kTcpNetwork);
  }
  return hcomm_link_score_t{.reachable = 0, .bandwidth_gbps = 0.0, .latency_us = 0.0};
}

}  // namespace hcomm::ucx
