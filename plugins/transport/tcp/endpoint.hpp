// A peer: the pair's sockets, messages striped over them, tag matching, and
// the one failure that every request on the peer reports.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "address.hpp"
#include "connection.hpp"
#include "hcomm/plugin/util.hpp"
#include "link_error.hpp"
#include "matcher.hpp"
#include "request.hpp"

namespace hcomm::tcp {

class Net;

class Endpoint {
 public:
  Endpoint(Net& net, int peer_rank, const PeerAddress& peer);
  ~Endpoint();
  Endpoint(const Endpoint&) = delete;
  Endpoint& operator=(const Endpoint&) = delete;

  Net& net() const { return net_; }
  int peer_rank() const { return peer_rank_; }
  const PeerAddress& peer() const { return peer_; }
  const std::string& name() const { return name_; }  // "rank N (a.b.c.d:port)"
  // The lower rank of a pair connects, the higher one accepts.
  bool initiator() const;

  // Connecting side: starts every socket's connect.
  void start();
  // Accepting side: a socket whose hello named this peer.
  void adopt(int index, Socket socket, const InetAddress& from);
  // Connects the sockets whose retry time has come; false once none waits.
  bool tick(Clock::time_point now);
  std::optional<Clock::time_point> next_retry() const;
  // True once every socket is connected; throws the endpoint's failure.
  bool ready() const;

  Request* isend(const void* buf, size_t len, uint64_t tag);
  Request* irecv(void* buf, size_t len, uint64_t tag);

  // Tells the peer (best effort) and fails every request still pending.
  void close();

  // --- for the connections ---
  Matcher& matcher() { return matcher_; }
  // The next piece to write, taken by whichever socket has room: go-aheads
  // first, then new messages (small ones whole, large ones announced) in
  // posting order, then the data of large messages the peer asked for.
  bool next_piece(OutPiece& piece);
  void piece_written(Request& send);
  // The peer took large message `seq`: its data may go.
  void cleared(uint64_t seq);
  void connection_ready();
  void connection_retrying();
  void peer_closed_socket();

  // Runs one entry point of the endpoint's machinery: a failure inside fails
  // the endpoint (and its requests) instead of escaping.
  template <class F>
  void guard(F&& body) noexcept;

 private:
  // kPeerClosed: the peer closed its side after sending; what it sent can
  // still be received.
  enum class State { kConnecting, kReady, kPeerClosed, kFailed };

  void check_usable() const;
  void flush_all();
  void clear_to_send(uint64_t seq);
  uint64_t piece_length(uint64_t total) const;
  void carve(std::deque<Request*>& queue, OutPiece& piece);
  void fail_sends(hcomm_result_t code, const std::string& text);
  void fail(hcomm_result_t code, const std::string& text, bool report);

  Net& net_;
  const int peer_rank_;
  const PeerAddress peer_;
  const std::string name_;
  const int nsocks_;
  const uint64_t split_bytes_;  // the smaller HCOMM_TCP_SPLIT_BYTES of the pair
  State state_ = State::kConnecting;
  hcomm_result_t error_code_ = HCOMM_SUCCESS;
  std::string error_text_;
  std::vector<std::unique_ptr<Connection>> connections_;
  int ready_count_ = 0;
  int bye_count_ = 0;

  uint64_t next_send_seq_ = 0;
  std::deque<Request*> unsent_;                       // not yet sent or announced, oldest first
  std::unordered_map<uint64_t, Request*> announced_;  // large sends waiting for the go-ahead, by seq
  std::deque<Request*> cleared_;                      // large sends with data left to hand out
  std::deque<uint64_t> go_aheads_;                    // seqs of the peer's large messages we take
  Matcher matcher_;
};

template <class F>
void Endpoint::guard(F&& body) noexcept {
  try {
    body();
  } catch (const LinkError& e) {
    fail(HCOMM_ERR_REMOTE, plugin::format("tcp: connection to %s lost: %s", name_.c_str(), e.what()), true);
  } catch (const plugin::Error& e) {
    fail(e.code(), e.what(), true);
  } catch (const std::exception& e) {
    fail(HCOMM_ERR_SYSTEM, plugin::format("tcp: connection to %s lost: %s", name_.c_str(), e.what()), true);
  }
}

}  // namespace hcomm::tcp
