#include "transfers.hpp"

#include <sched.h>

#include <algorithm>

namespace hcomm::tcheck {

std::string Transfer::describe() const {
  return format("%s of %zu bytes %s rank %d (tag 0x%llx)", kind == Kind::kSend ? "send" : "receive", len,
                kind == Kind::kSend ? "to" : "from", peer, static_cast<unsigned long long>(tag));
}

template <class F>
Transfer& TransferSet::post(Transfer transfer, F&& post_call) {
  Transfer& t = transfers_.emplace_back(std::move(transfer));
  Clock::time_point begin = Clock::now();
  for (;;) {
    hcomm_result_t rc = transport_.call([&] { return post_call(&t.request); }, &t.error);
    if (rc != HCOMM_SUCCESS) {
      t.status = rc;
      t.done = true;
      t.request = nullptr;
      t.ended = Clock::now();
      note_problem(t);
      return t;
    }
    if (t.request) break;
    transport_.count_retry();
    transport_.shared().barrier.throw_if_aborted();
    poll();
    if (transport_.deadline().expired())
      TCHECK_FAIL("%s: still a null request (retry later) after %.1f s of retrying", t.describe().c_str(),
                  seconds_since(begin));
  }
  pending_.push_back(&t);
  return t;
}

Transfer& TransferSet::send(int peer, const void* buf, size_t len, uint64_t tag) {
  const hcomm_transport_v1_t& api = transport_.api();
  void* ep = transport_.endpoint(peer);
  return post(Transfer{.kind = Transfer::Kind::kSend, .peer = peer, .tag = tag, .len = len, .expected_bytes = len},
              [&](void** request) { return api.isend(ep, buf, len, tag, request); });
}

Transfer& TransferSet::recv(int peer, void* buf, size_t capacity, uint64_t tag, size_t expected_bytes) {
  const hcomm_transport_v1_t& api = transport_.api();
  void* ep = transport_.endpoint(peer);
  return post(
      Transfer{
          .kind = Transfer::Kind::kRecv, .peer = peer, .tag = tag, .len = capacity, .expected_bytes = expected_bytes},
      [&](void** request) { return api.irecv(ep, buf, capacity, tag, request); });
}

void TransferSet::test(Transfer& t) {
  int done = 0;
  size_t bytes = 0;
  hcomm_result_t rc = transport_.call([&] { return transport_.api().test(t.request, &done, &bytes); }, &t.error);
  if (rc == HCOMM_SUCCESS && !done) return;
  t.status = rc;
  t.done = true;
  t.bytes = bytes;
  t.request = nullptr;  // freed by the plugin on completion and on error
  t.ended = Clock::now();
  note_problem(t);
}

void TransferSet::note_problem(const Transfer& t) {
  if (!first_problem_.empty()) return;
  if (t.failed())
    first_problem_ = format("%s failed: %s", t.describe().c_str(), describe_error(t.status, t.error).c_str());
  else if (t.bytes != t.expected_bytes)
    first_problem_ =
        format("%s: test reported %zu bytes, expected %zu", t.describe().c_str(), t.bytes, t.expected_bytes);
}

void TransferSet::poll() {
  std::string text;
  hcomm_result_t rc = transport_.call([&] { return transport_.api().progress(transport_.net()); }, &text);
  if (rc != HCOMM_SUCCESS && progress_status_ == HCOMM_SUCCESS) {
    progress_status_ = rc;
    progress_error_ = text;
    if (first_problem_.empty()) first_problem_ = "progress returned " + describe_error(rc, text);
  }
  for (Transfer* t : pending_) test(*t);
  std::erase_if(pending_, [](const Transfer* t) { return t->done; });
}

void TransferSet::complete() {
  Clock::time_point begin = Clock::now();
  for (;;) {
    if (!first_problem_.empty()) throw CheckFailure(first_problem_);
    if (all_done()) return;
    transport_.shared().barrier.throw_if_aborted();
    if (transport_.deadline().expired())
      TCHECK_FAIL("%zu of %zu transfers not complete after %.1f s; the first: %s", pending_.size(), transfers_.size(),
                  seconds_since(begin), pending_.front()->describe().c_str());
    ::sched_yield();
    poll();
  }
}

void TransferSet::poll_for(std::chrono::milliseconds duration) {
  for (Deadline until = Deadline::after(std::chrono::duration<double>(duration).count()); !until.expired();) {
    ::sched_yield();
    poll();
  }
}

void TransferSet::barrier() {
  transport_.shared().barrier.wait_polling(transport_.deadline(), [&] { poll(); });
}

void TransferSet::settle(Deadline until) {
  while (!all_done() && !until.expired()) {
    transport_.shared().barrier.throw_if_aborted();
    ::sched_yield();
    poll();
  }
}

}  // namespace hcomm::tcheck
