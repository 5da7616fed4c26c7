#include "core/exec/operation.hpp"

#include <algorithm>
#include <cstring>

#include "core/algorithm/tune.hpp"
#include "core/common/error.hpp"
#include "core/device/reduce.hpp"

namespace hcomm::exec {

namespace {

const char* step_verb(uint32_t kind) {
  switch (kind) {
    case HCOMM_STEP_SEND: return "send to";
    case HCOMM_STEP_RECV: return "receive from";
    case HCOMM_STEP_RECV_REDUCE: return "receive-reduce from";
    default: return "local step";
  }
}

}  // namespace

Operation::Operation(std::shared_ptr<const Schedule> schedule, Buffers buffers, uint32_t seq, uint64_t tag_base,
                     int nranks)
    : schedule_(std::move(schedule)),
      steps_(schedule_->steps),
      buffers_(buffers),
      seq_(seq),
      tag_base_(tag_base),
      nranks_(nranks) {
  state_.resize(steps_.size());
  for (size_t i = 0; i < steps_.size(); ++i) state_[i].chunk_done.assign(steps_[i].nchunks, 0);
}

const char* Operation::collective() const { return algorithm::coll_name(schedule_->args.coll); }

uint8_t* Operation::resolve(const hcomm_bufref_t& ref) const {
  switch (ref.buffer) {
    case HCOMM_BUF_SEND: return const_cast<uint8_t*>(static_cast<const uint8_t*>(buffers_.send)) + ref.offset;
    case HCOMM_BUF_RECV: return static_cast<uint8_t*>(buffers_.recv) + ref.offset;
    default: return static_cast<uint8_t*>(buffers_.scratch) + ref.offset;
  }
}

// Both ends of a transfer compute the same tag.
uint64_t Operation::tag(const hcomm_step_t& s, uint32_t chunk) const {
  return tag_base_ | (uint64_t{s.match} << 16) | chunk;
}

bool Operation::ready(size_t step, uint32_t chunk) const {
  const hcomm_step_t& s = steps_[step];
  for (uint32_t d = 0; d < s.ndeps; ++d) {
    const StepState& dep = state_[s.deps[d]];
    bool whole = s.whole_deps & (1u << d);
    if (whole ? dep.completed < steps_[s.deps[d]].nchunks : !dep.chunk_done[chunk]) return false;
  }
  // A chunk reuses the in-flight slot (and staging) of chunk - kMaxInflightChunks.
  return chunk < kMaxInflightChunks || state_[step].chunk_done[chunk - kMaxInflightChunks];
}

uint8_t* Operation::staging(size_t step, uint32_t chunk) const {
  return static_cast<uint8_t*>(buffers_.scratch) + schedule_->staging_offset[step] +
         (chunk % kMaxInflightChunks) * schedule_->staging_slot[step];
}

bool Operation::start(size_t step, uint32_t chunk, PeerIO& io) {
  const hcomm_step_t& s = steps_[step];
  uint64_t off, bytes;
  Schedule::chunk_range(s, schedule_->args.dtype_size, chunk, &off, &bytes);
  void* req = nullptr;
  switch (s.kind) {
    case HCOMM_STEP_SEND: req = io.isend(s.peer, resolve(s.src) + off, bytes, tag(s, chunk)); break;
    case HCOMM_STEP_RECV: req = io.irecv(s.peer, resolve(s.dst) + off, bytes, tag(s, chunk)); break;
    case HCOMM_STEP_RECV_REDUCE: req = io.irecv(s.peer, staging(step, chunk), bytes, tag(s, chunk)); break;
    default:  // local steps run at once
      finish(step, chunk);
      return true;
  }
  if (!req) return false;
  state_[step].request[chunk % kMaxInflightChunks] = req;
  return true;
}

// Local work of a chunk whose data is here, then marks it done.
void Operation::finish(size_t step, uint32_t chunk) {
  const hcomm_step_t& s = steps_[step];
  const hcomm_coll_args_t& a = schedule_->args;
  uint64_t off, bytes;
  Schedule::chunk_range(s, a.dtype_size, chunk, &off, &bytes);
  size_t count = bytes / a.dtype_size;
  int divisor = (s.flags & HCOMM_STEP_FINAL) && a.op == HCOMM_AVG ? nranks_ : 0;
  switch (s.kind) {
    case HCOMM_STEP_RECV_REDUCE:
      device::reduce(a.dtype, a.op, resolve(s.dst) + off, resolve(s.src) + off, staging(step, chunk), count, divisor);
      break;
    case HCOMM_STEP_REDUCE:
      device::reduce(a.dtype, a.op, resolve(s.dst) + off, resolve(s.src) + off, resolve(s.src2) + off, count,
                     divisor);
      break;
    case HCOMM_STEP_COPY:
      if (resolve(s.dst) != resolve(s.src)) std::memcpy(resolve(s.dst) + off, resolve(s.src) + off, bytes);
      break;
    default: break;
  }
  StepState& st = state_[step];
  st.chunk_done[chunk] = 1;
  st.request[chunk % kMaxInflightChunks] = nullptr;
  ++st.completed;
  ++events_;
}

void Operation::advance_step(size_t step, PeerIO& io) {
  const hcomm_step_t& s = steps_[step];
  StepState& st = state_[step];
  uint32_t first = st.started > kMaxInflightChunks ? st.started - kMaxInflightChunks : 0;
  for (uint32_t c = first; c < st.started; ++c) {
    void* req = st.request[c % kMaxInflightChunks];
    if (!st.chunk_done[c] && req && io.test(s.peer, req)) finish(step, c);
  }
  while (st.started < s.nchunks && ready(step, st.started) && start(step, st.started, io)) ++st.started;
}

std::string Operation::describe() const {
  return format("%s (call %u, algorithm %s)", collective(), seq_, schedule_->algorithm.c_str());
}

std::string Operation::context(size_t step) const {
  const hcomm_step_t& s = steps_[step];
  if (s.kind > HCOMM_STEP_RECV_REDUCE)
    return format("%s (call %u, algorithm %s, step %zu)", collective(), seq_, schedule_->algorithm.c_str(), step);
  return format("%s (call %u, algorithm %s, step %zu: %s rank %d)", collective(), seq_, schedule_->algorithm.c_str(),
                step, step_verb(s.kind), s.peer);
}

bool Operation::advance(PeerIO& io) {
  for (size_t i = first_pending_; i < steps_.size(); ++i) {
    try {
      advance_step(i, io);
    } catch (const Error& e) {
      throw Error(e.code(), context(i) + " failed: " + e.what());
    }
  }
  while (first_pending_ < steps_.size() && state_[first_pending_].completed == steps_[first_pending_].nchunks)
    ++first_pending_;
  return done();
}

std::string Operation::pending_peers() const {
  std::string out;
  std::vector<int> seen;
  for (size_t i = first_pending_; i < steps_.size(); ++i) {
    const hcomm_step_t& s = steps_[i];
    if (state_[i].completed == s.nchunks || s.kind > HCOMM_STEP_RECV_REDUCE) continue;
    if (std::find(seen.begin(), seen.end(), s.peer) != seen.end()) continue;
    seen.push_back(s.peer);
    out += (out.empty() ? "" : ", ") + format("rank %d (%s)", s.peer, step_verb(s.kind));
  }
  return out.empty() ? "no peer" : out;
}

}  // namespace hcomm::exec
