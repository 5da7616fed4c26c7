#include "core/exec/operation.hpp"

#include <algorithm>
#include <utility>

#include "core/common/error.hpp"
#include "core/common/names.hpp"
#include "core/device/copy.hpp"
#include "core/device/reduce.hpp"

namespace hcomm::exec {

namespace {

const char* step_verb(uint32_t kind) {
  switch (kind) {
    case HCOMM_STEP_SEND: return "send to";
    case HCOMM_STEP_RECV: return "receive from";
    case HCOMM_STEP_RECV_REDUCE: return "receive-reduce from";
    case HCOMM_STEP_LOAD: return "load from";
    case HCOMM_STEP_LOAD_REDUCE: return "load-reduce from";
    case HCOMM_STEP_STORE: return "store to";
    case HCOMM_STEP_SIGNAL: return "signal to";
    case HCOMM_STEP_WAIT: return "wait for a signal from";
    default: return nullptr;  // a local step
  }
}

// AVG divides where a reduction produces the final value.
int reduction_divisor(const hcomm_step_t& s, const hcomm_coll_args_t& a, int nranks) {
  return (s.flags & HCOMM_STEP_FINAL) && a.op == HCOMM_AVG ? nranks : 0;
}

// A result that nothing in the call reads again may go past the cache; one
// that a later step or a peer reads stays in it.
device::Stores result_stores(const hcomm_step_t& s) {
  return s.flags & HCOMM_STEP_UNREAD ? device::stores_for(s.bytes) : device::Stores::kCached;
}

}  // namespace

void RunState::reset(const Schedule& s) {
  const uint32_t n = static_cast<uint32_t>(s.steps.size());
  steps.assign(n, Step{});
  queue_head = 0;
  polled.clear();
  remaining = n;
  cursor = 0;
  if (s.in_order) return;  // runs without queues
  chunk_done.assign(s.total_chunks, 0);
  queue.resize(n);
  for (uint32_t i = 0; i < n; ++i) queue[i] = i, steps[i].queued = true;
}

StatePool::~StatePool() { delete spare_; }

std::unique_ptr<RunState> StatePool::take() const {
  std::unique_ptr<RunState> state(std::exchange(spare_, nullptr));
  return state ? std::move(state) : std::make_unique<RunState>();
}

void StatePool::give(std::unique_ptr<RunState> state) const {
  if (!spare_) spare_ = state.release();
}

Operation::Operation(std::shared_ptr<const Schedule> schedule, Buffers buffers, uint32_t seq, uint64_t tag_base,
                     int nranks, uint64_t signature, std::shared_ptr<const device::UserOp> user_op)
    : schedule_(std::move(schedule)),
      steps_(schedule_->steps),
      buffers_(buffers),
      seq_(seq),
      tag_base_(tag_base),
      nranks_(nranks),
      signature_(signature),
      user_op_(std::move(user_op)),
      reduction_{schedule_->args.dtype, schedule_->args.op, schedule_->args.dtype_size, user_op_.get()},
      state_(schedule_->pool.take()) {
  state_->reset(*schedule_);
}

Operation::~Operation() { schedule_->pool.give(std::move(state_)); }

void Operation::restart(Buffers buffers, uint32_t seq, uint64_t tag_base, uint64_t signature,
                        std::shared_ptr<const device::UserOp> user_op) {
  if (!done() || mapped_.running())
    HCOMM_THROW(HCOMM_ERR_INTERNAL, "%s restarted before its last run ended", describe().c_str());
  buffers_ = buffers;
  seq_ = seq;
  tag_base_ = tag_base;
  signature_ = signature;
  user_op_ = std::move(user_op);
  reduction_.user = user_op_.get();
  events_ = 0;
  state_->reset(*schedule_);
}

const char* Operation::collective() const { return coll_name(schedule_->args.coll); }

uint8_t* Operation::resolve(const hcomm_bufref_t& ref) const {
  switch (ref.buffer) {
    case HCOMM_BUF_SEND: return const_cast<uint8_t*>(static_cast<const uint8_t*>(buffers_.send)) + ref.offset;
    case HCOMM_BUF_RECV: return static_cast<uint8_t*>(buffers_.recv) + ref.offset;
    case HCOMM_BUF_WINDOW: return mapped_.window() + ref.offset;
    default: return static_cast<uint8_t*>(buffers_.scratch) + ref.offset;
  }
}

// Both ends of a transfer compute the same tag.
uint64_t Operation::tag(const hcomm_step_t& s, uint32_t chunk) const {
  return tag_base_ | (uint64_t{s.match} << 16) | chunk;
}

bool Operation::ready(uint32_t step, uint32_t chunk) const {
  const hcomm_step_t& s = steps_[step];
  for (uint32_t d = 0; d < s.ndeps; ++d) {
    const uint32_t dep = static_cast<uint32_t>(s.deps[d]);
    bool whole = s.whole_deps & (1u << d);
    if (whole ? state_->steps[dep].completed < steps_[dep].nchunks : !chunk_done(dep, chunk)) return false;
  }
  // A signal's occurrences are raised in order, since a flag only grows.
  if (s.kind == HCOMM_STEP_SIGNAL) {
    const int32_t previous = schedule_->previous_signal[step];
    if (chunk > 0 ? !chunk_done(step, chunk - 1)
                  : previous >= 0 && state_->steps[previous].completed < steps_[previous].nchunks)
      return false;
  }
  // A chunk reuses the in-flight slot (and staging) of chunk - kMaxInflightChunks.
  return chunk < kMaxInflightChunks || chunk_done(step, chunk - kMaxInflightChunks);
}

uint8_t* Operation::staging(uint32_t step, uint32_t chunk) const {
  return static_cast<uint8_t*>(buffers_.scratch) + schedule_->staging_offset[step] +
         (chunk % kMaxInflightChunks) * schedule_->staging_slot[step];
}

void Operation::enqueue(uint32_t step) {
  RunState::Step& s = state_->steps[step];
  if (s.queued || s.completed == steps_[step].nchunks) return;
  s.queued = true;
  state_->queue.push_back(step);
}

void Operation::set_polled(uint32_t step) {
  RunState::Step& s = state_->steps[step];
  if (s.polled) return;
  s.polled = true;
  state_->polled.push_back(step);
}

Operation::Started Operation::start(uint32_t step, uint32_t chunk, PeerIO& io) {
  const hcomm_step_t& s = steps_[step];
  uint64_t off, bytes;
  Schedule::chunk_range(s, schedule_->args.dtype_size, chunk, &off, &bytes);
  void* req = nullptr;
  switch (s.kind) {
    case HCOMM_STEP_SEND: req = io.isend(s.peer, resolve(s.src) + off, bytes, tag(s, chunk)); break;
    case HCOMM_STEP_RECV: req = io.irecv(s.peer, resolve(s.dst) + off, bytes, tag(s, chunk)); break;
    case HCOMM_STEP_RECV_REDUCE: req = io.irecv(s.peer, staging(step, chunk), bytes, tag(s, chunk)); break;
    case HCOMM_STEP_WAIT:
      if (!try_wait(s, step, chunk)) return Started::kRetry;
      finish(step, chunk, off, bytes);
      return Started::kDone;
    case HCOMM_STEP_SIGNAL:
    case HCOMM_STEP_LOAD:
    case HCOMM_STEP_LOAD_REDUCE:
    case HCOMM_STEP_STORE:
      run_mapped(s, step, chunk, off, bytes);
      finish(step, chunk, off, bytes);
      return Started::kDone;
    default:  // local steps run at once
      finish(step, chunk, off, bytes);
      return Started::kDone;
  }
  if (!req) return Started::kRetry;
  state_->steps[step].request[chunk % kMaxInflightChunks] = req;
  return Started::kInFlight;
}

void Operation::run_mapped(const hcomm_step_t& s, uint32_t step, uint32_t chunk, uint64_t off, uint64_t bytes) {
  const hcomm_coll_args_t& a = schedule_->args;
  switch (s.kind) {
    case HCOMM_STEP_SIGNAL:
      mapped_.signal(s.peer, s.match, schedule_->signal_base[step] + chunk + 1, s.bytes ? resolve(s.src) : nullptr,
                     s.bytes);
      break;
    case HCOMM_STEP_LOAD: mapped_.load(s.peer, s.src, off, resolve(s.dst) + off, bytes); break;
    case HCOMM_STEP_LOAD_REDUCE:
      mapped_.load_reduce(s.peer, s.src2, off, resolve(s.dst) + off, resolve(s.src) + off, bytes, reduction_,
                          reduction_divisor(s, a, nranks_), result_stores(s));
      break;
    case HCOMM_STEP_STORE: mapped_.store(s.peer, s.dst, off, resolve(s.src) + off, bytes); break;
    default: break;
  }
}

bool Operation::try_wait(const hcomm_step_t& s, uint32_t step, uint32_t chunk) {
  return mapped_.wait(s.peer, s.match, schedule_->signal_base[step] + chunk + 1, s.bytes ? resolve(s.dst) : nullptr,
                      s.bytes);
}

// Local work of a chunk (bytes at offset `off` of the step) whose data is here.
void Operation::compute(const hcomm_step_t& s, uint32_t step, uint32_t chunk, uint64_t off, uint64_t bytes) {
  const hcomm_coll_args_t& a = schedule_->args;
  switch (s.kind) {
    case HCOMM_STEP_RECV_REDUCE:
      device::reduce(reduction_, resolve(s.dst) + off, resolve(s.src) + off, staging(step, chunk),
                     elements(bytes, a.dtype_size), reduction_divisor(s, a, nranks_), result_stores(s));
      break;
    case HCOMM_STEP_REDUCE:
      device::reduce(reduction_, resolve(s.dst) + off, resolve(s.src) + off, resolve(s.src2) + off,
                     elements(bytes, a.dtype_size), reduction_divisor(s, a, nranks_), result_stores(s));
      break;
    case HCOMM_STEP_COPY:
      if (!(s.flags & HCOMM_STEP_PUBLISH) || !mapped_.recv_in_place())
        device::copy(resolve(s.dst) + off, resolve(s.src) + off, bytes);
      break;
    default: break;
  }
}

// A chunk's local work, then marks it done and wakes the steps that wait for it.
void Operation::finish(uint32_t step, uint32_t chunk, uint64_t off, uint64_t bytes) {
  const hcomm_step_t& s = steps_[step];
  compute(s, step, chunk, off, bytes);
  RunState& st = *state_;
  RunState::Step& ss = st.steps[step];
  st.chunk_done[schedule_->chunk_base[step] + chunk] = 1;
  ss.request[chunk % kMaxInflightChunks] = nullptr;
  if (++ss.completed == s.nchunks) --st.remaining;
  ++events_;
  for (uint32_t i = schedule_->dependents_begin[step]; i < schedule_->dependents_begin[step + 1]; ++i)
    enqueue(schedule_->dependents[i]);
}

void Operation::try_start(uint32_t step, PeerIO& io) {
  RunState::Step& ss = state_->steps[step];
  const uint32_t nchunks = steps_[step].nchunks;
  while (ss.started < nchunks && ready(step, ss.started)) {
    Started r = start(step, ss.started, io);
    if (r == Started::kRetry) {
      set_polled(step);
      return;
    }
    ++ss.started;
    if (r == Started::kInFlight) set_polled(step);
  }
}

// Completes the step's chunks whose messages arrived; true while some are
// still in flight. The step is tried again: a chunk slot may have freed, or
// its start was refused before.
bool Operation::poll(uint32_t step, PeerIO& io) {
  const hcomm_step_t& s = steps_[step];
  RunState::Step& ss = state_->steps[step];
  bool in_flight = false;
  for (uint32_t c = ss.started > kMaxInflightChunks ? ss.started - kMaxInflightChunks : 0; c < ss.started; ++c) {
    void* req = ss.request[c % kMaxInflightChunks];
    if (chunk_done(step, c) || !req) continue;
    size_t arrived = 0;
    if (!io.test(s.peer, req, &arrived)) {
      in_flight = true;
      continue;
    }
    uint64_t off, bytes;
    Schedule::chunk_range(s, schedule_->args.dtype_size, c, &off, &bytes);
    if (s.kind != HCOMM_STEP_SEND && arrived != bytes)
      throw Error(HCOMM_ERR_INVALID_ARGUMENT,
                  format("rank %d sent %zu bytes where this rank expects %llu: the ranks passed different counts, "
                         "datatypes or roots (every rank must describe the same call)",
                         s.peer, arrived, static_cast<unsigned long long>(bytes)));
    finish(step, c, off, bytes);
  }
  enqueue(step);
  return in_flight;
}

std::string Operation::describe() const {
  return format("%s (call %u, algorithm %s)", collective(), seq_, schedule_->algorithm.c_str());
}

std::string Operation::context(size_t step) const {
  const hcomm_step_t& s = steps_[step];
  if (!step_verb(s.kind))
    return format("%s (call %u, algorithm %s, step %zu)", collective(), seq_, schedule_->algorithm.c_str(), step);
  return format("%s (call %u, algorithm %s, step %zu: %s rank %d)", collective(), seq_, schedule_->algorithm.c_str(),
                step, step_verb(s.kind), s.peer);
}

// Schedule::in_order: each step's chunks in turn (a chain's chunk by chunk),
// up to a WAIT whose flag is not raised yet, where the next advance resumes.
bool Operation::advance_in_order() {
  RunState& st = *state_;
  const uint32_t n = static_cast<uint32_t>(steps_.size());
  while (st.cursor < n) {
    const uint32_t first = st.cursor, end = schedule_->chain_end[first];
    if (!(end > first + 1 ? run_chain(first, end) : run_step(first))) return false;
    st.cursor = end;
  }
  if (mapped_.running()) mapped_.end();
  return true;
}

// The step's next chunk; false at a WAIT not yet raised.
bool Operation::run_chunk(uint32_t step) {
  const hcomm_step_t& s = steps_[step];
  RunState::Step& ss = state_->steps[step];
  uint64_t off, bytes;
  Schedule::chunk_range(s, schedule_->args.dtype_size, ss.completed, &off, &bytes);
  try {
    if (s.kind == HCOMM_STEP_WAIT) {
      if (!try_wait(s, step, ss.completed)) return false;
    } else {
      run_mapped(s, step, ss.completed, off, bytes);
      compute(s, step, ss.completed, off, bytes);
    }
  } catch (const Error& e) {
    throw Error(e.code(), context(step) + " failed: " + e.what());
  }
  ++events_;
  if (++ss.completed == s.nchunks) --state_->remaining;
  return true;
}

// The chunks of one step not yet done; false at a WAIT not yet raised.
bool Operation::run_step(uint32_t step) {
  while (state_->steps[step].completed < steps_[step].nchunks)
    if (!run_chunk(step)) return false;
  return true;
}

// Steps [first, end), a chain (Schedule::chain_end): its WAITs, then its data
// steps chunk by chunk; false at a WAIT not yet raised.
bool Operation::run_chain(uint32_t first, uint32_t end) {
  for (uint32_t step = first; step < end; ++step)
    if (steps_[step].kind == HCOMM_STEP_WAIT && !run_step(step)) return false;
  for (uint32_t chunk = 0; chunk < steps_[first].nchunks; ++chunk)
    for (uint32_t step = first; step < end; ++step)
      if (steps_[step].kind != HCOMM_STEP_WAIT) run_chunk(step);
  return true;
}

bool Operation::advance(PeerIO& io) {
  RunState& st = *state_;
  if (done()) return true;
  if (schedule_->mapped && !mapped_.running() && !mapped_.begin(io.mapped(), *schedule_, buffers_, signature_))
    return false;
  if (schedule_->in_order) return advance_in_order();
  auto guarded = [&](uint32_t step, auto&& body) {
    try {
      return body();
    } catch (const Error& e) {
      throw Error(e.code(), context(step) + " failed: " + e.what());
    }
  };
  size_t keep = 0;
  for (size_t i = 0; i < st.polled.size(); ++i) {
    const uint32_t step = st.polled[i];
    if (guarded(step, [&] { return poll(step, io); }))
      st.polled[keep++] = step;
    else
      st.steps[step].polled = false;
  }
  st.polled.resize(keep);
  while (st.queue_head < st.queue.size()) {
    const uint32_t step = st.queue[st.queue_head++];
    st.steps[step].queued = false;
    guarded(step, [&] { try_start(step, io); });
  }
  st.queue.clear();
  st.queue_head = 0;
  if (done() && mapped_.running()) mapped_.end();
  return done();
}

// f(step) for the first step not done of each peer this rank still waits on.
template <class F>
void Operation::for_each_pending_peer(F f) const {
  std::vector<int> seen;
  for (size_t i = 0; i < steps_.size(); ++i) {
    const hcomm_step_t& s = steps_[i];
    if (state_->steps[i].completed == s.nchunks || !step_verb(s.kind)) continue;
    if (std::find(seen.begin(), seen.end(), s.peer) != seen.end()) continue;
    seen.push_back(s.peer);
    f(s);
  }
}

void Operation::pending_peer_ranks(std::vector<int>& out) const {
  for_each_pending_peer([&](const hcomm_step_t& s) {
    if (std::find(out.begin(), out.end(), s.peer) == out.end()) out.push_back(s.peer);
  });
}

std::string Operation::pending_peers() const {
  std::string out;
  for_each_pending_peer([&](const hcomm_step_t& s) {
    out += (out.empty() ? "" : ", ") + format("rank %d (%s)", s.peer, step_verb(s.kind));
  });
  return out.empty() ? "no peer" : out;
}

}  // namespace hcomm::exec
