// What a rank publishes about itself (its UCX worker address, which kinds of
// UCX transport it has, host and process identity), and link scoring.
// Nothing here calls UCX.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "hcomm/plugin/transport.h"

namespace hcomm::ucx {

// Kinds of UCX transport a context has (bits of PeerAddress::reach).
enum : uint32_t {
  kReachSharedMemory = 1u << 0,  // posix, sysv or xpmem: peers of this host
  kReachTcpLoopback = 1u << 1,   // tcp on a loopback device: peers of this host
  kReachTcpNetwork = 1u << 2,    // tcp on another device: any host
  kReachRdma = 1u << 3,          // rc, ud, dc (InfiniBand, RoCE): any host
};

// The kReach* bits of the resources that ucp_context_print_info lists, one
// "transport/device" per line.
uint32_t reach_of_resources(const std::string& listing);

struct PeerAddress {
  uint32_t reach = 0;
  uint64_t host_id = 0;  // equal for ranks that share a kernel, hostname and network namespace
  uint64_t pid_ns = 0;   // the pid namespace, so that `pid` means the same process to both
  pid_t pid = 0;
  std::vector<uint8_t> worker;  // the packed ucp worker address

  // The blob's fixed part; the worker address follows it.
  static constexpr size_t kHeaderBytes = 32;

  // Writes the blob into buf (capacity *len) and sets *len to its length.
  void encode(void* buf, size_t* len) const;
  // Throws HCOMM_ERR_INVALID_ARGUMENT naming `what` when the blob is not ours.
  static PeerAddress decode(const void* buf, size_t len, const char* what);

  static PeerAddress local(uint32_t reach, std::vector<uint8_t> worker);
  // The peer's pid names a live process that this one can watch.
  bool same_process_space(const PeerAddress& other) const { return host_id == other.host_id && pid_ns == other.pid_ns; }
};

// Documented estimates by the kind of transport both ranks have, not
// measurements of this pair (README.md). Symmetric, so both ranks agree.
hcomm_link_score_t score_link(const PeerAddress& a, const PeerAddress& b);

}  // namespace hcomm::ucx
