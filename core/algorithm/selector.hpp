// Algorithm selection: the loaded algorithm plugins form a registry; for each
// call the selector takes the algorithm forced on the communicator for that
// collective if it serves the call, else the communicator's score map
// (score_map.hpp): the choice of an HCOMM_TUNE rule or of a tune file's
// measured ones (tuning.hpp) where one covers the call, then
// the candidates that serve it ordered by their cost estimate. A candidate
// may decline (HCOMM_ERR_UNSUPPORTED) and the next one builds.
#pragma once

#include <array>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "core/algorithm/composition.hpp"
#include "core/algorithm/layout.hpp"
#include "core/algorithm/score_map.hpp"
#include "core/algorithm/tune.hpp"
#include "core/exec/schedule.hpp"
#include "hcomm/plugin/algorithm.h"

namespace hcomm::algorithm {

// Every algorithm of every loaded algorithm plugin (plugins initialised once).
const std::vector<const hcomm_algorithm_desc_t*>& registry();

class Selector {
 public:
  // rules: parsed HCOMM_TUNE; algorithms: the registry (tests pass their own).
  // Throws HCOMM_ERR_CONFIG for a rule written out (not from a profile) that
  // names an algorithm no loaded plugin offers for its collective.
  Selector(const hcomm_comm_view_t& view, std::vector<TuneRule> rules,
           std::vector<const hcomm_algorithm_desc_t*> algorithms);
  Selector(Selector&&) noexcept;
  ~Selector();

  // The algorithms that serve a call, best first: the forced one, then as the
  // score map orders them.
  std::vector<const hcomm_algorithm_desc_t*> candidates(const hcomm_coll_args_t& args) const;
  // Builds the schedule of the first candidate that accepts the call; the
  // parts an algorithm adds (hcomm_coll_part_t) are built by the selector of
  // their group.
  std::shared_ptr<exec::Schedule> build(const hcomm_coll_args_t& args) const { return build(args, 0); }
  // Builds `part` on its group's selector and adds its steps to `steps`, a
  // schedule `depth` parts deep that `composition` lays out; returns the step
  // that ends the part. Throws for a malformed part or one no algorithm serves.
  int32_t add_part(const hcomm_coll_part_t& part, std::vector<hcomm_step_t>& steps, Composition& composition,
                   int depth) const;
  // The algorithm a call would use (the first candidate; its build may still
  // decline), or nullptr when none serves it.
  const hcomm_algorithm_desc_t* pick(const hcomm_coll_args_t& args) const;
  // Every later call of `coll` tries `algorithm` first (empty: back to
  // HCOMM_TUNE and the cost model). Throws HCOMM_ERR_INVALID_ARGUMENT when no
  // loaded algorithm of that name serves `coll`, naming those that do.
  void force(hcomm_coll_t coll, const std::string& algorithm);

  const ScoreMap& score_map() const { return map_; }
  // The communicator as the algorithms see it.
  const hcomm_comm_view_t& view() const { return view_; }
  // On rank 0, with HCOMM_DEBUG=INFO and ALGO among HCOMM_DEBUG_SUBSYS: the
  // score map, one line per collective and memory kind.
  void log_score_map() const;

 private:
  void check_rules() const;
  // The candidates for a call of a user op that does not commute.
  std::vector<const hcomm_algorithm_desc_t*> ordered_candidates(const hcomm_coll_args_t& args) const;
  // Where the HCOMM_TUNE rule or the forced algorithm that covers a call does
  // not serve it: one warning each (rank 0), when such a call is built.
  void warn_unfollowed(const hcomm_coll_args_t& args) const;
  void warn_once(const std::string& key, const std::string& text) const;
  // `depth`: how many parts deep this build is.
  std::shared_ptr<exec::Schedule> build(const hcomm_coll_args_t& args, int depth) const;
  // The selector of a group of this communicator's ranks: the same
  // algorithms on the group's view, by the cost model alone (HCOMM_TUNE and
  // forced choices are the whole call's); made on first use.
  const Selector& group(std::span<const int> ranks) const;

  hcomm_comm_view_t view_;
  std::vector<TuneRule> rules_;
  std::vector<const hcomm_algorithm_desc_t*> algorithms_;
  ScoreMap map_;
  std::array<std::string, HCOMM_NUM_COLLS> forced_;
  mutable std::set<std::string> logged_;  // choices and warnings already logged
  struct Group;  // a GroupView and its selector
  mutable std::map<std::vector<int>, std::unique_ptr<Group>> groups_;
};

}  // namespace hcomm::algorithm
