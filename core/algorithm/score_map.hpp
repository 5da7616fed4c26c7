// The score map of a communicator: for every collective and memory kind, the
// message sizes (message_bytes(), layout.hpp) cut into ranges within which the
// same algorithms serve and the same HCOMM_TUNE rule applies, each range with
// its candidates best first: the rule's algorithm, then the rest by the cost
// model. Ranges start at 0, at the powers of two up to 1 GiB and at every
// algorithm's and rule's size limits; the cost model is sampled at a range's
// smallest size. Built once per communicator, so that a call's selection is
// a binary search.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/algorithm/tune.hpp"
#include "hcomm/plugin/algorithm.h"

namespace hcomm::algorithm {

struct ScoreRange {
  uint64_t lo;                                       // the range ends where the next one starts
  std::vector<const hcomm_algorithm_desc_t*> order;  // best first; empty where none serves
  // The index of the HCOMM_TUNE rule that covers the range but could not be
  // followed (its algorithm is not loaded or does not serve these calls); -1: none.
  int passed_rule = -1;
};

// "host" or "cuda" (one hcomm_mem_kind_t bit), for messages.
const char* mem_kind_name(uint32_t mem_kind);

class ScoreMap {
 public:
  ScoreMap(const hcomm_comm_view_t& view, const std::vector<TuneRule>& rules,
           const std::vector<const hcomm_algorithm_desc_t*>& algorithms);

  // The range of a call of `bytes` on memory of `mem_kind` (one hcomm_mem_kind_t bit).
  const ScoreRange& find(hcomm_coll_t coll, uint32_t mem_kind, uint64_t bytes) const;
  // The names of the algorithms that serve some call of `coll` here.
  std::vector<std::string> algorithm_names(hcomm_coll_t coll) const;
  // One line per collective and memory kind that some algorithm serves, the
  // ranges with the same winner merged, e.g.
  //   allreduce host: 0-128K ring, 128K-8M double_binary_tree, 8M-inf halving_doubling
  // A memory kind whose line would be the host's is left out.
  std::vector<std::string> lines() const;

 private:
  static constexpr int kMemKinds = 2;  // host, cuda: hcomm_mem_kind_t bits 0 and 1
  std::vector<ScoreRange> ranges_[HCOMM_NUM_COLLS][kMemKinds];
};

}  // namespace hcomm::algorithm
