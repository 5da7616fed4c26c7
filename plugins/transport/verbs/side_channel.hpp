// The side channel of a pair: one TCP socket over which the two sides prove
// the communicator's key and trade their QP identities (the handshake in
// wire.hpp), and that stays open while
// the pair lives, so that a peer's death shows at once as the socket closing
// (a dead RC peer would otherwise show only after the QP's retries ran out).
#pragma once

#include <netinet/in.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace hcomm::verbs {

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

// "a.b.c.d:port" of an IPv4 address in network order and a port in host order.
std::string inet_str(uint32_t ip, uint16_t port);

// The address HCOMM_IB_IF_ADDR names (a.b.c.d), else the first up,
// non-loopback IPv4 interface, else 127.0.0.1. Throws HCOMM_ERR_CONFIG.
uint32_t choose_listen_ip(const std::string& setting);

// Equal on two ranks that share a kernel boot and hostname.
uint64_t local_host_id();

// A non-blocking listening socket on ip (any free port); *port gets the port.
Fd listen_on(uint32_t ip, uint16_t* port);
// A non-blocking connect; *error is 0 or EINPROGRESS, else the socket is invalid.
Fd connect_to(uint32_t ip, uint16_t port, int* error);

// Fixed-size messages over a non-blocking stream socket.
class Channel {
 public:
  Channel() = default;
  explicit Channel(Fd fd) : fd_(std::move(fd)) {}

  int fd() const { return fd_.get(); }
  bool valid() const { return fd_.valid(); }
  void close() { fd_.reset(); }

  // Queues bytes and writes what the socket takes; throws std::runtime_error
  // (with the reason) when the peer is gone.
  void send(const uint8_t* data, size_t len);
  void flush();
  bool flushed() const { return out_.empty(); }
  // Reads until `want` bytes are buffered; true when they are (take them
  // with take). EOF or an error throws std::runtime_error.
  bool fill(size_t want);
  std::vector<uint8_t> take(size_t len);
  // Whatever is buffered (closed_by_peer reads ahead).
  std::vector<uint8_t> take_buffered() { return take(in_.size()); }
  // True when the peer closed or the socket failed (after reading anything
  // pending into the buffer); never blocks.
  bool closed_by_peer(std::string* why);
  // The pending error of a connecting socket (SO_ERROR).
  int take_error();

 private:
  Fd fd_;
  std::vector<uint8_t> out_;
  std::vector<uint8_t> in_;
};

}  // namespace hcomm::verbs
