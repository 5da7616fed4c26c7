// A communicator's stream-ordered calls (those that name a stream): a call
// queues its work behind the work queued on its stream so far and returns;
// the stream's later work waits for it. The operation itself runs on a
// thread of the communicator once the stream reaches it, in call order, on
// host memory: device buffers are copied to pinned staging memory before it
// and back after, on the communicator's own streams (the device plugin's),
// used in turn so that one call's copies overlap another's operation.
//
// Per piece of a call, on one of its streams: wait for the caller's stream
// and for the previous piece to be ready; copy in; a host call that hands the
// operation to the thread; a wait on the device for the thread's flag; copy
// out. The caller's stream then waits for the call's pieces. A call captured
// into a graph keeps its staging memory, and each replay runs the operation
// again.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/common/error.hpp"
#include "core/device/accelerator.hpp"
#include "core/device/staging.hpp"
#include "core/exec/operation.hpp"
#include "hcomm/hcomm.h"

namespace hcomm::comm {

class Communicator;

class StreamOrder {
 public:
  // Starts a call's operation with its staging area (null where it has none).
  using Start = std::function<exec::Operation*(Communicator&, uint8_t* staging)>;
  // What a nonblocking call on device buffers waits for: its queued calls
  // (its pieces) done, copies out included. Guarded by the StreamOrder.
  struct Ticket {
    size_t left = 0;
    hcomm_status_t status{.source = HCOMM_ANY_SOURCE, .tag = HCOMM_ANY_TAG, .bytes = 0, .cancelled = 0};  // a receive's
  };

  StreamOrder(Communicator& comm, const device::Accelerator& accelerator);
  // Waits for the calls queued (not those of graphs, which must not be
  // replayed after the communicator is gone).
  ~StreamOrder();
  StreamOrder(const StreamOrder&) = delete;
  StreamOrder& operator=(const StreamOrder&) = delete;

  // One operation of a call and its staging.
  struct Piece {
    device::Staging staging;
    Start start;
  };
  // Queues one checked call of one or more pieces on `stream` (NULL: the
  // device's default stream): the pieces go to the streams in turn, each
  // after the caller's stream's work so far; the caller's stream's later
  // work waits for them all, unless `ticket` (a nonblocking call's request)
  // does. Throws the first failure of an earlier call, or the plugin's error.
  void enqueue(void* stream, std::vector<Piece> pieces, const std::shared_ptr<Ticket>& ticket = nullptr);
  // Whether ticket's calls are done (`wait`: once they are); throws the
  // first failure of the communicator's stream-ordered calls.
  bool finished(const Ticket& ticket, bool wait);
  // Communicator::host_turn.
  std::unique_lock<std::mutex> host_turn();
  // The first failure of a queued call (HCOMM_SUCCESS while none) and its text.
  hcomm_result_t error(std::string* text) const;

 private:
  struct Lane;
  struct Call;
  static void on_ready(void* call);     // host call: the stream reached the operation
  static void on_released(void* call);  // host call: its copies out are done
  void run();
  void finish(Call& call, bool ok);
  void record(const Error& e);  // the first failure
  void release_lanes();  // after their work: streams and events
  // A pinned area of at least `bytes` (its flag 0) and its size.
  std::pair<uint8_t*, size_t> take_staging(size_t bytes);
  void return_staging(uint8_t* area, size_t bytes);

  Communicator& comm_;
  const device::Accelerator& accelerator_;
  const hcomm_device_v1_t& device_;
  std::vector<Lane> lanes_;
  size_t next_lane_ = 0;
  void* caller_event_ = nullptr;  // marks the caller's stream at each call
  void* last_ready_ = nullptr;    // the previous call's ready mark (none after a captured one)

  mutable std::mutex mutex_;  // of what follows
  std::condition_variable changed_;
  std::deque<Call*> ready_;  // in the order the streams reached them: call order
  std::atomic<bool> any_ready_ = false;
  size_t pending_ = 0;  // calls queued and not yet released (graphs' not counted)
  bool stopping_ = false;
  hcomm_result_t error_ = HCOMM_SUCCESS;
  std::string error_text_;
  std::vector<std::pair<uint8_t*, size_t>> free_staging_;
  std::vector<std::unique_ptr<Call>> graph_calls_;  // captured: kept for replays

  std::mutex turn_;  // held by the thread while it drives the communicator, or by a host-ordered call
  std::thread thread_;
};

}  // namespace hcomm::comm
