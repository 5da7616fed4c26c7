#include "cost.hpp"

#include <algorithm>

namespace hcomm::algo {

double lone_rank_cost(const hcomm_coll_args_t& args, uint64_t bytes, const hcomm_link_model_t& link) {
  return args.in_place ? 0.0 : static_cast<double>(bytes) * link.gamma_us_per_byte;
}

double ring_pass_cost(const plugin::BlockLayout& blocks, int nranks, double alpha, double per_byte) {
  uint64_t smallest = blocks.bytes(0);
  for (int r = 1; r < nranks; ++r) smallest = std::min(smallest, blocks.bytes(r));
  return (nranks - 1) * alpha + static_cast<double>(blocks.total_bytes() - smallest) * per_byte;
}

double chain_cost(int nranks, uint64_t bytes, uint32_t chunks, double alpha, double per_byte) {
  const double chunk_time = alpha + static_cast<double>(bytes) / chunks * per_byte;
  return (nranks + static_cast<double>(chunks) - 2) * chunk_time;
}

}  // namespace hcomm::algo
