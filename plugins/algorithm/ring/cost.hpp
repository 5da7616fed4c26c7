// The parts the ring plugin's cost estimates are made of, in the link
// model's terms (microseconds): alpha per message, beta per byte moved,
// gamma per byte reduced or copied.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/schedule_writer.hpp"
#include "hcomm/plugin/algorithm.h"
#include "hcomm/plugin/layout.hpp"

namespace hcomm::algo {

// A lone rank's schedule: one copy of `bytes`, none in place.
double lone_rank_cost(const hcomm_coll_args_t& args, uint64_t bytes, const hcomm_link_model_t& link);

// n - 1 steps around the ring, each block forwarded as it arrives: every
// link carries every block but one, so the busiest carries all but the
// smallest, at `per_byte` (beta, plus gamma where each hop reduces).
double ring_pass_cost(const plugin::BlockLayout& blocks, int nranks, double alpha, double per_byte);

// k chunks of bytes/k down a chain of n ranks: the last chunk leaves the
// head after k chunk times and needs n - 2 more hops, (n + k - 2) chunk
// times of alpha + per_byte * bytes / k.
double chain_cost(int nranks, uint64_t bytes, uint32_t chunks, double alpha, double per_byte);

}  // namespace hcomm::algo
