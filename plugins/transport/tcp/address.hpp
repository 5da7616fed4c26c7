// What a rank publishes about itself (listening address, host identity,
// sockets per peer, split size), the choice of the listening address, and link scoring.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "hcomm/plugin/transport.h"
#include "socket.hpp"

namespace hcomm::tcp {

struct PeerAddress {
  InetAddress inet;
  uint64_t host_id = 0;
  int nsocks = 1;
  uint64_t split_bytes = 64 << 10;

  // Writes the blob into buf (capacity *len) and sets *len to its length.
  void encode(void* buf, size_t* len) const;
  // Throws HCOMM_ERR_INVALID_ARGUMENT naming `what` when the blob is not ours.
  static PeerAddress decode(const void* buf, size_t len, const char* what);
};

// The address HCOMM_TCP_IF_ADDR names: "", "a.b.c.d" or an interface name,
// each optionally followed by ":port". Throws HCOMM_ERR_CONFIG.
InetAddress resolve_listen_address(const std::string& setting);

// Equal on two ranks when they share a kernel boot, hostname and network
// namespace, that is when they share a loopback interface.
uint64_t local_host_id();

// Documented estimates, not measurements of this pair: same host (loopback)
// about 5 us and 5 GB/s; another host about 20 us and 1.25 GB/s (10 GbE).
// A loopback address cannot be reached from another host. Symmetric in its
// arguments, so both ranks of a pair agree.
hcomm_link_score_t score_link(const PeerAddress& a, const PeerAddress& b);

}  // namespace hcomm::tcp
