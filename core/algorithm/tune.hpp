// HCOMM_TUNE: per-collective algorithm choices by message size, e.g.
//   allreduce:0-64K:@recursive_doubling#allreduce:64K-inf:@ring#broadcast:@binomial
// Rules are separated by '#'; a range is [lo, hi) in bytes (K/M/G suffixes,
// 'inf'); a rule without a range covers every size. The first matching rule wins.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hcomm/types.h"

namespace hcomm::algorithm {

struct TuneRule {
  hcomm_coll_t coll;
  uint64_t lo = 0;
  uint64_t hi = UINT64_MAX;  // exclusive; UINT64_MAX stands for 'inf'
  std::string algorithm;
  bool covers(hcomm_coll_t c, uint64_t bytes) const { return c == coll && bytes >= lo && (bytes < hi || hi == UINT64_MAX); }
};

// Throws HCOMM_ERR_CONFIG naming the rule that does not parse and why.
std::vector<TuneRule> parse_tune(const std::string& text);

const char* coll_name(hcomm_coll_t coll);
bool coll_from_name(const std::string& name, hcomm_coll_t* out);

}  // namespace hcomm::algorithm
