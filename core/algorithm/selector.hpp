// Algorithm selection: the loaded algorithm plugins form a registry; for each
// call the selector takes an explicit HCOMM_TUNE rule if one covers it, else
// the candidates that serve the call ordered by their cost estimate. A
// candidate may decline (HCOMM_ERR_UNSUPPORTED) and the next one builds.
#pragma once

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/algorithm/layout.hpp"
#include "core/algorithm/tune.hpp"
#include "core/exec/schedule.hpp"
#include "hcomm/plugin/algorithm.h"

namespace hcomm::algorithm {

// Every algorithm of every loaded algorithm plugin (plugins initialised once).
const std::vector<const hcomm_algorithm_desc_t*>& registry();

class Selector {
 public:
  // rules: parsed HCOMM_TUNE; algorithms: the registry (tests pass their own).
  Selector(const hcomm_comm_view_t& view, std::vector<TuneRule> rules,
           std::vector<const hcomm_algorithm_desc_t*> algorithms, uint64_t chunk_bytes);

  // The algorithms that serve a call, best first (the HCOMM_TUNE choice leads).
  std::vector<const hcomm_algorithm_desc_t*> candidates(const hcomm_coll_args_t& args) const;
  // Builds the schedule of the first candidate that accepts the call.
  std::shared_ptr<exec::Schedule> build(const hcomm_coll_args_t& args) const;
  // The algorithm a call would use (the first candidate; its build may still
  // decline), or nullptr when none serves it.
  const hcomm_algorithm_desc_t* pick(const hcomm_coll_args_t& args) const;
  // Every later call of `coll` tries `algorithm` first (empty: back to
  // HCOMM_TUNE and the cost model). Throws HCOMM_ERR_INVALID_ARGUMENT when no
  // loaded algorithm of that name serves `coll`, naming those that do.
  void force(hcomm_coll_t coll, const std::string& algorithm);

 private:
  bool serves(const hcomm_algorithm_desc_t& a, const hcomm_coll_args_t& args) const;

  hcomm_comm_view_t view_;
  std::vector<TuneRule> rules_;
  std::vector<const hcomm_algorithm_desc_t*> algorithms_;
  uint64_t chunk_bytes_;
  mutable std::set<std::string> logged_;  // (collective, algorithm) choices already logged
};

}  // namespace hcomm::algorithm
