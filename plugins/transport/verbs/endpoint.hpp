// A peer: one RC queue pair, the side channel that set it up and watches the
// peer's life, pre-posted receive buffers with credit flow control, eager
// sends for small messages and receiver-driven rendezvous (RTS, then CTS with
// the receive buffer's address and rkey, then the sender's RDMA write with
// immediate) for large ones.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "hcomm/plugin/util.hpp"
#include "protocol.hpp"
#include "qp_plan.hpp"
#include "request.hpp"
#include "side_channel.hpp"
#include "wire.hpp"

namespace hcomm::verbs {

class Net;

class Endpoint {
 public:
  Endpoint(Net& net, int peer_rank, const Address& peer);
  ~Endpoint();
  Endpoint(const Endpoint&) = delete;
  Endpoint& operator=(const Endpoint&) = delete;

  Net& net() const { return net_; }
  int peer_rank() const { return peer_rank_; }
  const std::string& name() const { return name_; }
  uint32_t qpn() const { return qp_->qp_num; }
  int channel_fd() const { return channel_.valid() ? channel_.fd() : -1; }
  // The lower rank of a pair connects its side channel, the higher one accepts.
  bool initiator() const;

  // Connecting side: starts the side channel and sends the hello (the
  // handshake is in wire.hpp).
  void start();
  // Accepting side: the side channel whose peer proved the key, and its hello.
  void adopt(Channel channel, const Hello& hello);
  // Moves the handshake on, and notices the side channel closing.
  void poll_channel();
  // True once the queue pair is in RTS and the peer's is at least in RTR;
  // throws the endpoint's failure.
  bool ready() const;
  bool connecting() const { return state_ == State::kConnecting; }

  Request* isend(const void* buf, size_t len, uint64_t tag);
  Request* irecv(void* buf, size_t len, uint64_t tag);
  void on_completion(const ibv_wc& wc);

  // Tells the peer (best effort) that this is an orderly close, and fails
  // every request still pending.
  void close();

  template <class F>
  void guard(F&& body) noexcept;

 private:
  // kPeerClosed: the peer closed in order; what it sent can still be received.
  enum class State { kConnecting, kReady, kPeerClosed, kFailed };
  enum class Work : uint8_t { kRecv = 1, kSend = 2, kWrite = 3, kWriteLast = 4 };
  struct Write {
    Request* send;
    uint64_t addr;
    uint32_t rkey;
  };

  static uint64_t wr_id(Work work, uint64_t value) { return static_cast<uint64_t>(work) << 56 | value; }
  uint8_t* slot(size_t index) const { return region_ + index * slot_bytes_; }
  void destroy();
  LocalQp local_qp() const;
  Hello own_hello(Hello::Kind kind) const;
  void answer_challenge(const Challenge& challenge);
  void go_live(const Hello& peer_hello);
  void check_usable() const;
  void post_recv(size_t index);
  bool post_header(MsgHeader header, const void* payload, Request* eager_send);
  void flush();
  bool start_write(const Write& w);
  void on_recv(size_t index, const ibv_wc& wc);
  void on_header(const MsgHeader& h, const uint8_t* payload);
  void deliver(Request* recv, Arrival arrival);
  void release(Request* r);
  void peer_closed(const std::string& why);
  void fail_all(hcomm_result_t code, const std::string& text);
  void fail(hcomm_result_t code, const std::string& text, bool report);

  Net& net_;
  const int peer_rank_;
  const Address peer_;
  const std::string name_;
  State state_ = State::kConnecting;
  hcomm_result_t error_code_ = HCOMM_SUCCESS;
  std::string error_text_;
  bool bye_seen_ = false;

  Channel channel_;
  Hello::Bytes request_{};        // initiator: the hello it sent, which the proofs cover
  bool await_challenge_ = false;  // initiator: hello sent, challenge not yet read
  bool await_reply_ = false;      // initiator: proof sent, reply not yet read
  bool await_ready_ = false;  // acceptor: reply sent, ready byte not yet read
  ibv_qp* qp_ = nullptr;
  uint32_t psn_ = 0;

  const int credits_;  // receive buffers this side posts
  const size_t eager_bytes_;
  const size_t slot_bytes_;    // header + eager payload, cache-line aligned
  uint8_t* region_ = nullptr;  // credits_ receive slots, then credits_ send slots
  ibv_mr* region_mr_ = nullptr;
  std::vector<int> free_send_slots_;
  std::vector<Request*> slot_owner_;  // eager send completed by each send slot
  int sq_depth_ = 0;
  int sq_outstanding_ = 0;
  Credits flow_;

  uint64_t next_seq_ = 0;
  std::deque<Request*> outbox_;                       // sends not yet sent or announced, oldest first
  std::unordered_map<uint64_t, Request*> announced_;  // large sends waiting for the CTS, by seq
  std::deque<Write> writes_;                          // large sends cleared to write
  std::unordered_map<uint64_t, Request*> writing_;    // writes posted, by seq
  std::deque<MsgHeader> control_;                     // CTS and NACK to send
  std::unordered_map<uint32_t, Request*> expecting_;  // receives waiting for their write, by seq (imm)
  Matcher matcher_;
};

template <class F>
void Endpoint::guard(F&& body) noexcept {
  try {
    body();
  } catch (const plugin::Error& e) {
    fail(e.code(), e.what(), true);
  } catch (const std::exception& e) {
    fail(HCOMM_ERR_REMOTE, plugin::format("verbs: link to %s lost: %s", name_.c_str(), e.what()), true);
  }
}

}  // namespace hcomm::verbs
