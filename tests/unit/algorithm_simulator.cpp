#include "algorithm_simulator.hpp"

#include <cstring>
#include <map>
#include <tuple>
#include <type_traits>

#include "algorithm_values.hpp"

namespace hcomm::algotest {

namespace {

// dst = a op b over `count` elements; dst may alias a or b.
template <class T>
void reduce_as(hcomm_op_t op, uint8_t* dst, const uint8_t* a, const uint8_t* b, size_t count, int avg_divisor) {
  for (size_t i = 0; i < count; ++i) {
    T v = combine(op, load<T>(a + i * sizeof(T)), load<T>(b + i * sizeof(T)));
    if constexpr (std::is_arithmetic_v<T>)
      if (avg_divisor) v /= static_cast<T>(avg_divisor);
    store(dst + i * sizeof(T), v);
  }
}

void reduce(hcomm_dtype_t dtype, hcomm_op_t op, uint8_t* dst, const uint8_t* a, const uint8_t* b, size_t count,
            int avg_divisor) {
  if (dtype == kRecordDtype) return reduce_as<Record>(op, dst, a, b, count, avg_divisor);
  switch (dtype) {
    case HCOMM_FLOAT32:
      return reduce_as<float>(op, dst, a, b, count, avg_divisor);
    case HCOMM_INT64:
      return reduce_as<int64_t>(op, dst, a, b, count, avg_divisor);
    default:
      return reduce_as<uint8_t>(op, dst, a, b, count, avg_divisor);
  }
}

void move(uint8_t* dst, const uint8_t* src, uint64_t bytes) {
  if (bytes) std::memmove(dst, src, bytes);
}

}  // namespace

Simulator::Simulator(const std::vector<RankSchedule>& ranks, hcomm_dtype_t dtype, hcomm_op_t op,
                     std::vector<RankMemory>& memory, uint32_t seed, Sends sends, Receives receives)
    : ranks_(ranks),
      dtype_(dtype),
      op_(op),
      sends_(sends),
      elem_(dtype_size(dtype)),
      memory_(memory),
      held_(ranks.size(), false),
      rng_(seed) {
  for (size_t r = 0; r < ranks.size(); ++r) {
    publishes_.push_back(publishes_recv({ranks[r]}));
    in_place_.push_back(receives == Receives::kInPlace || (receives == Receives::kMixed && r % 2 == 0));
  }
  index_chunks();
  link_dependencies();
  for (size_t id = 0; id < chunks_.size(); ++id)
    if (chunks_[id].pending == 0) ready_.push_back(id);
}

void Simulator::release(int rank) {
  held_[static_cast<size_t>(rank)] = false;
  std::erase_if(parked_, [&](size_t id) {
    if (chunks_[id].rank != rank) return false;
    ready_.push_back(id);
    return true;
  });
}

void Simulator::run() {
  while (!ready_.empty()) {
    std::uniform_int_distribution<size_t> pick(0, ready_.size() - 1);
    std::swap(ready_[pick(rng_)], ready_.back());
    const size_t id = ready_.back();
    ready_.pop_back();
    if (held_[static_cast<size_t>(chunks_[id].rank)]) {
      parked_.push_back(id);
      continue;
    }
    execute(id);
    for (size_t partner : chunks_[id].partners) satisfy(partner);
    const bool rendezvous = sends_ == Sends::kRendezvous;
    if (step_of(id).kind != HCOMM_STEP_SEND || !rendezvous) complete(id);
    if (rendezvous && chunks_[id].sender != kNone) complete(chunks_[id].sender);
  }
}

bool Simulator::finished(int rank) const {
  for (size_t s = 0; s < ranks_[rank].steps.size(); ++s)
    if (completed_[rank][s] < ranks_[rank].steps[s].nchunks) return false;
  return true;
}

std::string Simulator::unfinished() const {
  std::string out;
  int listed = 0;
  for (size_t r = 0; r < ranks_.size(); ++r)
    for (size_t s = 0; s < ranks_[r].steps.size(); ++s)
      if (completed_[r][s] < ranks_[r].steps[s].nchunks && listed++ < 12)
        out += " rank " + std::to_string(r) + " step " + std::to_string(s) + " (" + std::to_string(completed_[r][s]) +
               "/" + std::to_string(ranks_[r].steps[s].nchunks) + " chunks)";
  if (listed > 12) out += " and " + std::to_string(listed - 12) + " more steps";
  return out;
}

const hcomm_step_t& Simulator::step_of(size_t id) const { return ranks_[chunks_[id].rank].steps[chunks_[id].step]; }

size_t Simulator::chunk_id(int rank, size_t step, uint32_t chunk) const { return first_[rank][step] + chunk; }

void Simulator::index_chunks() {
  first_.resize(ranks_.size());
  completed_.resize(ranks_.size());
  whole_waiters_.resize(ranks_.size());
  for (size_t r = 0; r < ranks_.size(); ++r) {
    completed_[r].assign(ranks_[r].steps.size(), 0);
    whole_waiters_[r].resize(ranks_[r].steps.size());
    for (size_t s = 0; s < ranks_[r].steps.size(); ++s) {
      first_[r].push_back(chunks_.size());
      for (uint32_t c = 0; c < ranks_[r].steps[s].nchunks; ++c)
        chunks_.push_back(Chunk{.rank = static_cast<int>(r), .step = s, .index = c});
    }
  }
  chunk_waiters_.resize(chunks_.size());
  in_flight_.resize(chunks_.size());
}

void Simulator::link_dependencies() {
  using Key = std::tuple<int, int, uint32_t>;         // from, to, match
  std::map<Key, size_t> receives;                     // the receiving rank's step
  std::map<Key, std::vector<size_t>> signals, waits;  // chunk ids, in step order
  for (size_t r = 0; r < ranks_.size(); ++r)
    for (size_t s = 0; s < ranks_[r].steps.size(); ++s) {
      const hcomm_step_t& st = ranks_[r].steps[s];
      const int rank = static_cast<int>(r);
      if (st.kind == HCOMM_STEP_RECV || st.kind == HCOMM_STEP_RECV_REDUCE) receives[{st.peer, rank, st.match}] = s;
      for (uint32_t c = 0; c < st.nchunks; ++c) {
        if (st.kind == HCOMM_STEP_SIGNAL) signals[{rank, st.peer, st.match}].push_back(chunk_id(rank, s, c));
        if (st.kind == HCOMM_STEP_WAIT) waits[{st.peer, rank, st.match}].push_back(chunk_id(rank, s, c));
      }
    }
  auto pair = [&](size_t before, size_t after) {
    chunks_[before].partners.push_back(after);
    ++chunks_[after].pending;
  };
  for (size_t r = 0; r < ranks_.size(); ++r)
    for (size_t s = 0; s < ranks_[r].steps.size(); ++s) {
      const hcomm_step_t& st = ranks_[r].steps[s];
      const int rank = static_cast<int>(r);
      for (uint32_t d = 0; d < st.ndeps; ++d) {
        const size_t dep = static_cast<size_t>(st.deps[d]);
        if (st.whole_deps & (1u << d)) {
          whole_waiters_[r][dep].push_back(s);
          for (uint32_t c = 0; c < st.nchunks; ++c) ++chunks_[chunk_id(rank, s, c)].pending;
        } else {
          for (uint32_t c = 0; c < st.nchunks; ++c) {
            chunk_waiters_[chunk_id(rank, dep, c)].push_back(chunk_id(rank, s, c));
            ++chunks_[chunk_id(rank, s, c)].pending;
          }
        }
      }
      if (st.kind == HCOMM_STEP_SEND) {
        const size_t receive = receives.at({rank, st.peer, st.match});
        for (uint32_t c = 0; c < st.nchunks; ++c) {
          pair(chunk_id(rank, s, c), chunk_id(st.peer, receive, c));
          chunks_[chunk_id(st.peer, receive, c)].sender = chunk_id(rank, s, c);
        }
      }
    }
  // The core raises the signals of one pair and flag in order; the j-th
  // completes the j-th WAIT chunk.
  for (const auto& [key, raised] : signals) {
    const std::vector<size_t>& awaited = waits[key];
    for (size_t j = 0; j < raised.size(); ++j) {
      if (j + 1 < raised.size()) pair(raised[j], raised[j + 1]);
      if (j < awaited.size()) pair(raised[j], awaited[j]);
    }
  }
}

void Simulator::satisfy(size_t id) {
  if (--chunks_[id].pending == 0) ready_.push_back(id);
}

void Simulator::execute(size_t id) {
  const Chunk& chunk = chunks_[id];
  const hcomm_step_t& s = step_of(id);
  RankMemory& mine = memory_[static_cast<size_t>(chunk.rank)];
  // The bytes of the step that this chunk covers, as the executor cuts them.
  const uint64_t elems = s.bytes / elem_;
  const uint64_t first = elems * chunk.index / s.nchunks, last = elems * (chunk.index + 1) / s.nchunks;
  const uint64_t offset = first * elem_, bytes = (last - first) * elem_;
  const int divisor = (s.flags & HCOMM_STEP_FINAL) && op_ == HCOMM_AVG ? static_cast<int>(ranks_.size()) : 0;
  auto reduce_into = [&](uint8_t* dst, const uint8_t* a, const uint8_t* b) {
    if (bytes) reduce(dtype_, op_, dst, a, b, bytes / elem_, divisor);
  };
  const bool has_peer = s.peer >= 0 && static_cast<size_t>(s.peer) < memory_.size();
  RankMemory& peer = memory_[has_peer ? static_cast<size_t>(s.peer) : 0];
  // A peer's RECV it publishes is read from its window unless read in place.
  auto peers = [&](const hcomm_bufref_t& ref) {
    const size_t p = has_peer ? static_cast<size_t>(s.peer) : 0;
    if (ref.buffer != HCOMM_BUF_RECV || !publishes_[p] || in_place_[p]) return peer.at(ref);
    return peer.at({.buffer = HCOMM_BUF_WINDOW, .offset = ref.offset});
  };
  switch (s.kind) {
    case HCOMM_STEP_SEND: {
      const uint8_t* src = mine.at(s.src) + offset;
      in_flight_[chunk.partners[0]].assign(src, src + bytes);
      break;
    }
    case HCOMM_STEP_RECV:
    case HCOMM_STEP_RECV_REDUCE: {
      const std::vector<uint8_t> payload = std::move(in_flight_[id]);
      if (payload.size() != bytes || bytes == 0) break;  // the checker reports size mismatches
      if (s.kind == HCOMM_STEP_RECV)
        move(mine.at(s.dst) + offset, payload.data(), bytes);
      else
        reduce_into(mine.at(s.dst) + offset, mine.at(s.src) + offset, payload.data());
      break;
    }
    case HCOMM_STEP_REDUCE:
      reduce_into(mine.at(s.dst) + offset, mine.at(s.src) + offset, mine.at(s.src2) + offset);
      break;
    case HCOMM_STEP_COPY:
      if (!(s.flags & HCOMM_STEP_PUBLISH) || !in_place_[static_cast<size_t>(chunk.rank)])
        move(mine.at(s.dst) + offset, mine.at(s.src) + offset, bytes);
      break;
    case HCOMM_STEP_LOAD:
      move(mine.at(s.dst) + offset, peers(s.src) + offset, bytes);
      break;
    case HCOMM_STEP_LOAD_REDUCE:
      reduce_into(mine.at(s.dst) + offset, mine.at(s.src) + offset, peers(s.src2) + offset);
      break;
    case HCOMM_STEP_STORE:
      move(peer.at(s.dst) + offset, mine.at(s.src) + offset, bytes);
      break;
    case HCOMM_STEP_SIGNAL:  // orders chunks, and hands a payload to its WAIT
      if (s.bytes) {
        const uint8_t* src = mine.at(s.src);
        for (size_t partner : chunk.partners)
          if (step_of(partner).kind == HCOMM_STEP_WAIT) in_flight_[partner].assign(src, src + s.bytes);
      }
      break;
    case HCOMM_STEP_WAIT:
      if (s.bytes) {
        const std::vector<uint8_t> payload = std::move(in_flight_[id]);
        if (payload.size() == s.bytes) move(mine.at(s.dst), payload.data(), s.bytes);
      }
      break;
    default:
      break;
  }
}

void Simulator::complete(size_t id) {
  const Chunk& chunk = chunks_[id];
  for (size_t waiter : chunk_waiters_[id]) satisfy(waiter);
  const hcomm_step_t& s = step_of(id);
  if (++completed_[chunk.rank][chunk.step] < s.nchunks) return;
  for (size_t waiter : whole_waiters_[chunk.rank][chunk.step])
    for (uint32_t c = 0; c < ranks_[chunk.rank].steps[waiter].nchunks; ++c) satisfy(chunk_id(chunk.rank, waiter, c));
}

}  // namespace hcomm::algotest
