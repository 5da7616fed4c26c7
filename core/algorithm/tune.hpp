// HCOMM_TUNE: per-collective algorithm choices by message size, e.g.
//   allreduce:0-64K:@recursive_doubling#allreduce:64K-inf:@ring#broadcast:@binomial
// Rules are separated by '#'; a range is [lo, hi) of message_bytes()
// (layout.hpp) with K/M/G suffixes (powers of 1024) and 'inf'; a rule without
// a range covers every size. The first rule that covers a call wins. A rule
// naming an algorithm that no loaded plugin offers for its collective is an
// error when the communicator starts; one whose algorithm does not serve a
// call (its size or rank limits, the memory kind) leaves that call to the cost
// model, with one warning.
//
// A rule may also be `profile:NAME`: the rules of a named profile, in its
// place (rules before it take precedence, rules after it fill its gaps). An
// algorithm of a profile that is not loaded is a warning, not an error: the
// cost model decides those sizes. Profiles:
//   thresholds  allreduce: ring below 128K, double_binary_tree from 128K to
//               8M, halving_doubling from 8M
// e.g. HCOMM_TUNE=profile:thresholds, or
//      HCOMM_TUNE=allreduce:0-4K:@recursive_doubling#profile:thresholds
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
  std::string profile;  // the profile the rule comes from; empty when written out
  std::string file;     // the tune file whose measured choices it is (tune_file.hpp); empty: HCOMM_TUNE's
  uint32_t mem_kinds = HCOMM_MEM_HOST | HCOMM_MEM_CUDA;  // the memory kinds (hcomm_mem_kind_t bits) it covers
  bool covers(hcomm_coll_t c, uint32_t mem_kind, uint64_t bytes) const {
    return c == coll && (mem_kinds & mem_kind) && bytes >= lo && (bytes < hi || hi == UINT64_MAX);
  }
  // Written out by hand (HCOMM_TUNE's own text), so that its algorithm must be loaded.
  bool written() const { return profile.empty() && file.empty(); }
  // The rule as written: "allreduce:128K-8M:@double_binary_tree".
  std::string text() const;
  // For messages: "HCOMM_TUNE rule 'allreduce:@ring'", with " (profile
  // thresholds)" or the tune file it comes from.
  std::string described() const;
};

// Throws HCOMM_ERR_CONFIG naming the rule that does not parse and why.
std::vector<TuneRule> parse_tune(const std::string& text);
// The profiles' names, comma separated, for messages.
std::string profile_names();

// A byte count as the rules write it: 0, 512, 4K, 1536K, 8M, 1G, inf.
std::string bytes_text(uint64_t bytes);

}  // namespace hcomm::algorithm
