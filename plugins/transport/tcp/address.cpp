#include "address.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>

#include "config.hpp"
#include "hcomm/plugin/util.hpp"
#include "wire.hpp"

namespace hcomm::tcp {

namespace {

struct LinkEstimate {
  double bandwidth_gbps;
  double latency_us;
};
constexpr LinkEstimate kSameHost{5.0, 5.0};
constexpr LinkEstimate kOtherHost{1.25, 20.0};

using InterfaceList = std::unique_ptr<ifaddrs, decltype(&::freeifaddrs)>;

InterfaceList interfaces() {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_SYSTEM, "tcp: getifaddrs failed: %s", std::strerror(errno));
  return InterfaceList(list, &::freeifaddrs);
}

bool usable_ipv4(const ifaddrs* ifa) {
  return ifa->ifa_addr && ifa->ifa_addr->sa_family == AF_INET && (ifa->ifa_flags & IFF_UP);
}

in_addr_t ipv4_of(const ifaddrs* ifa) { return reinterpret_cast<const sockaddr_in*>(ifa->ifa_addr)->sin_addr.s_addr; }

in_addr_t default_ip() {
  InterfaceList list = interfaces();
  for (const ifaddrs* ifa = list.get(); ifa; ifa = ifa->ifa_next)
    if (usable_ipv4(ifa) && !(ifa->ifa_flags & IFF_LOOPBACK)) return ipv4_of(ifa);
  return htonl(INADDR_LOOPBACK);
}

in_addr_t interface_ip(const std::string& name, const std::string& setting) {
  InterfaceList list = interfaces();
  std::string known;
  for (const ifaddrs* ifa = list.get(); ifa; ifa = ifa->ifa_next) {
    if (!usable_ipv4(ifa)) continue;
    if (name == ifa->ifa_name) return ipv4_of(ifa);
    known += std::string(known.empty() ? "" : ", ") + ifa->ifa_name;
  }
  HCOMM_PLUGIN_THROW(HCOMM_ERR_CONFIG,
                     "HCOMM_TCP_IF_ADDR=%s: no IPv4 address or up interface named '%s' (interfaces: %s); give an "
                     "IPv4 address or an interface name, optionally with :port",
                     setting.c_str(), name.c_str(), known.c_str());
}

uint16_t parse_port(const std::string& text, const std::string& setting) {
  char* end = nullptr;
  unsigned long port = std::strtoul(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || port > 65535)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_CONFIG, "HCOMM_TCP_IF_ADDR=%s: the port '%s' is not a number from 0 to 65535",
                       setting.c_str(), text.c_str());
  return static_cast<uint16_t>(port);
}

std::string first_line(const char* path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

uint64_t fnv1a(const std::string& text) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : text) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

}  // namespace

void PeerAddress::encode(void* buf, size_t* len) const {
  if (*len < sizeof(wire::AddressBlob))
    HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT, "tcp: address buffer holds %zu bytes; the tcp address needs %zu",
                       *len, sizeof(wire::AddressBlob));
  wire::AddressBlob blob{.magic = wire::kAddressMagic,
                         .version = wire::kVersion,
                         .nsocks = static_cast<uint16_t>(nsocks),
                         .ip = inet.ip,
                         .port = inet.port,
                         .reserved = 0,
                         .host_id = host_id,
                         .split_bytes = split_bytes};
  std::memcpy(buf, &blob, sizeof blob);
  *len = sizeof blob;
}

PeerAddress PeerAddress::decode(const void* buf, size_t len, const char* what) {
  wire::AddressBlob blob{};
  if (!buf || len != sizeof blob)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT, "tcp: %s is %zu bytes, a tcp address is %zu: not a tcp address",
                       what, buf ? len : 0, sizeof blob);
  std::memcpy(&blob, buf, sizeof blob);
  if (blob.magic != wire::kAddressMagic || blob.version != wire::kVersion)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT,
                       "tcp: %s is not a tcp address of wire version %u (magic 0x%08x, version %u): are all ranks "
                       "running the same HComm?",
                       what, wire::kVersion, blob.magic, blob.version);
  if (blob.nsocks < 1 || blob.nsocks > kMaxSockets)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT, "tcp: %s asks for %u sockets per peer, outside 1..%d", what,
                       blob.nsocks, kMaxSockets);
  if (blob.split_bytes < 1 || blob.split_bytes > wire::kMaxEagerBytes)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT, "tcp: %s splits messages above %llu bytes, outside 1..%llu", what,
                       static_cast<unsigned long long>(blob.split_bytes),
                       static_cast<unsigned long long>(wire::kMaxEagerBytes));
  return PeerAddress{
      .inet = {blob.ip, blob.port}, .host_id = blob.host_id, .nsocks = blob.nsocks, .split_bytes = blob.split_bytes};
}

InetAddress resolve_listen_address(const std::string& setting) {
  std::string host = setting;
  InetAddress where;
  if (size_t colon = setting.rfind(':'); colon != std::string::npos) {
    host = setting.substr(0, colon);
    where.port = parse_port(setting.substr(colon + 1), setting);
  }
  in_addr parsed{};
  if (host.empty()) {
    where.ip = default_ip();
  } else if (::inet_pton(AF_INET, host.c_str(), &parsed) == 1) {
    if (parsed.s_addr == htonl(INADDR_ANY))
      HCOMM_PLUGIN_THROW(HCOMM_ERR_CONFIG,
                         "HCOMM_TCP_IF_ADDR=%s: give the address peers should connect to, not the wildcard",
                         setting.c_str());
    where.ip = parsed.s_addr;
  } else {
    where.ip = interface_ip(host, setting);
  }
  return where;
}

uint64_t local_host_id() {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  char netns[64] = {};
  ssize_t n = ::readlink("/proc/self/ns/net", netns, sizeof netns - 1);
  if (n < 0) netns[0] = '\0';
  return fnv1a(first_line("/proc/sys/kernel/random/boot_id") + '\n' + host + '\n' + netns);
}

hcomm_link_score_t score_link(const PeerAddress& a, const PeerAddress& b) {
  bool same_host = a.host_id == b.host_id;
  const LinkEstimate& e = same_host ? kSameHost : kOtherHost;
  return hcomm_link_score_t{.reachable = same_host || (!a.inet.loopback() && !b.inet.loopback()),
                            .bandwidth_gbps = e.bandwidth_gbps,
                            .latency_us = e.latency_us};
}

}  // namespace hcomm::tcp
