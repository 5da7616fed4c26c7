// File descriptors and non-blocking TCP sockets: RAII ownership and the few
// socket calls the transport makes, with errors as errno values (the callers
// decide what is fatal) or typed exceptions where nothing can be retried.
#pragma once

#include <netinet/in.h>
#include <sys/uio.h>

#include <cerrno>
#include <cstdint>
#include <span>
#include <string>
#include <utility>

namespace hcomm::tcp {

// Owns one file descriptor.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(other.release()) {}
  Fd& operator=(Fd&& other) noexcept;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void reset();

 private:
  int fd_ = -1;
};

// An IPv4 address and port.
struct InetAddress {
  in_addr_t ip = 0;   // network byte order
  uint16_t port = 0;  // host byte order

  sockaddr_in to_sockaddr() const;
  static InetAddress from_sockaddr(const sockaddr_in& sa);
  bool loopback() const;
  std::string str() const;  // "a.b.c.d:port"
};

// What one non-blocking transfer did.
struct IoResult {
  size_t bytes = 0;
  int error = 0;     // errno when the call failed (EAGAIN: it would block)
  bool eof = false;  // receive: the peer closed its side

  bool would_block() const { return error == EAGAIN || error == EWOULDBLOCK; }
};

// A non-blocking, close-on-exec TCP socket.
class Socket {
 public:
  Socket() = default;
  explicit Socket(Fd fd) : fd_(std::move(fd)) {}

  // Throws HCOMM_ERR_SYSTEM when the kernel refuses a socket.
  static Socket stream();
  // A listening socket bound to `where` (port 0: any free port); the buffer
  // size is set here so that accepted sockets inherit it.
  static Socket listen_on(const InetAddress& where, uint64_t sockbuf);

  int fd() const { return fd_.get(); }
  bool valid() const { return fd_.valid(); }
  void reset() { fd_.reset(); }

  void set_nodelay();
  // Send and receive buffers; 0 keeps the kernel's autotuning.
  void set_buffers(uint64_t bytes);
  InetAddress local_address() const;

  // 0 when connected at once, EINPROGRESS while connecting, else the errno.
  int connect(const InetAddress& to);
  // The next pending connection, or an invalid socket with *error set (EAGAIN: none).
  Socket accept(InetAddress* from, int* error);
  // The pending error of the socket (SO_ERROR), cleared by reading it.
  int take_error();

  IoResult send(std::span<const iovec> iov);  // never raises SIGPIPE
  IoResult recv(std::span<const iovec> iov);

 private:
  Fd fd_;
};

// The socket buffer size to ask for: `requested`, or 0 (keep autotuning) when
// the kernel would silently cap it below what autotuning reaches.
uint64_t usable_sockbuf(uint64_t requested);

}  // namespace hcomm::tcp
