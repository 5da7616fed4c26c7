// The few socket tools the rendezvous needs: an owned descriptor, deadlines
// for poll(), IPv4 endpoints, a listener and a connect that retries until its
// deadline. Every socket here is non-blocking and close-on-exec.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

namespace hcomm::bootstrap {

using Clock = std::chrono::steady_clock;

// A point in time after which a wait gives up.
class Deadline {
 public:
  explicit Deadline(Clock::time_point when) : when_(when) {}
  static Deadline after(double seconds);
  static Deadline after(Clock::duration duration) { return Deadline(Clock::now() + duration); }

  Clock::time_point when() const { return when_; }
  bool expired() const { return Clock::now() >= when_; }
  // Milliseconds left, rounded up, as poll() takes them (0 once expired).
  int poll_ms() const;

 private:
  Clock::time_point when_;
};

// Owns a file descriptor; closes it when dropped.
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
  explicit operator bool() const { return fd_ >= 0; }
  int release();
  void reset();

 private:
  int fd_ = -1;
};

// An IPv4 address (network byte order) and a port (host byte order).
struct Endpoint {
  uint32_t ip = 0;
  uint16_t port = 0;

  std::string to_string() const;  // "10.0.0.1:4242"
};

// Splits "host:port" (port 1..65535); false when the text has another form.
bool split_host_port(const std::string& text, std::string* host, uint16_t* port);
// The address of an IPv4 literal ("10.0.0.1"); false for anything else.
bool parse_ipv4(const std::string& text, uint32_t* ip);
// Resolves an IPv4 literal or host name; false when it cannot.
bool resolve_ipv4(const std::string& host, uint32_t* ip);
// The first non-loopback IPv4 address of an interface that is up, else 127.0.0.1.
uint32_t first_non_loopback_ipv4();

// A listening socket on `at` (port 0: an ephemeral one) with SO_REUSEADDR;
// throws HCOMM_ERR_SYSTEM naming the address.
Fd listen_on(const Endpoint& at);
// Takes over `fd` when it is a TCP socket listening on `at` (a launcher bound
// it before starting this process), made non-blocking and close-on-exec; no
// descriptor, and `fd` left alone, when it is anything else.
Fd adopt_listener(int fd, const Endpoint& at);
// Accepts one waiting connection (non-blocking, close-on-exec, no Nagle
// delay); no descriptor when none waits or accept failed (errno says which).
Fd accept_connection(int listener, Endpoint* peer);
Endpoint local_endpoint(int fd);
Endpoint peer_endpoint(int fd);

// Connects to `to`, retrying with backoff while the attempt fails (the
// listener may start later) until `deadline`; then returns no descriptor and
// the errno of the last attempt in *last_error.
Fd connect_with_retry(const Endpoint& to, const Deadline& deadline, int* last_error);

// Non-blocking transfers: the bytes moved (0 when the call would block), or
// -1 when the connection is closed or broken.
ptrdiff_t send_some(int fd, const void* data, size_t len);
ptrdiff_t recv_some(int fd, void* data, size_t len);

// Reads and drops what the socket holds now; false once the peer has closed.
// Closing a socket with unread input resets the connection, which can
// destroy data still in flight to the peer; draining first avoids that.
bool discard_input(int fd);

enum class IoStatus { kDone, kTimedOut, kClosed };
// Sends all of `data`, waiting for room until `deadline`.
IoStatus send_all(int fd, const void* data, size_t len, const Deadline& deadline);
// Waits until `fd` has one of `events` or the deadline passes; false on timeout.
bool wait_for(int fd, short events, const Deadline& deadline);

}  // namespace hcomm::bootstrap
