// The messages a rank has in flight: posting them (a null request means
// "retry later"), polling them, and completing them against a deadline.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "rank_transport.hpp"

namespace hcomm::tcheck {

struct Transfer {
  enum class Kind { kSend, kRecv };

  Kind kind;
  int peer;
  uint64_t tag;
  size_t len;             // the buffer handed to isend/irecv
  size_t expected_bytes;  // what test must report once done
  void* request = nullptr;
  bool done = false;  // completed or failed; the request is gone either way
  size_t bytes = 0;
  hcomm_result_t status = HCOMM_SUCCESS;
  std::string error;  // the plugin's text for a failure
  Clock::time_point ended;

  bool failed() const { return done && status != HCOMM_SUCCESS; }
  // "receive of 4096 bytes from rank 2 (tag 0x7)"
  std::string describe() const;
};

class TransferSet {
 public:
  explicit TransferSet(RankTransport& transport) : transport_(transport) {}

  // Posts, retrying while the plugin returns a null request. A call that
  // fails is recorded on the transfer (done, with its status), not thrown.
  Transfer& send(int peer, const void* buf, size_t len, uint64_t tag);
  Transfer& recv(int peer, void* buf, size_t capacity, uint64_t tag, size_t expected_bytes);

  // One round: progress the net, then test every pending transfer. Errors
  // are recorded, not thrown.
  void poll();
  // Polls until every transfer is done. Throws on a failed transfer or
  // progress call, a wrong byte count, or the rank's deadline.
  void complete();
  // Polls until every transfer ended, well or not, or `until` passed: for
  // checks that expect errors and judge the transfers themselves.
  void settle(Deadline until);
  // Keeps these transfers moving for a while, so that data can arrive
  // before the receives for it are posted.
  void poll_for(std::chrono::milliseconds duration);
  // Waits for every rank of the group, keeping these transfers moving.
  void barrier();

  bool all_done() const { return pending_.empty(); }
  const std::deque<Transfer>& transfers() const { return transfers_; }
  hcomm_result_t progress_status() const { return progress_status_; }
  const std::string& progress_error() const { return progress_error_; }

 private:
  template <class F>
  Transfer& post(Transfer transfer, F&& post_call);
  void test(Transfer& transfer);
  // Keeps the first failure or wrong byte count, for complete() to throw.
  void note_problem(const Transfer& transfer);

  RankTransport& transport_;
  std::deque<Transfer> transfers_;  // stable addresses for the references handed out
  std::vector<Transfer*> pending_;
  hcomm_result_t progress_status_ = HCOMM_SUCCESS;
  std::string progress_error_;
  std::string first_problem_;
};

}  // namespace hcomm::tcheck
