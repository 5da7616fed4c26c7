// The schedules a communicator built, by call: a collective's come from the
// selector, keyed by the fixed fields of hcomm_coll_args_t and, for the
// variable-size collectives, its four layout arrays; a send's or receive's
// are one step to or from its peer, built through the algorithms' builder
// (so that they are chunked and checked as the algorithms' are).
#pragma once

#include <array>
#include <cstring>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "core/algorithm/selector.hpp"
#include "core/exec/schedule.hpp"

namespace hcomm::comm {

class ScheduleCache {
 public:
  // The view's chunk_bytes is the communicator's chunk size.
  ScheduleCache(const hcomm_comm_view_t& view, std::vector<algorithm::TuneRule> rules);

  // The schedule of a collective call, built on first use (with its
  // agreement, for the argument check). Throws when no algorithm serves it.
  const std::shared_ptr<const exec::Schedule>& collective(const hcomm_coll_args_t& args) {
    return last_ && repeats_last(args) ? last_ : lookup(args);
  }
  // The schedule of a send to (a receive from) args.root.
  const std::shared_ptr<const exec::Schedule>& p2p(bool send, const hcomm_coll_args_t& args);

  // Every later call of `coll` tries `algorithm` first (empty: back to
  // HCOMM_TUNE and the cost model); the schedules of the earlier choice go,
  // while operations in flight keep theirs.
  void force(hcomm_coll_t coll, const std::string& algorithm);
  // The algorithm a call would use, or nullptr when none serves it.
  const hcomm_algorithm_desc_t* pick(const hcomm_coll_args_t& args) const { return selector_.pick(args); }
  // The view the algorithms see (after HCOMM_TUNE_FILE's parameters).
  const hcomm_comm_view_t& view() const { return selector_.view(); }
  void log_score_map() const { selector_.log_score_map(); }

 private:
  // Spans into the caller's layout arrays: a lookup allocates nothing.
  struct Key {
    std::tuple<int, size_t, int, int, int, int, uint32_t> fixed;
    std::array<std::span<const size_t>, 4> layout;
  };
  struct KeyLess {
    bool operator()(const Key& a, const Key& b) const;
  };
  // A cached schedule and copies of the layout arrays that its args and its
  // key point into; operations in flight share it, so dropping it from the
  // cache (force) leaves their arrays in place.
  struct Cached {
    std::array<std::vector<size_t>, 4> layout;
    std::shared_ptr<const exec::Schedule> schedule;
  };

  Key key_of(const hcomm_coll_args_t& args) const;
  const std::shared_ptr<const exec::Schedule>& lookup(const hcomm_coll_args_t& args);
  // Whether a call asks for what the last one did (its schedule's args,
  // whose layout arrays are the entry's copies): a training loop's calls
  // compare a few fields and look nothing up.
  bool repeats_last(const hcomm_coll_args_t& a) const {
    const hcomm_coll_args_t& l = last_->args;
    const auto same = [n = static_cast<size_t>(nranks_)](const size_t* x, const size_t* y) {
      return x && y ? std::memcmp(x, y, n * sizeof(size_t)) == 0 : x == y;
    };
    return a.coll == l.coll && a.count == l.count && a.dtype == l.dtype && a.op == l.op && a.root == l.root &&
           a.in_place == l.in_place && a.mem_kind == l.mem_kind && same(a.send_counts, l.send_counts) &&
           same(a.send_displs, l.send_displs) && same(a.recv_counts, l.recv_counts) &&
           same(a.recv_displs, l.recv_displs);
  }

  int nranks_;
  algorithm::Selector selector_;
  // [0] sends, [1] receives: the core's own one-step algorithms.
  std::array<algorithm::Selector, 2> p2p_builders_;
  std::map<Key, std::shared_ptr<Cached>, KeyLess> collectives_;
  // The last call's schedule, which shares its entry (and so its arrays).
  std::shared_ptr<const exec::Schedule> last_;
  // (send, peer, count, dtype) -> the one-step schedule.
  std::map<std::tuple<bool, int, size_t, int>, std::shared_ptr<const exec::Schedule>> p2p_;
  static constexpr size_t kMaxP2P = 1024;
};

}  // namespace hcomm::comm
