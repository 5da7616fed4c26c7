#include "side_channel.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>
#include <stdexcept>

#include "hcomm/plugin/util.hpp"

namespace hcomm::verbs {

Fd& Fd::operator=(Fd&& other) noexcept {
  if (this != &other) {
    reset();
    fd_ = other.release();
  }
  return *this;
}

void Fd::reset() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

std::string inet_str(uint32_t ip, uint16_t port) {
  char text[INET_ADDRSTRLEN] = {};
  in_addr a{.s_addr = ip};
  ::inet_ntop(AF_INET, &a, text, sizeof text);
  return plugin::format("%s:%u", text, port);
}

uint32_t choose_listen_ip(const std::string& setting) {
  if (!setting.empty()) {
    in_addr a{};
    if (::inet_pton(AF_INET, setting.c_str(), &a) != 1)
      HCOMM_PLUGIN_THROW(HCOMM_ERR_CONFIG, "HCOMM_IB_IF_ADDR='%s' is not an IPv4 address (a.b.c.d)", setting.c_str());
    return a.s_addr;
  }
  uint32_t found = htonl(INADDR_LOOPBACK);
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return found;
  for (ifaddrs* i = list; i; i = i->ifa_next) {
    if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET) continue;
    if (!(i->ifa_flags & IFF_UP) || (i->ifa_flags & IFF_LOOPBACK)) continue;
    found = reinterpret_cast<const sockaddr_in*>(i->ifa_addr)->sin_addr.s_addr;
    break;
  }
  ::freeifaddrs(list);
  return found;
}

uint64_t local_host_id() {
  std::string boot;
  std::ifstream("/proc/sys/kernel/random/boot_id") >> boot;
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  return std::hash<std::string>{}(boot + "/" + host) | 1;  // never 0
}

namespace {

Fd stream_socket() {
  Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd.valid()) HCOMM_PLUGIN_THROW(HCOMM_ERR_SYSTEM, "verbs: socket: %s", std::strerror(errno));
  return fd;
}

sockaddr_in to_sockaddr(uint32_t ip, uint16_t port) {
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = ip;
  sa.sin_port = htons(port);
  return sa;
}

}  // namespace

Fd listen_on(uint32_t ip, uint16_t* port) {
  Fd fd = stream_socket();
  int one = 1;
  ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in sa = to_sockaddr(ip, 0);
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 || ::listen(fd.get(), 128) != 0)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_SYSTEM, "verbs: cannot listen on %s: %s (set HCOMM_IB_IF_ADDR to a local address)",
                       inet_str(ip, 0).c_str(), std::strerror(errno));
  socklen_t len = sizeof sa;
  ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&sa), &len);
  *port = ntohs(sa.sin_port);
  return fd;
}

Fd connect_to(uint32_t ip, uint16_t port, int* error) {
  Fd fd = stream_socket();
  int one = 1;
  ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  sockaddr_in sa = to_sockaddr(ip, port);
  *error = ::connect(fd.get(), reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0 ? 0 : errno;
  if (*error != 0 && *error != EINPROGRESS) fd.reset();
  return fd;
}

void Channel::send(const uint8_t* data, size_t len) {
  out_.insert(out_.end(), data, data + len);
  flush();
}

void Channel::flush() {
  while (!out_.empty()) {
    ssize_t n = ::send(fd_.get(), out_.data(), out_.size(), MSG_NOSIGNAL);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOTCONN)) return;
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw std::runtime_error(plugin::format("side channel send: %s", std::strerror(errno)));
    out_.erase(out_.begin(), out_.begin() + n);
  }
}

bool Channel::fill(size_t want) {
  while (in_.size() < want) {
    uint8_t buf[256];
    ssize_t n = ::recv(fd_.get(), buf, std::min(sizeof buf, want - in_.size()), 0);
    if (n == 0) throw std::runtime_error("side channel closed by the peer");
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return false;
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw std::runtime_error(plugin::format("side channel receive: %s", std::strerror(errno)));
    in_.insert(in_.end(), buf, buf + n);
  }
  return true;
}

std::vector<uint8_t> Channel::take(size_t len) {
  std::vector<uint8_t> out(in_.begin(), in_.begin() + static_cast<std::ptrdiff_t>(len));
  in_.erase(in_.begin(), in_.begin() + static_cast<std::ptrdiff_t>(len));
  return out;
}

bool Channel::closed_by_peer(std::string* why) {
  uint8_t buf[64];
  for (;;) {
    ssize_t n = ::recv(fd_.get(), buf, sizeof buf, MSG_DONTWAIT);
    if (n > 0) {
      in_.insert(in_.end(), buf, buf + n);
      continue;
    }
    if (n == 0) {
      *why = "it closed its side channel";
      return true;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return false;
    *why = plugin::format("its side channel failed: %s", std::strerror(errno));
    return true;
  }
}

int Channel::take_error() {
  int error = 0;
  socklen_t len = sizeof error;
  if (::getsockopt(fd_.get(), SOL_SOCKET, SO_ERROR, &error, &len) != 0) return errno;
  return error;
}

}  // namespace hcomm::verbs
