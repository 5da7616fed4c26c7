#include "address.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <rdma/fabric.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>

#include "hcomm/plugin/util.hpp"

namespace hcomm::ofi {

namespace {

constexpr uint32_t kMagic = 0x4F464941;  // "OFIA"
constexpr uint16_t kVersion = 1;
constexpr uint32_t kHostLocal = 1u << 0;
constexpr uint32_t kLoopback = 1u << 1;

// The blob: this header, then name_len bytes of the provider's endpoint name.
struct WireAddress {
  uint32_t magic;
  uint16_t version;
  uint16_t name_len;
  uint64_t host_id;
  uint64_t provider_id;
  uint64_t link_bps;
  int32_t pid;
  uint32_t flags;
};

constexpr double kHostLocalGbps = 8.0, kHostLocalUs = 1.0;
constexpr double kLoopbackGbps = 4.5, kLoopbackUs = 7.0;
constexpr double kUnknownLinkGbps = 1.25, kRemoteUs = 20.0;

std::string first_line(const char* path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

}  // namespace

size_t Address::overhead() { return sizeof(WireAddress); }

void Address::encode(void* buf, size_t* len) const {
  size_t need = sizeof(WireAddress) + name.size();
  if (*len < need || name.size() > UINT16_MAX)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT, "ofi: address: the buffer holds %zu bytes, the address needs %zu",
                       *len, need);
  WireAddress w{.magic = kMagic,
                .version = kVersion,
                .name_len = static_cast<uint16_t>(name.size()),
                .host_id = host_id,
                .provider_id = provider_id,
                .link_bps = link_bps,
                .pid = static_cast<int32_t>(pid),
                .flags = (host_local ? kHostLocal : 0) | (loopback ? kLoopback : 0)};
  std::memcpy(buf, &w, sizeof w);
  if (!name.empty()) std::memcpy(static_cast<uint8_t*>(buf) + sizeof w, name.data(), name.size());
  *len = need;
}

Address Address::decode(const void* buf, size_t len, const char* what) {
  WireAddress w{};
  if (!buf || len < sizeof w)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT, "ofi: %s: %zu bytes are no ofi address (at least %zu expected)",
                       what, len, sizeof w);
  std::memcpy(&w, buf, sizeof w);
  if (w.magic != kMagic || w.version != kVersion || len != sizeof w + w.name_len)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT,
                       "ofi: %s: not an ofi address of version %u (magic 0x%x, version %u, %zu bytes for a %u-byte name)",
                       what, kVersion, w.magic, w.version, len, w.name_len);
  const uint8_t* name = static_cast<const uint8_t*>(buf) + sizeof w;
  return Address{.host_id = w.host_id,
                 .provider_id = w.provider_id,
                 .link_bps = w.link_bps,
                 .pid = w.pid,
                 .host_local = (w.flags & kHostLocal) != 0,
                 .loopback = (w.flags & kLoopback) != 0,
                 .name = std::vector<uint8_t>(name, name + w.name_len)};
}

uint64_t fnv1a(const void* data, size_t len, uint64_t hash) {
  const auto* bytes = static_cast<const uint8_t*>(data);
  for (size_t i = 0; i < len; ++i) hash = (hash ^ bytes[i]) * 1099511628211ull;
  return hash;
}

uint64_t local_host_id() {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  char netns[64] = {};
  ssize_t n = ::readlink("/proc/self/ns/net", netns, sizeof netns - 1);
  if (n < 0) netns[0] = '\0';
  std::string id = first_line("/proc/sys/kernel/random/boot_id") + '\n' + host + '\n' + netns;
  return fnv1a(id.data(), id.size());
}

bool is_loopback_name(uint32_t addr_format, const std::vector<uint8_t>& name) {
  if (addr_format == FI_SOCKADDR_IN && name.size() >= sizeof(sockaddr_in)) {
    sockaddr_in in{};
    std::memcpy(&in, name.data(), sizeof in);
    return (ntohl(in.sin_addr.s_addr) >> 24) == 127;
  }
  if (addr_format == FI_SOCKADDR_IN6 && name.size() >= sizeof(sockaddr_in6)) {
    sockaddr_in6 in6{};
    std::memcpy(&in6, name.data(), sizeof in6);
    return IN6_IS_ADDR_LOOPBACK(&in6.sin6_addr);
  }
  return false;
}

hcomm_link_score_t score_link(const Address& a, const Address& b) {
  bool same_host = a.host_id == b.host_id;
  if (a.provider_id != b.provider_id || a.host_local != b.host_local) return {.reachable = 0};
  if (a.host_local) {
    if (!same_host) return {.reachable = 0};
    return {.reachable = 1, .bandwidth_gbps = kHostLocalGbps, .latency_us = kHostLocalUs};
  }
  if (same_host) return {.reachable = 1, .bandwidth_gbps = kLoopbackGbps, .latency_us = kLoopbackUs};
  if (a.loopback || b.loopback) return {.reachable = 0};
  double gbps = a.link_bps && b.link_bps ? static_cast<double>(std::min(a.link_bps, b.link_bps)) / 8e9
                                         : kUnknownLinkGbps;
  return {.reachable = 1, .bandwidth_gbps = gbps, .latency_us = kRemoteUs};
}

}  // namespace hcomm::ofi
