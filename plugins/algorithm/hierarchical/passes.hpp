// The levels hierarchical schedules are made of, each over a group of ranks
// (a host, a rail of counterparts, the hosts' leaders) and composed through
// where each level leaves its data: passes of items around a ring, binomial
// tree reduce and broadcast, and joins of several steps into one.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "common/doubling.hpp"
#include "common/patterns.hpp"
#include "common/schedule_writer.hpp"

namespace hcomm::algo {

// Transfers are matched by (phase, item): a phase is one level of one
// schedule, and within it every item crosses each link at most once.
constexpr uint32_t kItemBits = 20;
constexpr uint32_t kMaxItems = 1u << kItemBits;
inline uint32_t match_of(uint32_t phase, uint32_t item) { return phase << kItemBits | item; }

// A piece of data that a ring pass moves: `owner` is a group position.
struct Item {
  int owner;
  uint32_t id;  // below kMaxItems, unique within the pass
  uint64_t bytes;
};

enum class PassMode {
  kGather,  // each item travels from its owner to every other member
  kReduce,  // each item starts at owner + 1 and is reduced on every hop to its owner
};

// Items around the group's ring, one hop per step, as patterns.hpp's Ring
// passes blocks: at step t this rank forwards the items of one owner and
// receives those of the owner before. A forward waits chunk-wise for the
// receive of its item and reads where that receive wrote; the first send
// and every reduction wait for the whole step that placed their input.
struct ItemPass {
  PassMode mode;
  uint32_t phase;
  size_t elem_size;
  std::vector<Item> items;
  // kGather: the owner's copy of the item; kReduce: this rank's contribution.
  std::function<Placed(size_t item)> input;
  // Where this rank receives the item; `result`: the owner's reduction.
  std::function<hcomm_bufref_t(size_t item, bool result)> output;
  bool final = false;  // kReduce: the owners' reductions finish their elements
};

// Where each item lies at this rank after the pass: kGather every item;
// kReduce the items this rank owns (their input when the group has one rank).
std::vector<Placed> add_item_pass(const ItemPass& pass, const Group& group, ScheduleWriter& out);

// One message of `bytes` in `nchunks` chunks on a binomial tree over the
// group, matched by `match`; every step of a tree has the same chunks, so
// chunk c moves on as soon as it is here.
struct TreeMessage {
  uint32_t match;
  uint64_t bytes;
  uint32_t nchunks;
};

// Children's values are reduced with `input` into `acc`, nearest child first,
// and the result is sent to the parent; `final` marks the root's last
// reduction. Returns where this rank's value lies (the root's: the result).
Placed add_tree_reduce(const Group& group, int root, const TreeMessage& msg, Placed input, hcomm_bufref_t acc,
                       bool final, ScheduleWriter& out);

// The root sends `input`; the others receive into `dst` and forward from
// there. Returns where the message lies at this rank.
Placed add_tree_broadcast(const Group& group, int root, const TreeMessage& msg, Placed input, hcomm_bufref_t dst,
                          ScheduleWriter& out);

// A step that completes once all `steps` (-1 entries ignored) have: one of
// them, or empty copies that wait for up to HCOMM_STEP_MAX_DEPS each. -1
// when there is none.
int32_t join(std::vector<int32_t> steps, ScheduleWriter& out);

}  // namespace hcomm::algo
