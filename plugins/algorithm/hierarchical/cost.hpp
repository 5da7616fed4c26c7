// The parts the hierarchical cost estimates are made of, in the link models'
// terms (microseconds): alpha per message, beta per byte moved, gamma per
// byte reduced, over the view's intra-host and inter-host links.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "common/schedule_writer.hpp"
#include "hcomm/plugin/algorithm.h"

namespace hcomm::algo {

// What an estimate needs of the hosts.
struct HostShape {
  int hosts;
  int min_local;  // ranks of the smallest host: the rails
  int max_local;  // ranks of the largest host
};

// The shape of the view's hosts; nullopt on one host, with one rank per host
// (a rail, as the parts see it) or a node_of that does not describe hosts,
// where a hierarchical algorithm has nothing to gain.
std::optional<HostShape> host_shape(const hcomm_comm_view_t& view);

// The cost of a call the hierarchical algorithms leave to the flat ones.
double declined_cost();

// members - 1 ring steps of `messages` messages carrying `bytes` in all.
double ring_level(int members, double messages, double bytes, double alpha, double per_byte);

// A binomial tree over `members` of a message in `chunks` chunks: the root
// sends each chunk ceil(log2 members) times.
double tree_level(int members, double bytes, uint32_t chunks, double alpha, double per_byte);

}  // namespace hcomm::algo
