#include "socket.hpp"

#include <arpa/inet.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>

#include "hcomm/plugin/util.hpp"

namespace hcomm::tcp {

namespace {

[[noreturn]] void throw_errno(const char* what, int err) {
  HCOMM_PLUGIN_THROW(HCOMM_ERR_SYSTEM, "tcp: %s failed: %s", what, std::strerror(err));
}

void set_option(int fd, int level, int name, int value, const char* what) {
  if (::setsockopt(fd, level, name, &value, sizeof value) != 0) throw_errno(what, errno);
}

uint64_t read_sysctl(const char* path) {
  std::ifstream in(path);
  uint64_t value = 0;
  return (in >> value) ? value : UINT64_MAX;
}

}  // namespace

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

sockaddr_in InetAddress::to_sockaddr() const {
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = ip;
  sa.sin_port = htons(port);
  return sa;
}

InetAddress InetAddress::from_sockaddr(const sockaddr_in& sa) { return {sa.sin_addr.s_addr, ntohs(sa.sin_port)}; }

bool InetAddress::loopback() const { return (ntohl(ip) >> 24) == 127; }

std::string InetAddress::str() const {
  char text[INET_ADDRSTRLEN] = "?";
  in_addr a{ip};
  ::inet_ntop(AF_INET, &a, text, sizeof text);
  return std::string(text) + ":" + std::to_string(port);
}

Socket Socket::stream() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) throw_errno("socket", errno);
  return Socket(Fd(fd));
}

Socket Socket::listen_on(const InetAddress& where, uint64_t sockbuf) {
  Socket s = stream();
  set_option(s.fd(), SOL_SOCKET, SO_REUSEADDR, 1, "setsockopt(SO_REUSEADDR)");
  s.set_buffers(sockbuf);
  sockaddr_in sa = where.to_sockaddr();
  if (::bind(s.fd(), reinterpret_cast<const sockaddr*>(&sa), sizeof sa) != 0)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_SYSTEM, "tcp: cannot listen on %s: %s; check HCOMM_TCP_IF_ADDR", where.str().c_str(),
                       std::strerror(errno));
  if (::listen(s.fd(), SOMAXCONN) != 0) throw_errno("listen", errno);
  return s;
}

void Socket::set_nodelay() { set_option(fd(), IPPROTO_TCP, TCP_NODELAY, 1, "setsockopt(TCP_NODELAY)"); }

void Socket::set_buffers(uint64_t bytes) {
  if (bytes == 0) return;
  set_option(fd(), SOL_SOCKET, SO_SNDBUF, static_cast<int>(bytes), "setsockopt(SO_SNDBUF)");
  set_option(fd(), SOL_SOCKET, SO_RCVBUF, static_cast<int>(bytes), "setsockopt(SO_RCVBUF)");
}

InetAddress Socket::local_address() const {
  sockaddr_in sa{};
  socklen_t len = sizeof sa;
  if (::getsockname(fd(), reinterpret_cast<sockaddr*>(&sa), &len) != 0) throw_errno("getsockname", errno);
  return InetAddress::from_sockaddr(sa);
}

int Socket::connect(const InetAddress& to) {
  sockaddr_in sa = to.to_sockaddr();
  if (::connect(fd(), reinterpret_cast<const sockaddr*>(&sa), sizeof sa) == 0) return 0;
  return errno;
}

Socket Socket::accept(InetAddress* from, int* error) {
  sockaddr_in sa{};
  socklen_t len = sizeof sa;
  int fd = ::accept4(fd_.get(), reinterpret_cast<sockaddr*>(&sa), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
  if (fd < 0) {
    *error = errno;
    return Socket();
  }
  *error = 0;
  *from = InetAddress::from_sockaddr(sa);
  return Socket(Fd(fd));
}

int Socket::take_error() {
  int err = 0;
  socklen_t len = sizeof err;
  if (::getsockopt(fd(), SOL_SOCKET, SO_ERROR, &err, &len) != 0) return errno;
  return err;
}

IoResult Socket::send(std::span<const iovec> iov) {
  msghdr msg{};
  msg.msg_iov = const_cast<iovec*>(iov.data());
  msg.msg_iovlen = iov.size();
  for (;;) {
    ssize_t n = ::sendmsg(fd(), &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n >= 0) return {.bytes = static_cast<size_t>(n)};
    if (errno != EINTR) return {.error = errno};
  }
}

IoResult Socket::recv(std::span<const iovec> iov) {
  msghdr msg{};
  msg.msg_iov = const_cast<iovec*>(iov.data());
  msg.msg_iovlen = iov.size();
  for (;;) {
    ssize_t n = ::recvmsg(fd(), &msg, MSG_DONTWAIT);
    if (n > 0) return {.bytes = static_cast<size_t>(n)};
    if (n == 0) return {.eof = true};
    if (errno != EINTR) return {.error = errno};
  }
}

uint64_t usable_sockbuf(uint64_t requested) {
  // The kernel caps SO_SNDBUF/SO_RCVBUF at these limits, and setting them
  // turns autotuning off: a capped buffer would be smaller than autotuning's.
  static const uint64_t limit =
      std::min(read_sysctl("/proc/sys/net/core/rmem_max"), read_sysctl("/proc/sys/net/core/wmem_max"));
  return requested <= limit ? requested : 0;
}

}  // namespace hcomm::tcp
