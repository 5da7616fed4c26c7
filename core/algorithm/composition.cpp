#include "core/algorithm/composition.hpp"

#include <algorithm>
#include <map>

#include "core/common/error.hpp"

namespace hcomm::algorithm {

namespace {

constexpr uint32_t kPartMatchBits = 16;
constexpr uint64_t kScratchAlign = 64;

uint64_t aligned(uint64_t bytes) { return (bytes + kScratchAlign - 1) / kScratchAlign * kScratchAlign; }

hcomm_step_t empty_step() {
  return {.kind = HCOMM_STEP_COPY,
          .src = {.buffer = HCOMM_BUF_RECV, .offset = 0},
          .dst = {.buffer = HCOMM_BUF_RECV, .offset = 0},
          .bytes = 0,
          .nchunks = 1};
}

// The buffer references a step of each message or local kind uses.
using RefField = hcomm_bufref_t hcomm_step_t::*;
std::span<const RefField> used_refs(uint32_t kind) {
  static constexpr RefField kSrc[] = {&hcomm_step_t::src};
  static constexpr RefField kDst[] = {&hcomm_step_t::dst};
  static constexpr RefField kSrcDst[] = {&hcomm_step_t::src, &hcomm_step_t::dst};
  static constexpr RefField kAll[] = {&hcomm_step_t::src, &hcomm_step_t::src2, &hcomm_step_t::dst};
  switch (kind) {
    case HCOMM_STEP_SEND: return kSrc;
    case HCOMM_STEP_RECV: return kDst;
    case HCOMM_STEP_RECV_REDUCE:
    case HCOMM_STEP_COPY: return kSrcDst;
    case HCOMM_STEP_REDUCE: return kAll;
    default: return {};
  }
}

bool is_message(uint32_t kind) {
  return kind == HCOMM_STEP_SEND || kind == HCOMM_STEP_RECV || kind == HCOMM_STEP_RECV_REDUCE;
}

}  // namespace

GroupView::GroupView(const hcomm_comm_view_t& whole, std::span<const int> ranks)
    : node_of_(whole.node_of ? ranks.size() : 0), view_(whole) {
  int me = -1;
  std::vector<bool> seen(static_cast<size_t>(std::max(whole.nranks, 0)));
  std::map<int, int> hosts;  // host in the whole -> in the group
  for (size_t i = 0; i < ranks.size(); ++i) {
    const int r = ranks[i];
    if (r < 0 || r >= whole.nranks)
      HCOMM_THROW(HCOMM_ERR_INVALID_ARGUMENT, "group rank %zu is rank %d, outside the communicator's 0..%d", i, r,
                  whole.nranks - 1);
    if (seen[static_cast<size_t>(r)])
      HCOMM_THROW(HCOMM_ERR_INVALID_ARGUMENT, "rank %d appears twice in the group", r);
    seen[static_cast<size_t>(r)] = true;
    if (r == whole.rank) me = static_cast<int>(i);
    if (whole.node_of) node_of_[i] = hosts.emplace(whole.node_of[r], static_cast<int>(hosts.size())).first->second;
  }
  if (me < 0)
    HCOMM_THROW(HCOMM_ERR_INVALID_ARGUMENT, "the group of %zu ranks does not hold this rank (%d)", ranks.size(),
                whole.rank);
  const bool one_host = hosts.size() <= 1;
  view_.rank = me;
  view_.nranks = static_cast<int>(ranks.size());
  view_.flags &= HCOMM_VIEW_OVERSUBSCRIBED;
  view_.window_bytes = 0;
  view_.nnodes = whole.node_of ? static_cast<int>(hosts.size()) : whole.nnodes;
  view_.node_of = whole.node_of ? node_of_.data() : nullptr;
  if (whole.node_of && one_host) view_.link = view_.inter = whole.intra;
  view_.mapped = view_.link;
}

void check_part(const hcomm_coll_part_t& part, const hcomm_comm_view_t& whole, size_t steps) {
  if (part.size < sizeof(hcomm_coll_part_t))
    HCOMM_THROW(HCOMM_ERR_INVALID_ARGUMENT, "part: size %zu, smaller than hcomm_coll_part_t (%zu)", part.size,
                sizeof(hcomm_coll_part_t));
  if (!part.args) HCOMM_THROW(HCOMM_ERR_INVALID_ARGUMENT, "part: args is NULL");
  if (!part.ranks || part.nranks < 1 || part.nranks > whole.nranks)
    HCOMM_THROW(HCOMM_ERR_INVALID_ARGUMENT, "part: a group of %d ranks (ranks %s) on a communicator of %d",
                part.nranks, part.ranks ? "given" : "NULL", whole.nranks);
  if (part.id >= HCOMM_MAX_PARTS)
    HCOMM_THROW(HCOMM_ERR_INVALID_ARGUMENT, "part: id %u, not below HCOMM_MAX_PARTS (%d)", part.id, HCOMM_MAX_PARTS);
  for (const hcomm_bufref_t& ref : {part.send, part.recv})
    if (ref.buffer > HCOMM_BUF_SCRATCH)
      HCOMM_THROW(HCOMM_ERR_INVALID_ARGUMENT, "part: buffer %u; a part lies in SEND, RECV or SCRATCH", ref.buffer);
  if (part.ndeps > HCOMM_STEP_MAX_DEPS || (part.ndeps && !part.deps))
    HCOMM_THROW(HCOMM_ERR_INVALID_ARGUMENT, "part: %u dependencies%s; at most HCOMM_STEP_MAX_DEPS (%d)", part.ndeps,
                part.deps ? "" : " and deps NULL", HCOMM_STEP_MAX_DEPS);
  for (uint32_t i = 0; i < part.ndeps; ++i)
    if (part.deps[i] < 0 || static_cast<size_t>(part.deps[i]) >= steps)
      HCOMM_THROW(HCOMM_ERR_INVALID_ARGUMENT, "part: dependency %d is not one of the %zu steps so far", part.deps[i],
                  steps);
}

int32_t join_steps(std::vector<int32_t> ends, std::vector<hcomm_step_t>& steps) {
  while (ends.size() > 1) {
    std::vector<int32_t> joined;
    for (size_t first = 0; first < ends.size(); first += HCOMM_STEP_MAX_DEPS) {
      hcomm_step_t join = empty_step();
      for (size_t k = first; k < ends.size() && k < first + HCOMM_STEP_MAX_DEPS; ++k) {
        join.whole_deps |= 1u << join.ndeps;
        join.deps[join.ndeps++] = ends[k];
      }
      steps.push_back(join);
      joined.push_back(static_cast<int32_t>(steps.size() - 1));
    }
    ends = std::move(joined);
  }
  return ends.empty() ? -1 : ends[0];
}

int32_t Composition::add(std::vector<hcomm_step_t>& steps, const hcomm_coll_part_t& part,
                         const exec::Schedule& built) {
  int32_t start = -1;
  if (part.ndeps) {
    hcomm_step_t join = empty_step();
    for (uint32_t i = 0; i < part.ndeps; ++i) {
      join.whole_deps |= 1u << i;
      join.deps[i] = part.deps[i];
    }
    join.ndeps = part.ndeps;
    steps.push_back(join);
    start = static_cast<int32_t>(steps.size() - 1);
  }
  const auto index = static_cast<uint32_t>(part_scratch_.size());
  part_scratch_.push_back(built.algorithm_scratch);
  const auto first = static_cast<int32_t>(steps.size());
  std::vector<bool> awaited(built.steps.size());
  for (const hcomm_step_t& s : built.steps) {
    hcomm_step_t t = s;
    if (s.kind > HCOMM_STEP_COPY)
      HCOMM_THROW(HCOMM_ERR_INTERNAL, "algorithm %s gave a part a mapped-memory step (kind %u)",
                  built.algorithm.c_str(), s.kind);
    if (is_message(s.kind)) {
      if (s.peer < 0 || s.peer >= part.nranks)
        HCOMM_THROW(HCOMM_ERR_INTERNAL, "algorithm %s names peer %d in a group of %d", built.algorithm.c_str(),
                    s.peer, part.nranks);
      if (s.match >= 1u << kPartMatchBits)
        HCOMM_THROW(HCOMM_ERR_INTERNAL, "algorithm %s matches a part's message by %u, not below 2^%u",
                    built.algorithm.c_str(), s.match, kPartMatchBits);
      t.peer = part.ranks[s.peer];
      t.match = (part.id + 1) << kPartMatchBits | s.match;
    }
    for (RefField field : used_refs(s.kind)) {
      hcomm_bufref_t& ref = t.*field;
      switch (ref.buffer) {
        case HCOMM_BUF_SEND: ref = {.buffer = part.send.buffer, .offset = part.send.offset + ref.offset}; break;
        case HCOMM_BUF_RECV: ref = {.buffer = part.recv.buffer, .offset = part.recv.offset + ref.offset}; break;
        case HCOMM_BUF_SCRATCH:
          scratch_refs_.push_back({static_cast<uint32_t>(steps.size()), field, index});
          break;
        default:
          HCOMM_THROW(HCOMM_ERR_INTERNAL, "algorithm %s gave a part a step on buffer %u", built.algorithm.c_str(),
                      ref.buffer);
      }
    }
    for (uint32_t i = 0; i < s.ndeps; ++i) {
      awaited[static_cast<size_t>(s.deps[i])] = true;
      t.deps[i] = s.deps[i] + first;
    }
    if (s.ndeps == 0 && start >= 0) {
      t.deps[0] = start;
      t.ndeps = 1;
      t.whole_deps = 1;
    }
    if (!(part.flags & HCOMM_PART_FINISHES)) t.flags &= ~uint32_t{HCOMM_STEP_FINAL};
    if (!(part.flags & HCOMM_PART_LAST)) t.flags &= ~uint32_t{HCOMM_STEP_UNREAD};
    steps.push_back(t);
  }
  std::vector<int32_t> ends;
  for (size_t i = 0; i < awaited.size(); ++i)
    if (!awaited[i]) ends.push_back(first + static_cast<int32_t>(i));
  if (ends.empty()) {
    if (start >= 0) return start;
    steps.push_back(empty_step());
    return static_cast<int32_t>(steps.size() - 1);
  }
  return join_steps(std::move(ends), steps);
}

uint64_t Composition::place_scratch(std::vector<hcomm_step_t>& steps, uint64_t own) const {
  if (part_scratch_.empty()) return own;
  std::vector<uint64_t> base(part_scratch_.size());
  uint64_t end = aligned(own);
  for (size_t k = 0; k < part_scratch_.size(); ++k) {
    base[k] = end;
    end += aligned(part_scratch_[k]);
  }
  for (const ScratchRef& r : scratch_refs_) (steps[r.step].*r.field).offset += base[r.part];
  return end;
}

}  // namespace hcomm::algorithm
