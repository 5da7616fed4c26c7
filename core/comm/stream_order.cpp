#include "core/comm/stream_order.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <tuple>

#include "core/comm/communicator.hpp"
#include "core/common/error.hpp"
#include "core/common/log.hpp"

namespace hcomm::comm {

namespace {

// A call's staging area begins with its flag, on a line of its own.
constexpr size_t kFlagBytes = 64;
constexpr size_t kSmallestArea = size_t{64} << 10;

}  // namespace

struct StreamOrder::Lane {
  void* stream = nullptr;
  void* ready = nullptr;  // event: the call on it reached its operation
  void* done = nullptr;   // event: its copies out are queued before this
};

struct StreamOrder::Call {
  StreamOrder* owner;
  Start start;
  uint8_t* area = nullptr;  // pinned: the flag, then the staging
  size_t area_bytes = 0;
  bool has_staging = false;
  exec::Operation* op = nullptr;
  std::shared_ptr<Ticket> ticket;
  uint32_t* flag() const { return reinterpret_cast<uint32_t*>(area); }
};

StreamOrder::StreamOrder(Communicator& comm, const device::Accelerator& accelerator)
    : comm_(comm), accelerator_(accelerator), device_(accelerator.plugin()) {
  if (!accelerator.streams())
    HCOMM_THROW(HCOMM_ERR_UNSUPPORTED,
                "device plugin %s queues no stream-ordered work (its interface predates plugin ABI 1.15): pass a NULL "
                "stream, or use the blocking form",
                accelerator.name());
  // Its thread and the caller's take turns on the connections.
  if (!comm.links().connections().any_thread())
    HCOMM_THROW(HCOMM_ERR_UNSUPPORTED,
                "stream-ordered calls (those given a stream, and nonblocking ones on device buffers) run on a "
                "thread of their own, and a transport of this communicator's connections takes calls from the thread "
                "that made it only (ucx, ofi, verbs as built here): use a NULL stream and the blocking form, or make "
                "the communicator with HCOMM_TRANSPORTS=shm,tcp");
  lanes_.resize(static_cast<size_t>(std::max(1, device_.stream_count())));
  try {
    for (Lane& lane : lanes_) {
      accelerator_.check(device_.stream_create(&lane.stream), "creating a stream");
      accelerator_.check(device_.event_create(&lane.ready), "creating an event");
      accelerator_.check(device_.event_create(&lane.done), "creating an event");
    }
    accelerator_.check(device_.event_create(&caller_event_), "creating an event");
  } catch (...) {
    release_lanes();
    throw;
  }
  thread_ = std::thread([this] { run(); });
}

void StreamOrder::release_lanes() {
  for (Lane& lane : lanes_) {
    if (lane.stream) device_.synchronize(lane.stream);
    if (lane.stream) device_.stream_destroy(lane.stream);
    if (lane.ready) device_.event_destroy(lane.ready);
    if (lane.done) device_.event_destroy(lane.done);
  }
  if (caller_event_) device_.event_destroy(caller_event_);
}

StreamOrder::~StreamOrder() {
  {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return pending_ == 0; });
    stopping_ = true;
  }
  changed_.notify_all();
  thread_.join();
  release_lanes();
  for (auto& [area, bytes] : free_staging_) accelerator_.free_pinned(area);
  for (auto& call : graph_calls_) accelerator_.free_pinned(call->area);
}

void StreamOrder::enqueue(void* stream, std::vector<Piece> pieces, const std::shared_ptr<Ticket>& ticket) {
  std::string earlier;
  if (const hcomm_result_t rc = error(&earlier); rc != HCOMM_SUCCESS)
    HCOMM_THROW(rc, "an earlier stream-ordered call failed: %s; the communicator is unusable, destroy it",
                earlier.c_str());
  int capturing = 0;
  accelerator_.check(device_.capturing(stream, &capturing), "asking whether the stream is captured");
  const auto check = [&](hcomm_result_t rc, const char* what) { accelerator_.check(rc, what); };
  check(device_.event_record(caller_event_, stream), "marking the caller's stream");
  const size_t first_lane = next_lane_;
  for (Piece& piece : pieces) {
    Lane& lane = lanes_[next_lane_++ % lanes_.size()];
    auto call = std::make_unique<Call>(Call{.owner = this, .start = std::move(piece.start), .ticket = ticket});
    std::tie(call->area, call->area_bytes) = take_staging(kFlagBytes + piece.staging.bytes);
    call->has_staging = piece.staging.bytes > 0;
    uint8_t* const host = call->area + kFlagBytes;
    try {
      check(device_.stream_wait_event(lane.stream, caller_event_), "waiting for the caller's stream");
      // Calls reach their operations in call order, on whichever stream: the
      // order every rank runs them in. A graph's calls keep their capture's order.
      if (!capturing && last_ready_) check(device_.stream_wait_event(lane.stream, last_ready_), "ordering the calls");
      for (const device::Staging::Copy& c : piece.staging.in)
        check(device_.copy(host + c.offset, c.device, c.bytes, lane.stream), "copying to staging memory");
    } catch (...) {
      return_staging(call->area, call->area_bytes);
      throw;
    }
    if (!capturing) {
      const std::lock_guard lock(mutex_);
      ++pending_;
      if (ticket) ++ticket->left;
    }
    // Once the host call is queued, the call is the runtime's to run: a
    // failure from here on leaves it to the device's own error.
    Call* queued = call.release();
    try {
      check(device_.host_call(lane.stream, &on_ready, queued), "queueing the operation");
      last_ready_ = nullptr;
      if (!capturing) {
        check(device_.event_record(lane.ready, lane.stream), "marking the operation's start");
        last_ready_ = lane.ready;
      }
      check(device_.wait_flag(lane.stream, queued->flag()), "queueing the wait for the operation");
      for (const device::Staging::Copy& c : piece.staging.out)
        check(device_.copy(c.device, host + c.offset, c.bytes, lane.stream), "copying from staging memory");
      check(device_.event_record(lane.done, lane.stream), "marking the call's end");
      if (capturing) {
        const std::lock_guard lock(mutex_);
        graph_calls_.emplace_back(queued);
      } else {
        check(device_.host_call(lane.stream, &on_released, queued), "queueing the call's release");
      }
    } catch (const Error& e) {
      record(e);
      throw;
    }
  }
  // The caller's stream goes on once every piece is done (the pieces took
  // the lanes in turn: the last mark of each lane used covers them); a
  // nonblocking call's request waits for them instead.
  if (ticket) return;
  try {
    for (size_t k = 0; k < std::min(pieces.size(), lanes_.size()); ++k)
      check(device_.stream_wait_event(stream, lanes_[(first_lane + k) % lanes_.size()].done),
            "making the caller's stream wait for the call");
  } catch (const Error& e) {
    record(e);
    throw;
  }
}

void StreamOrder::record(const Error& e) {
  const std::lock_guard lock(mutex_);
  if (error_ != HCOMM_SUCCESS) return;
  error_ = e.code();
  error_text_ = e.what();
  HCOMM_WARN(EXEC, "a stream-ordered call failed: %s", e.what());
}

void StreamOrder::on_ready(void* p) {
  auto* call = static_cast<Call*>(p);
  StreamOrder& order = *call->owner;
  const std::lock_guard lock(order.mutex_);
  order.ready_.push_back(call);
  order.any_ready_.store(true, std::memory_order_release);
  order.changed_.notify_all();
}

void StreamOrder::on_released(void* p) {
  auto* call = static_cast<Call*>(p);
  StreamOrder& order = *call->owner;
  const std::lock_guard lock(order.mutex_);
  order.free_staging_.emplace_back(call->area, call->area_bytes);
  if (call->ticket) --call->ticket->left;
  delete call;
  --order.pending_;
  order.changed_.notify_all();  // under the lock: the destructor waits for it
}

void StreamOrder::run() {
  std::vector<Call*> running;
  std::vector<exec::Operation*> ops;
  const std::function<bool()> more = [this] { return any_ready_.load(std::memory_order_acquire); };
  for (;;) {
    std::deque<Call*> starting;
    {
      std::unique_lock lock(mutex_);
      if (running.empty()) changed_.wait(lock, [&] { return stopping_ || !ready_.empty(); });
      if (running.empty() && ready_.empty() && stopping_) return;
      starting.swap(ready_);
      any_ready_.store(false, std::memory_order_relaxed);
    }
    const std::lock_guard turn(turn_);
    for (Call* call : starting) {
      try {
        if (error(nullptr) != HCOMM_SUCCESS) {
          finish(*call, false);
          continue;
        }
        call->op = call->start(comm_, call->has_staging ? call->area + kFlagBytes : nullptr);
        running.push_back(call);
      } catch (const Error& e) {
        record(e);
        finish(*call, false);
      }
    }
    if (running.empty()) continue;
    ops.clear();
    for (const Call* call : running) ops.push_back(call->op);
    try {
      comm_.wait_any(ops, more);
      std::erase_if(running, [&](Call* call) {
        if (!call->op->done()) return false;
        comm_.test(call->op);
        finish(*call, true);
        return true;
      });
    } catch (const Error& e) {
      record(e);  // the communicator dropped its operations
      for (Call* call : running) finish(*call, false);
      running.clear();
    }
  }
}

void StreamOrder::finish(Call& call, bool ok) {
  // The device's wait ends on any non-zero value; the caller learns of a
  // failure from hcomm_comm_get_async_error.
  __atomic_store_n(call.flag(), ok ? 1u : 2u, __ATOMIC_RELEASE);
}

std::unique_lock<std::mutex> StreamOrder::host_turn() {
  {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return pending_ == 0; });
  }
  return std::unique_lock(turn_);
}

bool StreamOrder::finished(const Ticket& ticket, bool wait) {
  std::unique_lock lock(mutex_);
  if (wait) changed_.wait(lock, [&] { return ticket.left == 0; });
  if (ticket.left) return false;
  if (error_ != HCOMM_SUCCESS) HCOMM_THROW(error_, "a stream-ordered call failed: %s", error_text_.c_str());
  return true;
}

hcomm_result_t StreamOrder::error(std::string* text) const {
  const std::lock_guard lock(mutex_);
  if (text) *text = error_text_;
  return error_;
}

std::pair<uint8_t*, size_t> StreamOrder::take_staging(size_t bytes) {
  {
    const std::lock_guard lock(mutex_);
    auto best = free_staging_.end();
    for (auto it = free_staging_.begin(); it != free_staging_.end(); ++it)
      if (it->second >= bytes && (best == free_staging_.end() || it->second < best->second)) best = it;
    if (best != free_staging_.end()) {
      const std::pair<uint8_t*, size_t> area = *best;
      free_staging_.erase(best);
      return area;
    }
  }
  const size_t size = std::max(kSmallestArea, std::bit_ceil(bytes));
  auto* area = static_cast<uint8_t*>(accelerator_.alloc_pinned(size));
  std::memset(area, 0, kFlagBytes);
  return {area, size};
}

void StreamOrder::return_staging(uint8_t* area, size_t bytes) {
  const std::lock_guard lock(mutex_);
  free_staging_.emplace_back(area, bytes);
}

}  // namespace hcomm::comm
