#include "core/p2p/matching.hpp"

#include <algorithm>
#include <cstring>

#include "core/comm/schedule_cache.hpp"
#include "core/common/error.hpp"
#include "core/links/links.hpp"

namespace hcomm::p2p {

std::string who(int source) { return source == kAny ? "any rank" : "rank " + std::to_string(source); }
std::string which(int tag) { return tag == kAny ? "any tag" : "tag " + std::to_string(tag); }

Matching::Matching(links::Links& links, comm::ScheduleCache& schedules, int rank, int size, uint64_t stamp)
    : links_(links),
      schedules_(schedules),
      rank_(rank),
      size_(size),
      stamp_(stamp),
      envelope_tag_(exec::envelope_tag(stamp, links.context())) {}

Matching::~Matching() = default;

// The envelope receives are posted at the first call, so that a
// communicator whose point to point is never used holds no buffers.
void Matching::start() {
  if (started_) return;
  started_ = true;
  peers_.resize(size_);
  for (int p = 0; p < size_; ++p) {
    if (p == rank_) continue;
    peers_[p].slots.resize(kSlots);
    for (Slot& s : peers_[p].slots) s.buf.resize(sizeof(Header) + kEagerBytes);
    post_slots(p);
  }
}

Message& Matching::acquire(Message::Kind kind) {
  if (spare_messages_.empty()) spare_messages_.emplace_back();
  messages_.splice(messages_.end(), spare_messages_, spare_messages_.begin());
  Message& m = messages_.back();
  m.self = std::prev(messages_.end());
  m.kind = kind;
  m.source = m.tag = kAny;
  m.peer = 0;
  m.send_buf = nullptr;
  m.recv_buf = nullptr;
  m.bytes = 0;
  m.number = 0;
  m.synchronous = false;
  m.status = hcomm_status_t{.source = HCOMM_ANY_SOURCE, .tag = HCOMM_ANY_TAG, .bytes = 0, .cancelled = 0};
  m.matched = m.cancelled = m.envelope_pending = m.awaiting_reply = m.data_pending = false;
  m.envelope_request = nullptr;
  m.error = HCOMM_SUCCESS;
  m.error_text.clear();
  return m;
}

void Matching::release(Message* m) { spare_messages_.splice(spare_messages_.begin(), messages_, m->self); }

Arrival& Matching::acquire_arrival() {
  if (spare_arrivals_.empty()) spare_arrivals_.emplace_back();
  arrivals_.splice(arrivals_.end(), spare_arrivals_, spare_arrivals_.begin());
  Arrival& a = arrivals_.back();
  a.self = std::prev(arrivals_.end());
  a.data.clear();
  a.sender = nullptr;
  return a;
}

void Matching::release(Arrival& a) { spare_arrivals_.splice(spare_arrivals_.begin(), arrivals_, a.self); }

Message* Matching::send(const void* buf, uint64_t bytes, int peer, int tag, bool synchronous) {
  start();
  Message& m = acquire(Message::Kind::kSend);
  m.peer = peer;
  m.tag = tag;
  m.send_buf = buf;
  m.bytes = bytes;
  m.synchronous = synchronous;
  const auto* data = static_cast<const uint8_t*>(buf);
  if (peer == rank_) {
    // Copied whole: the send is done at once, or once taken if synchronous.
    m.awaiting_reply = synchronous;
    Arrival& a = acquire_arrival();
    a.source = rank_;
    a.tag = tag;
    a.bytes = bytes;
    a.number = 0;
    a.flags = synchronous ? kSynchronousFlag : 0;
    a.data.assign(data, data + bytes);
    a.sender = synchronous ? &m : nullptr;
    ++events_;
    if (Message* r = queues_.arrive(&a)) {
      deliver(*r, a, nullptr);
      release(a);
    }
    return &m;
  }
  Peer& p = peers_[peer];
  m.number = p.next_number++;
  const bool eager = bytes <= kEagerBytes;
  m.awaiting_reply = synchronous || !eager;
  if (m.awaiting_reply) {
    p.awaiting.push_back(&m);
    ++awaiting_replies_;
  }
  send_envelope(
      m, peer,
      Header{
          .tag = tag, .flags = synchronous ? kSynchronousFlag : 0u, .number = m.number, .reserved = 0, .bytes = bytes},
      eager ? buf : nullptr);
  return &m;
}

// Queues the envelope behind the peer's earlier ones and posts what it can.
void Matching::send_envelope(Message& m, int peer, const Header& h, const void* eager) {
  const uint64_t data = eager ? h.bytes : 0;
  m.envelope.resize(sizeof h + data);
  std::memcpy(m.envelope.data(), &h, sizeof h);
  if (data) std::memcpy(m.envelope.data() + sizeof h, eager, data);
  m.peer = peer;
  m.envelope_pending = true;
  peers_[peer].unposted.push_back(&m);
  active_.push_back(&m);
  post_envelopes(peer);
}

void Matching::post_envelopes(int peer) {
  Peer& p = peers_[peer];
  while (!p.unposted.empty()) {
    Message& m = *p.unposted.front();
    m.envelope_request = links_.isend(peer, m.envelope.data(), m.envelope.size(), envelope_tag_);
    if (!m.envelope_request) return;  // the transport says later
    p.unposted.pop_front();
  }
}

// Envelopes fill the posted slots in the order they were posted: they are
// posted, and taken, in ring order.
void Matching::post_slots(int peer) {
  Peer& p = peers_[peer];
  while (p.posted < kSlots && p.gone.empty()) {
    Slot& s = p.slots[(p.oldest + p.posted) % kSlots];
    try {
      s.request = links_.irecv_standing(peer, s.buf.data(), s.buf.size(), envelope_tag_);
    } catch (const Error& e) {
      lose(peer, e.what());
      return;
    }
    if (!s.request) return;  // the transport says later
    ++p.posted;
  }
}

void Matching::take_envelopes(int peer) {
  Peer& p = peers_[peer];
  while (p.posted > 0) {
    Slot& s = p.slots[p.oldest];
    size_t len = 0;
    try {
      if (!links_.test_standing(peer, s.request, &len)) break;
    } catch (const Error& e) {
      // Its link closed (it destroyed the communicator, or died, which the
      // communicator's wait learns from the bootstrap): nothing more comes.
      s.request = nullptr;
      lose(peer, e.what());
      return;
    }
    s.request = nullptr;
    p.oldest = (p.oldest + 1) % kSlots;
    --p.posted;
    arrived(peer, s.buf.data(), len);
  }
  post_slots(peer);
}

void Matching::arrived(int peer, const uint8_t* envelope, size_t len) {
  Header h;
  if (len < sizeof h)
    HCOMM_THROW(HCOMM_ERR_REMOTE,
                "rank %d sent an envelope of %zu bytes, shorter than a header: use the same HComm build on every rank",
                peer, len);
  std::memcpy(&h, envelope, sizeof h);
  ++events_;
  if (h.flags & kReplyFlag) return replied(peer, h);
  const bool eager = h.bytes <= kEagerBytes;
  if (len != sizeof h + (eager ? h.bytes : 0))
    HCOMM_THROW(HCOMM_ERR_REMOTE,
                "rank %d sent an envelope of %zu bytes for a message of %llu bytes: use the same HComm build on every "
                "rank",
                peer, len, static_cast<unsigned long long>(h.bytes));
  Arrival& a = acquire_arrival();
  a.source = peer;
  a.tag = h.tag;
  a.bytes = h.bytes;
  a.number = h.number;
  a.flags = h.flags;
  const uint8_t* data = envelope + sizeof h;
  if (Message* r = queues_.arrive(&a)) {
    deliver(*r, a, eager ? data : nullptr);
    release(a);
  } else if (eager) {
    a.data.assign(data, data + h.bytes);
  }
}

// A receive took message h.number of this rank: a synchronous send is done,
// a larger one sends the bytes the receive takes.
void Matching::replied(int peer, const Header& h) {
  Peer& p = peers_[peer];
  auto it = std::ranges::find_if(p.awaiting, [&](const Message* m) { return m->number == h.number; });
  if (it == p.awaiting.end() || h.bytes > (*it)->bytes)
    HCOMM_THROW(HCOMM_ERR_REMOTE,
                "rank %d replied to message %u of this rank for %llu bytes, which this rank does not wait for: use the "
                "same HComm build on every rank",
                peer, h.number, static_cast<unsigned long long>(h.bytes));
  Message& m = **it;
  p.awaiting.erase(it);
  --awaiting_replies_;
  m.awaiting_reply = false;
  if (m.bytes > kEagerBytes && h.bytes) start_data(m, true, peer, m.number, const_cast<void*>(m.send_buf), h.bytes);
}

// Receive r takes arrival a: its data from `eager` (the envelope, where it
// is still in a slot) or the arrival, or, for a larger message, as a second
// message of the room's worth, which the reply asks for.
void Matching::deliver(Message& r, Arrival& a, const uint8_t* eager) {
  r.matched = true;
  r.status = hcomm_status_t{.source = a.source, .tag = a.tag, .bytes = a.bytes, .cancelled = 0};
  const uint64_t kept = std::min(a.bytes, r.bytes);
  if (a.bytes > r.bytes)
    fail(r, HCOMM_ERR_TRUNCATED,
         format("the message from rank %d with tag %d has %llu bytes, more than the receive's room of %llu bytes "
                "(the first %llu landed); give the receive room for the largest message it may match",
                a.source, a.tag, static_cast<unsigned long long>(a.bytes), static_cast<unsigned long long>(r.bytes),
                static_cast<unsigned long long>(kept)));
  const bool here = a.source == rank_ || a.bytes <= kEagerBytes;
  if (here && kept) std::memcpy(r.recv_buf, eager ? eager : a.data.data(), kept);
  if (a.sender) {
    a.sender->awaiting_reply = false;
  } else if (!here || (a.flags & kSynchronousFlag)) {
    if (!here && kept) start_data(r, false, a.source, a.number, r.recv_buf, kept);
    Message& reply = acquire(Message::Kind::kReply);
    send_envelope(reply, a.source,
                  Header{.tag = 0, .flags = kReplyFlag, .number = a.number, .reserved = 0, .bytes = here ? 0 : kept},
                  nullptr);
  }
}

void Matching::start_data(Message& m, bool sending, int peer, uint32_t number, void* buf, uint64_t bytes) {
  // Both ends cut the data into the same chunks: bytes of UINT8.
  const hcomm_coll_args_t args{.size = sizeof(hcomm_coll_args_t),
                               .coll = HCOMM_COLL_SENDRECV,
                               .count = bytes,
                               .dtype = HCOMM_UINT8,
                               .dtype_size = 1,
                               .op = HCOMM_SUM,
                               .root = peer,
                               .mem_kind = HCOMM_MEM_HOST};
  const std::shared_ptr<const exec::Schedule>& schedule = schedules_.p2p(sending, args);
  const exec::Buffers buffers{buf, sending ? nullptr : buf, nullptr};
  const uint64_t tag_base = exec::data_tag_base(number, stamp_, links_.context());
  if (m.data && m.data->schedule() == schedule.get())
    m.data->restart(buffers, number, tag_base);
  else
    m.data.emplace(schedule, buffers, number, tag_base, size_);
  m.data_pending = true;
  if (std::ranges::find(active_, &m) == active_.end()) active_.push_back(&m);
  // A receive's first chunks are posted before its reply asks for them.
  advance_data(m);
}

void Matching::advance_data(Message& m) {
  try {
    const uint64_t before = m.data->events();
    if (m.data->advance(links_)) m.data_pending = false;
    events_ += m.data->events() - before;
  } catch (const Error& e) {
    throw Error(e.code(), describe(m) + " failed: " + e.what());
  }
}

Message* Matching::recv(void* buf, uint64_t room, int source, int tag) {
  start();
  Message& m = acquire(Message::Kind::kReceive);
  m.source = source;
  m.tag = tag;
  m.recv_buf = buf;
  m.bytes = room;
  if (Arrival* a = queues_.post(&m)) {
    deliver(m, *a, nullptr);
    release(*a);
  } else if (source != kAny && source != rank_ && !peers_[source].gone.empty()) {
    queues_.withdraw(&m);
    fail(m, HCOMM_ERR_REMOTE, "no message can come from rank " + std::to_string(source) + ": " + peers_[source].gone);
  }
  return &m;
}

Arrival* Matching::take(int source, int tag) {
  Arrival* a = queues_.find(source, tag);
  if (a) queues_.remove(a);
  return a;
}

std::string Matching::gone(int source) const {
  return started_ && source != kAny && source != rank_ ? peers_[source].gone : "";
}

Message* Matching::recv(void* buf, uint64_t room, Arrival* taken) {
  Message& m = acquire(Message::Kind::kReceive);
  m.source = taken->source;
  m.tag = taken->tag;
  m.recv_buf = buf;
  m.bytes = room;
  deliver(m, *taken, nullptr);
  release(*taken);
  return &m;
}

bool Matching::cancel(Message* m) {
  if (m->kind != Message::Kind::kReceive || m->matched || m->cancelled || !queues_.withdraw(m)) return false;
  m->cancelled = true;
  m->status.cancelled = 1;
  return true;
}

void Matching::fail(Message& r, hcomm_result_t code, const std::string& text) {
  r.matched = true;
  r.error = code;
  r.error_text = describe(r) + " failed: " + text;
}

// A peer's link closed: receives that can only match its messages fail
// (those it sent before stay to be received).
void Matching::lose(int peer, const std::string& why) {
  Peer& p = peers_[peer];
  if (!p.gone.empty()) return;
  p.gone = why;
  ++events_;
  std::vector<Message*> stranded;
  for (Message* r : queues_.waiting())
    if (r->source == peer) stranded.push_back(r);
  for (Message* r : stranded) {
    queues_.withdraw(r);
    fail(*r, HCOMM_ERR_REMOTE, "no message can come from rank " + std::to_string(peer) + ": " + why);
  }
}

void Matching::progress(bool probing) {
  if (probing) start();
  if (!started_) return;
  // The envelope receives are standing ones, which the links look at only
  // now and then while nothing else is in flight: at once where a call waits
  // for an envelope.
  if (probing || awaiting_replies_ || !queues_.waiting().empty()) links_.progress_standing();
  for (int p = 0; p < size_; ++p) {
    if (p == rank_) continue;
    if (!peers_[p].unposted.empty()) post_envelopes(p);
    take_envelopes(p);
  }
  advance();
}

void Matching::advance() {
  size_t keep = 0;
  for (size_t i = 0; i < active_.size(); ++i) {
    Message& m = *active_[i];
    size_t bytes = 0;
    try {
      if (m.envelope_request && links_.test(m.peer, m.envelope_request, &bytes)) {
        m.envelope_request = nullptr;
        m.envelope_pending = false;
        ++events_;
      }
    } catch (const Error& e) {
      throw Error(e.code(), describe(m) + " failed: " + e.what());
    }
    if (m.data_pending) advance_data(m);
    if (m.envelope_pending || m.data_pending) {
      active_[keep++] = &m;
    } else if (m.kind == Message::Kind::kReply) {
      release(&m);
    }
  }
  active_.resize(keep);
}

bool Matching::done(const Message& m) const {
  if (m.kind == Message::Kind::kReceive) return m.cancelled || (m.matched && !m.data_pending);
  return !m.envelope_pending && !m.data_pending && !m.awaiting_reply;
}

bool Matching::busy() const {
  return std::ranges::any_of(messages_, [&](const Message& m) {
    return m.kind == Message::Kind::kReceive ? m.matched && m.data_pending : !done(m);
  });
}

std::string Matching::describe(const Message& m) const {
  const unsigned long long bytes = m.bytes;
  switch (m.kind) {
    case Message::Kind::kSend:
      return format("%ssend of %llu bytes to rank %d with tag %d (message %u to it)",
                    m.synchronous ? "synchronous " : "", bytes, m.peer, m.tag, m.number);
    case Message::Kind::kReply:
      return format("reply to rank %d", m.peer);
    case Message::Kind::kReceive:
      if (m.matched && !m.error)
        return format("receive of %llu bytes from rank %d with tag %d", static_cast<unsigned long long>(m.status.bytes),
                      m.status.source, m.status.tag);
      return format("receive of up to %llu bytes from %s with %s", bytes, who(m.source).c_str(), which(m.tag).c_str());
  }
  return "";
}

void Matching::pending_peer_ranks(const Message& m, std::vector<int>& out) const {
  auto add = [&](int r) {
    if (r != rank_ && std::ranges::find(out, r) == out.end()) out.push_back(r);
  };
  if (m.kind != Message::Kind::kReceive) return add(m.peer);
  if (m.matched) return add(m.status.source);
  if (m.source != kAny) return add(m.source);
  for (int r = 0; r < size_; ++r) add(r);
}

std::shared_ptr<void> Matching::leftovers() {
  if (!started_) return nullptr;
  struct Leftovers {
    std::vector<Peer> peers;
    std::list<Message> messages;
  };
  return std::make_shared<Leftovers>(Leftovers{std::move(peers_), std::move(messages_)});
}

}  // namespace hcomm::p2p
