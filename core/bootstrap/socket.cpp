#include "core/bootstrap/socket.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <thread>

#include "core/common/error.hpp"

namespace hcomm::bootstrap {

namespace {

sockaddr_in to_sockaddr(const Endpoint& e) {
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = e.ip;
  sa.sin_port = htons(e.port);
  return sa;
}

Endpoint from_sockaddr(const sockaddr_in& sa) { return Endpoint{sa.sin_addr.s_addr, ntohs(sa.sin_port)}; }

Fd new_tcp_socket() {
  Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd) HCOMM_THROW(HCOMM_ERR_SYSTEM, "bootstrap: socket() failed: %s", std::strerror(errno));
  return fd;
}

// Small control messages must not wait for Nagle's timer.
void set_nodelay(int fd) {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

// One non-blocking connect attempt: 0 on success, else the errno that explains the failure.
int try_connect(int fd, const Endpoint& to, const Deadline& deadline) {
  sockaddr_in sa = to_sockaddr(to);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&sa), sizeof sa) == 0) return 0;
  if (errno != EINPROGRESS) return errno;
  if (!wait_for(fd, POLLOUT, deadline)) return ETIMEDOUT;
  int err = 0;
  socklen_t len = sizeof err;
  ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
  return err;
}

}  // namespace

Deadline Deadline::after(double seconds) {
  return after(std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds)));
}

int Deadline::poll_ms() const {
  auto left = when_ - Clock::now();
  if (left <= Clock::duration::zero()) return 0;
  auto ms = std::chrono::ceil<std::chrono::milliseconds>(left).count();
  return static_cast<int>(std::min<decltype(ms)>(ms, 1 << 30));
}

Fd& Fd::operator=(Fd&& other) noexcept {
  if (this != &other) {
    reset();
    fd_ = other.release();
  }
  return *this;
}

int Fd::release() {
  int fd = fd_;
  fd_ = -1;
  return fd;
}

void Fd::reset() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

std::string Endpoint::to_string() const {
  char text[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, &ip, text, sizeof text);
  return std::string(text) + ":" + std::to_string(port);
}

bool split_host_port(const std::string& text, std::string* host, uint16_t* port) {
  size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) return false;
  std::string digits = text.substr(colon + 1);
  if (digits.size() > 5 || !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return false;
  long value = std::stol(digits);
  if (value < 1 || value > 65535) return false;
  *host = text.substr(0, colon);
  *port = static_cast<uint16_t>(value);
  return true;
}

bool parse_ipv4(const std::string& text, uint32_t* ip) {
  in_addr addr{};
  if (::inet_pton(AF_INET, text.c_str(), &addr) != 1) return false;
  *ip = addr.s_addr;
  return true;
}

bool resolve_ipv4(const std::string& host, uint32_t* ip) {
  if (parse_ipv4(host, ip)) return true;
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), nullptr, &hints, &found) != 0 || !found) return false;
  *ip = reinterpret_cast<const sockaddr_in*>(found->ai_addr)->sin_addr.s_addr;
  ::freeaddrinfo(found);
  return true;
}

uint32_t first_non_loopback_ipv4() {
  uint32_t chosen = htonl(INADDR_LOOPBACK);
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return chosen;
  for (const ifaddrs* i = list; i; i = i->ifa_next) {
    if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET) continue;
    if (!(i->ifa_flags & IFF_UP) || (i->ifa_flags & IFF_LOOPBACK)) continue;
    chosen = reinterpret_cast<const sockaddr_in*>(i->ifa_addr)->sin_addr.s_addr;
    break;
  }
  ::freeifaddrs(list);
  return chosen;
}

Fd listen_on(const Endpoint& at) {
  Fd fd = new_tcp_socket();
  int one = 1;
  ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in sa = to_sockaddr(at);
  if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&sa), sizeof sa) != 0)
    HCOMM_THROW(HCOMM_ERR_SYSTEM, "bootstrap: cannot listen on %s: bind failed: %s (is another job using this port?)",
                at.to_string().c_str(), std::strerror(errno));
  if (::listen(fd.get(), SOMAXCONN) != 0)
    HCOMM_THROW(HCOMM_ERR_SYSTEM, "bootstrap: cannot listen on %s: %s", at.to_string().c_str(), std::strerror(errno));
  return fd;
}

Fd adopt_listener(int fd, const Endpoint& at) {
  int listening = 0, type = 0;
  socklen_t len = sizeof listening;
  if (::getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) != 0 || !listening) return Fd();
  len = sizeof type;
  if (::getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_STREAM) return Fd();
  sockaddr_in sa{};
  len = sizeof sa;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len) != 0 || sa.sin_family != AF_INET) return Fd();
  const Endpoint bound = from_sockaddr(sa);
  if (bound.port != at.port || (bound.ip != at.ip && bound.ip != htonl(INADDR_ANY))) return Fd();
  if (::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK) != 0 || ::fcntl(fd, F_SETFD, FD_CLOEXEC) != 0)
    return Fd();
  return Fd(fd);
}

Fd accept_connection(int listener, Endpoint* peer) {
  sockaddr_in sa{};
  socklen_t len = sizeof sa;
  Fd fd(::accept4(listener, reinterpret_cast<sockaddr*>(&sa), &len, SOCK_NONBLOCK | SOCK_CLOEXEC));
  if (fd) {
    set_nodelay(fd.get());
    *peer = from_sockaddr(sa);
  }
  return fd;
}

Endpoint local_endpoint(int fd) {
  sockaddr_in sa{};
  socklen_t len = sizeof sa;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len);
  return from_sockaddr(sa);
}

Endpoint peer_endpoint(int fd) {
  sockaddr_in sa{};
  socklen_t len = sizeof sa;
  ::getpeername(fd, reinterpret_cast<sockaddr*>(&sa), &len);
  return from_sockaddr(sa);
}

Fd connect_with_retry(const Endpoint& to, const Deadline& deadline, int* last_error) {
  auto backoff = std::chrono::milliseconds(10);
  constexpr auto kMaxBackoff = std::chrono::milliseconds(500);
  do {
    Fd fd = new_tcp_socket();
    *last_error = try_connect(fd.get(), to, deadline);
    if (*last_error == 0) {
      set_nodelay(fd.get());
      return fd;
    }
    auto wake = std::min(Clock::now() + backoff, deadline.when());
    std::this_thread::sleep_until(wake);
    backoff = std::min(backoff * 2, kMaxBackoff);
  } while (!deadline.expired());
  return Fd();
}

ptrdiff_t send_some(int fd, const void* data, size_t len) {
  for (;;) {
    ssize_t n = ::send(fd, data, len, MSG_NOSIGNAL);
    if (n >= 0) return n;
    if (errno == EINTR) continue;
    return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
  }
}

ptrdiff_t recv_some(int fd, void* data, size_t len) {
  for (;;) {
    ssize_t n = ::recv(fd, data, len, 0);
    if (n > 0) return n;
    if (n == 0) return -1;
    if (errno == EINTR) continue;
    return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
  }
}

bool discard_input(int fd) {
  uint8_t sink[4096];
  ptrdiff_t n;
  while ((n = recv_some(fd, sink, sizeof sink)) > 0) {
  }
  return n == 0;
}

IoStatus send_all(int fd, const void* data, size_t len, const Deadline& deadline) {
  auto* bytes = static_cast<const uint8_t*>(data);
  while (len > 0) {
    ptrdiff_t n = send_some(fd, bytes, len);
    if (n < 0) return IoStatus::kClosed;
    bytes += n;
    len -= static_cast<size_t>(n);
    if (len > 0 && n == 0 && !wait_for(fd, POLLOUT, deadline)) return IoStatus::kTimedOut;
  }
  return IoStatus::kDone;
}

bool wait_for(int fd, short events, const Deadline& deadline) {
  for (;;) {
    pollfd p{fd, events, 0};
    int n = ::poll(&p, 1, deadline.poll_ms());
    if (n == 0) return false;
    // An error other than EINTR is left for the caller's next transfer to report.
    if (n > 0 || errno != EINTR) return true;
  }
}

}  // namespace hcomm::bootstrap
