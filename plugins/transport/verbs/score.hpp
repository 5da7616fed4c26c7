// Link scores from two address blobs: the same answer on both sides of a pair.
#pragma once

#include <cstdint>

#include "hcomm/plugin/transport.h"
#include "wire.hpp"

namespace hcomm::verbs {

// Typical one-way small-message latency of an RC queue pair across a switch.
inline constexpr double kLatencyUs = 2.0;

// GB/s of a link rate in Mb/s; a nominal 100 Gb/s when the rate is unknown.
double link_bandwidth_gbps(uint32_t rate_mbps);

// Unreachable when either side has no usable port, the link layers differ,
// or two InfiniBand ports are on different subnets (GID prefix); otherwise
// the slower port's rate and kLatencyUs.
hcomm_link_score_t score_link(const Address& a, const Address& b);

}  // namespace hcomm::verbs
