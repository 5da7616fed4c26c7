#include "matcher.hpp"

#include <algorithm>
#include <cstring>
#include <new>
#include <vector>

#include "hcomm/plugin/util.hpp"
#include "link_error.hpp"

namespace hcomm::tcp {

using plugin::format;

namespace {

unsigned long long ull(uint64_t v) { return static_cast<unsigned long long>(v); }

}  // namespace

void Matcher::announce(const wire::PieceHeader& rts) {
  if (rts.total == 0 || rts.seq < next_seq_ || messages_.contains(rts.seq))
    throw LinkError(format("protocol error: announcement of message %llu (%llu bytes) repeats or is empty",
                           ull(rts.seq), ull(rts.total)));
  first_seen(rts, true);
}

InMessage& Matcher::resolve(const wire::PieceHeader& piece) {
  if (piece.offset > piece.total || piece.length > piece.total - piece.offset ||
      (piece.length == 0 && piece.total != 0))
    throw LinkError(format("protocol error: piece [%llu, +%u) of message %llu does not fit its %llu bytes",
                           ull(piece.offset), piece.length, ull(piece.seq), ull(piece.total)));
  auto it = messages_.find(piece.seq);
  if (it == messages_.end()) {
    if (piece.seq < next_seq_)
      throw LinkError(format("protocol error: a piece of message %llu came after the whole message", ull(piece.seq)));
    if (piece.total > eager_limit_)
      throw LinkError(
          format("protocol error: message %llu of %llu bytes came unannounced; above %llu bytes (the smaller "
                 "HCOMM_TCP_SPLIT_BYTES of the pair) a message must be announced",
                 ull(piece.seq), ull(piece.total), ull(eager_limit_)));
    InMessage& message = first_seen(piece, false);
    message.claimed = piece.length;
    return message;
  }
  InMessage& message = *it->second;
  if (message.tag != piece.tag || message.total != piece.total)
    throw LinkError(format("protocol error: pieces of message %llu disagree on its tag or length", ull(piece.seq)));
  if (message.rendezvous && !message.cleared)
    throw LinkError(format("protocol error: data of message %llu came before it was asked for", ull(piece.seq)));
  if (piece.length > message.total - message.claimed)
    throw LinkError(format("protocol error: pieces of message %llu carry more than its %llu bytes", ull(piece.seq),
                           ull(message.total)));
  message.claimed += piece.length;
  return message;
}

InMessage& Matcher::first_seen(const wire::PieceHeader& piece, bool rendezvous) {
  auto owned = std::make_unique<InMessage>();
  InMessage& message = *owned;
  message.seq = piece.seq;
  message.tag = piece.tag;
  message.total = piece.total;
  message.rendezvous = rendezvous;
  messages_.emplace(piece.seq, std::move(owned));
  if (piece.seq == next_seq_)
    match_in_order();
  else if (!rendezvous)
    hold(message);  // early: its turn comes once the messages before it are seen
  return message;
}

void Matcher::match_in_order() {
  for (auto it = messages_.find(next_seq_); it != messages_.end(); it = messages_.find(next_seq_)) {
    ++next_seq_;
    match(*it->second);
  }
}

void Matcher::match(InMessage& message) {
  auto waiting = posted_.find(message.tag);
  if (waiting == posted_.end()) {
    if (!message.rendezvous && !message.held.data()) hold(message);
    unexpected_[message.tag].push_back(&message);
    return;
  }
  Request& recv = *waiting->second.front();
  waiting->second.pop_front();
  if (waiting->second.empty()) posted_.erase(waiting);
  attach(message, recv);
}

void Matcher::post(Request& recv) {
  auto held = unexpected_.find(recv.tag());
  if (held == unexpected_.end()) {
    if (closed_) return recv.fail(closed_->first, closed_->second);
    posted_[recv.tag()].push_back(&recv);
    return;
  }
  InMessage& message = *held->second.front();
  held->second.pop_front();
  if (held->second.empty()) unexpected_.erase(held);
  if (closed_ && !message.arrived) {  // announced, but its data never comes
    recv.fail(closed_->first, closed_->second);
    return finish(message);
  }
  attach(message, recv);
}

bool Matcher::peer_closed(hcomm_result_t code, const std::string& text) {
  if (closed_) return false;
  closed_.emplace(code, text);
  bool waiting = !posted_.empty();
  for (auto& [tag, queue] : posted_)
    for (Request* recv : queue) recv->fail(code, text);
  posted_.clear();
  std::vector<InMessage*> lost;
  for (auto& [seq, message] : messages_)
    if (message->recv && !message->arrived) lost.push_back(message.get());
  for (InMessage* message : lost) {
    message->recv->fail(code, text);
    finish(*message);
  }
  return waiting || !lost.empty();
}

// A large message is cleared to come straight into the receive's buffer. Of a
// small one, what is already in the held buffer moves to the receive's
// buffer, and the rest then lands there directly.
void Matcher::attach(InMessage& message, Request& recv) {
  if (!fits(message, recv)) {
    message.dropped = true;
    if (message.arrived) return finish(message);
    // The rest is read and thrown away (no destination): nothing is held for it.
    message.held.reset();
    message.dest = nullptr;
    if (message.rendezvous) clear(message);  // the data still comes, to be dropped
    return;
  }
  if (message.rendezvous) {
    message.dest = recv.buf();
    message.recv = &recv;
    return clear(message);
  }
  if (message.extent > 0) std::memcpy(recv.buf(), message.held.data(), message.extent);
  if (message.arrived) {
    recv.complete(message.total);
    finish(message);
    return;
  }
  message.dest = recv.buf();
  message.recv = &recv;
  message.held.reset();
}

void Matcher::received(InMessage& message, uint64_t offset, uint64_t n) {
  if (n > message.total - message.received)
    throw LinkError(
        format("protocol error: message %llu got more than its %llu bytes", ull(message.seq), ull(message.total)));
  message.received += n;
  message.extent = std::max(message.extent, offset + n);
  if (message.received < message.total || message.arrived) return;
  message.arrived = true;
  if (message.recv) {
    message.recv->complete(message.total);
    finish(message);
  } else if (message.dropped) {
    finish(message);
  }
}

bool Matcher::fits(const InMessage& message, Request& recv) const {
  if (message.total <= recv.len()) return true;
  recv.fail(HCOMM_ERR_INVALID_ARGUMENT,
            format("tcp: the message from rank %d with tag %llu is %llu bytes, longer than the %zu-byte receive "
                   "buffer; post a receive of at least %llu bytes",
                   peer_rank_, ull(message.tag), ull(message.total), recv.len(), ull(message.total)));
  return false;
}

void Matcher::hold(InMessage& message) {
  if (message.total == 0) return;
  try {
    message.held = pool_.take(message.total);
  } catch (const std::bad_alloc&) {
    throw LinkError(
        format("cannot hold a message of %llu bytes until its receive is posted: out of memory", ull(message.total)));
  }
  message.dest = message.held.data();
}

void Matcher::clear(InMessage& message) {
  message.cleared = true;
  clear_(message.seq);
}

void Matcher::finish(InMessage& message) { messages_.erase(message.seq); }

}  // namespace hcomm::tcp
