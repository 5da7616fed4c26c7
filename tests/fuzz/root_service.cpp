// The rendezvous service (core/bootstrap/root_service.cpp) serving one
// client that sends what the input says, over a real connection: a hello,
// then (when the service challenged it) the proof of the job's secret or
// bytes in its place, then frames. Each input gets a fresh one-rank service
// and waits until it has ended (a refused client leaves it waiting for its
// rank until its timeout, kept short); none may crash or hang.
#include "core/bootstrap/root_service.hpp"

#include <fuzzer/FuzzedDataProvider.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "core/bootstrap/socket.hpp"
#include "core/bootstrap/wire.hpp"

using namespace hcomm::bootstrap;

namespace {

constexpr Secret kSecret{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

Fd connect_to(uint16_t port) {
  Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  // Every read waits at most this long: a service that neither answers nor closes is a hang.
  timeval limit{.tv_sec = 10, .tv_usec = 0};
  ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  sockaddr_in to{.sin_family = AF_INET, .sin_port = htons(port), .sin_addr = {htonl(INADDR_LOOPBACK)}, .sin_zero = {}};
  if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&to), sizeof to) != 0) std::abort();
  return fd;
}

void send_bytes(int fd, const void* data, size_t len) {
  // A service that closed early makes this fail; what follows then reads the end.
  static_cast<void>(::send(fd, data, len, MSG_NOSIGNAL));
}

// Up to `len` bytes; 0 at the end of the stream.
size_t recv_some_bytes(int fd, void* data, size_t len) {
  for (;;) {
    ssize_t n = ::recv(fd, data, len, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) std::abort();  // the service hangs
    return n < 0 ? 0 : static_cast<size_t>(n);
  }
}

// Reads exactly `len` bytes; false at the end of the stream.
bool recv_exactly(int fd, void* data, size_t len) {
  auto* at = static_cast<uint8_t*>(data);
  while (len > 0) {
    const size_t n = recv_some_bytes(fd, at, len);
    if (n == 0) return false;
    at += n;
    len -= n;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider input(data, size);
  Fd listener = listen_on(Endpoint{.ip = htonl(INADDR_LOOPBACK), .port = 0});
  const uint16_t port = local_endpoint(listener.get()).port;
  start_root_service(std::move(listener),
                     RootOptions{.secret = kSecret, .nranks = 1, .timeout_s = 0.1, .address = "fuzz"});
  Fd client = connect_to(port);

  Hello hello{};
  const std::vector<uint8_t> hello_bytes = input.ConsumeBytes<uint8_t>(sizeof hello);
  if (!hello_bytes.empty()) std::memcpy(&hello, hello_bytes.data(), hello_bytes.size());
  send_bytes(client.get(), &hello, hello_bytes.size());
  FrameHeader header{};
  Challenge challenge{};
  if (hello_bytes.size() == sizeof hello && recv_exactly(client.get(), &header, sizeof header) &&
      header.type == static_cast<uint32_t>(FrameType::kChallenge) && header.length == sizeof challenge &&
      recv_exactly(client.get(), &challenge, sizeof challenge)) {
    Proof proof{};
    if (input.ConsumeBool()) {
      if (!rank_proof(kSecret, hello, challenge.nonce, &proof)) std::abort();
    } else {
      const std::vector<uint8_t> forged = input.ConsumeBytes<uint8_t>(proof.size());
      std::copy(forged.begin(), forged.end(), proof.begin());
    }
    send_bytes(client.get(), proof.data(), proof.size());
    while (input.remaining_bytes() > 0) {
      const std::vector<uint8_t> piece = input.ConsumeBytes<uint8_t>(input.ConsumeIntegralInRange<size_t>(1, 256));
      send_bytes(client.get(), piece.data(), piece.size());
    }
  }
  // The end of the client: the service tells what it thinks of it, closes and ends.
  ::shutdown(client.get(), SHUT_WR);
  uint8_t sink[4096];
  while (recv_some_bytes(client.get(), sink, sizeof sink) > 0) {
  }
  while (root_service_runs_here(port, kSecret)) std::this_thread::sleep_for(std::chrono::microseconds(50));
  return 0;
}
