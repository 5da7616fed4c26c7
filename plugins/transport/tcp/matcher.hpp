// Tag matching for one endpoint, in one place. Messages are numbered by the
// sender (seq) and matched in that order, whatever socket their pieces came
// on: the n-th message with a tag meets the n-th receive posted with that tag.
// A large message is only announced: the matcher asks the endpoint to clear
// it (send its data) once a receive has taken it, so its bytes always land
// straight in the receive's buffer. A small one lands there too when the
// receive was posted in time; otherwise it waits in a pooled buffer, when it
// arrived before its receive was posted (unexpected) or overtook an earlier
// message on another socket (early), and is copied out at matching.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

#include "buffer_pool.hpp"
#include "hcomm/types.h"
#include "request.hpp"
#include "wire.hpp"

namespace hcomm::tcp {

// A message from its first piece seen until it is delivered (or dropped).
struct InMessage {
  uint64_t seq = 0;
  uint64_t tag = 0;
  uint64_t total = 0;
  std::byte* dest = nullptr;  // where its bytes land: the receive's buffer, `held`, or nowhere once dropped
  PooledBuffer held;          // while no receive has taken it
  uint64_t claimed = 0;       // bytes of the pieces resolved so far, whether read or not
  uint64_t received = 0;
  uint64_t extent = 0;      // end of the furthest byte written so far
  Request* recv = nullptr;  // the receive that took it, if any
  bool rendezvous = false;  // announced: its data comes once cleared
  bool cleared = false;     // the sender was told to send the data
  bool arrived = false;     // every byte is in
  bool dropped = false;     // its receive was too short: read and forget
};

class Matcher {
 public:
  // `clear` asks the peer to send the data of an announced message; a
  // message above `eager_limit` bytes (the pair's split) must be announced.
  Matcher(int peer_rank, uint64_t eager_limit, BufferPool& pool, std::function<void(uint64_t seq)> clear)
      : peer_rank_(peer_rank), eager_limit_(eager_limit), pool_(pool), clear_(std::move(clear)) {}

  // A large message announced by the peer.
  void announce(const wire::PieceHeader& rts);
  // The message a data piece belongs to. Throws LinkError on a piece that
  // contradicts what the peer sent before, or that carries more bytes than
  // the message's earlier pieces left: overlapping pieces would complete
  // (and free) the message while one of them is still being read.
  InMessage& resolve(const wire::PieceHeader& piece);
  // n bytes written at dest + offset; completes the message when all are in.
  void received(InMessage& message, uint64_t offset, uint64_t n);

  void post(Request& recv);
  // The peer closed its side after sending, or the link to it was lost:
  // whatever arrived whole stays for the receives that take it; every other
  // receive, now or later, fails. True when a receive was waiting.
  bool peer_closed(hcomm_result_t code, const std::string& text);

 private:
  InMessage& first_seen(const wire::PieceHeader& piece, bool rendezvous);
  // Matches the message whose turn it is, and any early ones that follow it.
  void match_in_order();
  void match(InMessage& message);
  void attach(InMessage& message, Request& recv);
  // Whether `recv` can take `message`; fails the receive when it cannot.
  bool fits(const InMessage& message, Request& recv) const;
  void hold(InMessage& message);
  void clear(InMessage& message);
  void finish(InMessage& message);

  const int peer_rank_;
  const uint64_t eager_limit_;
  BufferPool& pool_;
  const std::function<void(uint64_t seq)> clear_;
  uint64_t next_seq_ = 0;                                              // the next message to match
  std::unordered_map<uint64_t, std::unique_ptr<InMessage>> messages_;  // by seq
  std::unordered_map<uint64_t, std::deque<Request*>> posted_;          // by tag, oldest first
  std::unordered_map<uint64_t, std::deque<InMessage*>> unexpected_;    // by tag, oldest first
  std::optional<std::pair<hcomm_result_t, std::string>> closed_;      // why nothing more comes
};

}  // namespace hcomm::tcp
