#include "cost.hpp"

#include <algorithm>

#include "common/services.hpp"

namespace hcomm::algo {

uint32_t pipeline_chunks(uint64_t bytes, size_t elem_size) {
  const uint64_t chunk_bytes = services().setting_size("HCOMM_CHUNK_BYTES");
  const uint64_t elements = elem_size ? bytes / elem_size : 0;
  if (chunk_bytes == 0 || elements == 0) return 1;
  // At most one chunk per element, and 2^16 chunks (tags carry 16 bits).
  return static_cast<uint32_t>(
      std::min<uint64_t>({(bytes + chunk_bytes - 1) / chunk_bytes, elements, uint64_t{1} << 16}));
}

double lone_rank_cost(const hcomm_coll_args_t& args, uint64_t bytes, const hcomm_link_model_t& link) {
  return args.in_place ? 0.0 : static_cast<double>(bytes) * link.gamma_us_per_byte;
}

double ring_pass_cost(const BlockLayout& blocks, int nranks, double alpha, double per_byte) {
  uint64_t smallest = blocks.bytes(0);
  for (int r = 1; r < nranks; ++r) smallest = std::min(smallest, blocks.bytes(r));
  return (nranks - 1) * alpha + static_cast<double>(blocks.total_bytes() - smallest) * per_byte;
}

double chain_cost(int nranks, uint64_t bytes, uint32_t chunks, double alpha, double per_byte) {
  const double chunk_time = alpha + static_cast<double>(bytes) / chunks * per_byte;
  return (nranks + static_cast<double>(chunks) - 2) * chunk_time;
}

}  // namespace hcomm::algo
