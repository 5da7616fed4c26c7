#include "core/comm/schedule_cache.hpp"

#include <algorithm>
#include <climits>

#include "core/comm/argument_check.hpp"
#include "core/common/log.hpp"
#include "core/common/names.hpp"

namespace hcomm::comm {

namespace {

// Point to point as a one-step schedule to or from args.root, built through
// the algorithms' builder so that it is chunked and checked as theirs are.
template <hcomm_step_kind_t kKind>
hcomm_result_t build_p2p(const hcomm_coll_args_t* args, const hcomm_comm_view_t*, hcomm_schedule_builder_t* b) {
  const uint64_t bytes = uint64_t{args->count} * args->dtype_size;
  hcomm_step_t step{
      .kind = kKind, .peer = args->root, .bytes = bytes, .nchunks = b->chunks_for(b, bytes, args->dtype_size)};
  if (kKind == HCOMM_STEP_SEND)
    step.src = {.buffer = HCOMM_BUF_SEND, .offset = 0};
  else
    step.dst = {.buffer = HCOMM_BUF_RECV, .offset = 0};
  return b->add(b, &step) < 0 ? HCOMM_ERR_INTERNAL : HCOMM_SUCCESS;
}

constexpr hcomm_algorithm_desc_t p2p_algorithm(const char* name, decltype(&build_p2p<HCOMM_STEP_SEND>) build) {
  return {.size = sizeof(hcomm_algorithm_desc_t),
          .name = name,
          .colls = 1u << HCOMM_COLL_SENDRECV,
          .mem_kinds = HCOMM_MEM_HOST | HCOMM_MEM_CUDA,
          .min_bytes = 0,
          .max_bytes = UINT64_MAX,
          .min_ranks = 1,
          .max_ranks = INT_MAX,
          .cost = nullptr,
          .build = build};
}
constexpr hcomm_algorithm_desc_t kSendAlgorithm = p2p_algorithm("send", build_p2p<HCOMM_STEP_SEND>);
constexpr hcomm_algorithm_desc_t kRecvAlgorithm = p2p_algorithm("recv", build_p2p<HCOMM_STEP_RECV>);

// The layout arrays of hcomm_coll_args_t, in the order of Key::layout.
constexpr std::array<const size_t * hcomm_coll_args_t::*, 4> kLayoutFields = {
    &hcomm_coll_args_t::send_counts, &hcomm_coll_args_t::send_displs, &hcomm_coll_args_t::recv_counts,
    &hcomm_coll_args_t::recv_displs};

}  // namespace

ScheduleCache::ScheduleCache(const hcomm_comm_view_t& view, std::vector<algorithm::TuneRule> rules)
    : nranks_(view.nranks),
      selector_(view, std::move(rules), algorithm::registry()),
      p2p_builders_{algorithm::Selector(view, {}, {&kSendAlgorithm}),
                    algorithm::Selector(view, {}, {&kRecvAlgorithm})} {}

bool ScheduleCache::KeyLess::operator()(const Key& a, const Key& b) const {
  if (a.fixed != b.fixed) return a.fixed < b.fixed;
  for (size_t i = 0; i < a.layout.size(); ++i)
    if (!std::ranges::equal(a.layout[i], b.layout[i]))
      return std::ranges::lexicographical_compare(a.layout[i], b.layout[i]);
  return false;
}

ScheduleCache::Key ScheduleCache::key_of(const hcomm_coll_args_t& a) const {
  // Every field given: zeroing the key first would cost more than the rest.
  const auto span = [&](size_t i) {
    const size_t* array = a.*kLayoutFields[i];
    return array ? std::span<const size_t>(array, static_cast<size_t>(nranks_)) : std::span<const size_t>();
  };
  return Key{.fixed = {a.coll, a.count, a.dtype, a.op, a.root, a.in_place, a.mem_kind},
             .layout = {span(0), span(1), span(2), span(3)}};
}

const std::shared_ptr<const exec::Schedule>& ScheduleCache::lookup(const hcomm_coll_args_t& args) {
  Key key = key_of(args);
  auto it = collectives_.find(key);
  if (it == collectives_.end()) {
    // The stored key and the schedule's args point into the entry's copies.
    auto entry = std::make_shared<Cached>();
    hcomm_coll_args_t a = args;
    for (size_t i = 0; i < kLayoutFields.size(); ++i) {
      if (key.layout[i].empty()) continue;
      entry->layout[i].assign(key.layout[i].begin(), key.layout[i].end());
      a.*kLayoutFields[i] = entry->layout[i].data();
      key.layout[i] = entry->layout[i];
    }
    auto schedule = selector_.build(a);
    schedule->agreement = ArgumentCheck::agreement(a, nranks_, schedule->algorithm);
    entry->schedule = std::move(schedule);
    HCOMM_DEBUG(ALGO, "built %s schedule for %s of %llu bytes: %zu steps", entry->schedule->algorithm.c_str(),
                coll_name(a.coll), static_cast<unsigned long long>(algorithm::message_bytes(a, nranks_)),
                entry->schedule->steps.size());
    it = collectives_.emplace(key, std::move(entry)).first;
  }
  // Shares the entry, so that the arrays live as long as the schedule is used.
  last_ = std::shared_ptr<const exec::Schedule>(it->second, it->second->schedule.get());
  return last_;
}

const std::shared_ptr<const exec::Schedule>& ScheduleCache::p2p(bool send, const hcomm_coll_args_t& args) {
  const std::tuple<bool, int, size_t, int> key{send, args.root, args.count, args.dtype};
  // Messages of ever new sizes (point to point in matching mode) would grow
  // the cache without end: past kMaxP2P it starts anew (operations in
  // flight keep theirs).
  if (p2p_.size() >= kMaxP2P && !p2p_.contains(key)) p2p_.clear();
  auto& schedule = p2p_[key];
  if (!schedule) schedule = p2p_builders_[send ? 0 : 1].build(args);
  return schedule;
}

void ScheduleCache::force(hcomm_coll_t coll, const std::string& algorithm) {
  selector_.force(coll, algorithm);
  std::erase_if(collectives_, [&](const auto& entry) { return std::get<0>(entry.first.fixed) == coll; });
  last_.reset();
}

}  // namespace hcomm::comm
