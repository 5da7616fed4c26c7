// What a rank publishes about its endpoint (the provider's name for it, the
// host and process it lives in, its link speed) and how a pair is scored.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "hcomm/plugin/transport.h"

namespace hcomm::ofi {

struct Address {
  uint64_t host_id = 0;      // equal on ranks that share a kernel, hostname and network namespace
  uint64_t provider_id = 0;  // hash of the provider's name: ranks of one pair must use the same
  uint64_t link_bps = 0;     // the NIC's link speed from fi_info, 0 when the provider gives none
  pid_t pid = 0;
  bool host_local = false;  // the provider reaches only this host (shm)
  bool loopback = false;    // the endpoint's IP address is a loopback one
  std::vector<uint8_t> name;  // fi_getname

  // Writes the blob into buf (capacity *len) and sets *len to its length.
  void encode(void* buf, size_t* len) const;
  // Throws HCOMM_ERR_INVALID_ARGUMENT naming `what` when the blob is not ours.
  static Address decode(const void* buf, size_t len, const char* what);
  // Bytes the blob needs besides the name.
  static size_t overhead();
};

uint64_t fnv1a(const void* data, size_t len, uint64_t hash = 14695981039346656037ull);
uint64_t local_host_id();
// True when an endpoint name in `addr_format` (an fi_info field) is an IPv4 or
// IPv6 loopback address.
bool is_loopback_name(uint32_t addr_format, const std::vector<uint8_t>& name);

// Documented estimates, symmetric in the two blobs so both ranks agree:
// host-local provider about 8 GB/s and 1 us; a network provider within one
// host about 4.5 GB/s and 7 us (loopback); across hosts the slower NIC's link
// speed (or 1.25 GB/s, 10 GbE, when unknown) and 20 us.
hcomm_link_score_t score_link(const Address& a, const Address& b);

}  // namespace hcomm::ofi
