#include "endpoint.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>

#include "cma.hpp"
#include "hcomm/plugin/copy.hpp"
#include "hcomm/plugin/util.hpp"
#include "net.hpp"

namespace hcomm::shm {

namespace {

using namespace std::chrono_literals;

// A dead peer must become an error within a second; checking a pidfd costs a
// system call, so it is done at most this often.
constexpr auto kLivenessInterval = 50ms;
// Packets read from one peer per progress call, so that one busy peer does
// not starve the others.
constexpr size_t kPacketsPerProgress = 64;

std::optional<Segment> attach_unless_self(const Net& net, const Address& peer) {
  if (peer.rank == net.rank()) return std::nullopt;
  return Segment::attach(SegmentOwner{.rank = peer.rank, .pid = peer.pid, .key_check = peer.key_check},
                         SegmentFile{.fd = peer.segment_fd, .inode = peer.segment_inode, .device = peer.segment_device});
}

uint32_t claim_fifo(const Segment& target, int peer_rank, int own_rank) {
  const uint32_t slot = target.header().fifos_claimed.fetch_add(1, std::memory_order_acq_rel);
  if (slot >= target.geometry().fifo_count)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_SYSTEM,
                       "shm: the segment of rank %d has no FIFO left for rank %d (all %u are claimed: one per "
                       "connection, reconnections included); use another transport for this many",
                       peer_rank, own_rank, target.geometry().fifo_count);
  return slot;
}

unsigned long long ull(uint64_t v) { return static_cast<unsigned long long>(v); }

std::string truncation(const std::string& peer, uint64_t tag, uint64_t message, uint64_t capacity) {
  return plugin::format("shm: the message from %s with tag %llu is %llu bytes, the receive buffer only %llu",
                        peer.c_str(), ull(tag), ull(message), ull(capacity));
}

}  // namespace

Endpoint::Endpoint(Net& net, const Address& peer)
    : net_(net),
      peer_(peer),
      peer_segment_(attach_unless_self(net, peer)),
      target_(peer_segment_ ? *peer_segment_ : net.segment()),
      out_slot_(claim_fifo(target_, peer.rank, net.rank())),
      out_control_(&target_.control(out_slot_)),
      out_(*out_control_, target_.data(out_slot_), target_.geometry().fifo_bytes),
      peer_doorbell_(target_.header()),
      process_(peer.pid),
      next_liveness_check_(Clock::now()),
      streaming_(arrivals_.end()) {
  out_control_->producer_rank.store(net.rank(), std::memory_order_relaxed);
  out_control_->producer_pid.store(::getpid(), std::memory_order_relaxed);
  out_control_->producer_check.store(net.key_check(), std::memory_order_relaxed);
  out_control_->producer_cma.store(static_cast<uint32_t>(probe_cma()), std::memory_order_relaxed);
  out_control_->producer_state.store(static_cast<uint32_t>(SlotState::Attached), std::memory_order_seq_cst);
  peer_doorbell_.ring();
}

Endpoint::~Endpoint() {
  out_control_->producer_state.store(static_cast<uint32_t>(SlotState::Closed), std::memory_order_seq_cst);
  if (in_control_) in_control_->consumer_closed.store(1, std::memory_order_seq_cst);
  peer_doorbell_.ring();
  fail(HCOMM_ERR_INVALID_ARGUMENT,
       plugin::format("shm: the endpoint to %s was closed while this request was pending", describe_peer().c_str()));
}

std::string Endpoint::describe_peer() const { return plugin::format("rank %d (pid %d)", peer_.rank, peer_.pid); }

// Reads a word the peer keeps for this purpose: EPERM here means every large
// message to this peer goes through the FIFO.
CmaState Endpoint::probe_cma() {
  if (!net_.config().cma) return CmaState::Denied;
  uint64_t word = 0;
  const int err = net_.cross_memory().read(peer_.pid, peer_.probe_address, &word, sizeof word);
  if (err == 0 && word == peer_.key_check) return CmaState::Permitted;
  net_.note_cma_denied(
      plugin::format("shm: cross-memory attach to %s is not possible (%s); large messages from it "
                     "go through the FIFO",
                     describe_peer().c_str(), err ? std::strerror(err) : "probe read a wrong value"));
  return CmaState::Denied;
}

void Endpoint::protocol_error(const std::string& what) const {
  HCOMM_PLUGIN_THROW(HCOMM_ERR_INTERNAL, "shm: broken packet stream from %s: %s", describe_peer().c_str(),
                     what.c_str());
}

void Endpoint::throw_failure() const { throw plugin::Error(failure_->code, failure_->text); }

bool Endpoint::find_incoming_fifo() {
  const Segment& own = net_.segment();
  const uint32_t claimed =
      std::min(own.header().fifos_claimed.load(std::memory_order_acquire), own.geometry().fifo_count);
  for (uint32_t i = 0; i < claimed; ++i) {
    FifoControl& c = own.control(i);
    if (c.producer_state.load(std::memory_order_seq_cst) != static_cast<uint32_t>(SlotState::Attached)) continue;
    if (c.producer_rank.load(std::memory_order_relaxed) != peer_.rank ||
        c.producer_pid.load(std::memory_order_relaxed) != peer_.pid ||
        c.producer_check.load(std::memory_order_relaxed) != net_.key_check())
      continue;
    in_control_ = &c;
    in_.emplace(c, own.data(i), own.geometry().fifo_bytes);
    return true;
  }
  return false;
}

bool Endpoint::ready() {
  check_peer(Clock::now());
  check_closed_by_peer();
  if (failure_) throw_failure();
  return in_ || find_incoming_fifo();
}

bool Endpoint::attached_or_failed() { return failure_ || in_ || find_incoming_fifo(); }

bool Endpoint::has_pending_requests() const {
  return !send_queue_.empty() || !awaiting_ack_.empty() || !posted_.empty() ||
         (streaming_ != arrivals_.end() && streaming_->receive);
}

Request& Endpoint::isend(const void* buf, size_t len, uint64_t tag) {
  check_peer(Clock::now());
  check_closed_by_peer();
  if (failure_) throw_failure();
  Request& r = net_.new_request(static_cast<const std::byte*>(buf), nullptr, len, tag);
  send_queue_.push_back(&r);
  send();
  return r;
}

Request& Endpoint::irecv(void* buf, size_t len, uint64_t tag) {
  check_peer(Clock::now());
  auto it = std::find_if(arrivals_.begin(), arrivals_.end(),
                         [&](const Arrival& a) { return a.unexpected() && a.tag == tag; });
  if (it == arrivals_.end() && failure_) throw_failure();
  Request& r = net_.new_request(nullptr, static_cast<std::byte*>(buf), len, tag);
  if (it == arrivals_.end()) {
    posted_.push_back(&r);
  } else if (it->remote_address) {
    read_rendezvous(*it, r);
    arrivals_.erase(it);
    send();
  } else {
    bind(*it, r);
    settle(it);
  }
  return r;
}

void Endpoint::read(void* local, uint64_t remote, size_t bytes) {
  const int err = net_.config().cma ? net_.cross_memory().read(peer_.pid, remote, local, bytes) : EPERM;
  check_copy(err, "read", remote, bytes);
}

void Endpoint::write(const void* local, uint64_t remote, size_t bytes) {
  const int err = net_.config().cma ? net_.cross_memory().write(peer_.pid, remote, local, bytes) : EPERM;
  check_copy(err, "write", remote, bytes);
}

void Endpoint::check_copy(int err, const char* verb, uint64_t remote, size_t bytes) {
  if (err == 0) return;
  if (!net_.config().cma)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_UNSUPPORTED, "shm: cannot %s the memory of %s: HCOMM_SHM_CMA is off", verb,
                       describe_peer().c_str());
  if (err == ESRCH || !process_.alive())
    HCOMM_PLUGIN_THROW(HCOMM_ERR_REMOTE, "shm: %s died", describe_peer().c_str());
  if (err == EPERM)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_UNSUPPORTED,
                       "shm: cross-memory attach to %s is not permitted (Yama ptrace scope, seccomp or a "
                       "non-dumpable process)",
                       describe_peer().c_str());
  HCOMM_PLUGIN_THROW(err == EFAULT ? HCOMM_ERR_REMOTE : HCOMM_ERR_SYSTEM,
                     "shm: cannot %s %zu bytes at %#llx in the memory of %s: %s", verb, bytes,
                     static_cast<unsigned long long>(remote), describe_peer().c_str(), std::strerror(err));
}

void Endpoint::progress() {
  if (failure_) return;
  try {
    receive(kPacketsPerProgress);
    send();
    check_closed_by_peer();
  } catch (const plugin::Error& e) {
    fail(e.code(), e.what());
  }
}

void Endpoint::check_peer(Clock::time_point now) {
  if (failure_ || now < next_liveness_check_) return;
  next_liveness_check_ = now + kLivenessInterval;
  if (process_.alive()) return;
  // What the peer published before it died is complete: deliver it first.
  try {
    receive(std::numeric_limits<size_t>::max());
  } catch (const plugin::Error&) {
    // A packet it was writing when it died: the failure below covers it.
  }
  fail(HCOMM_ERR_REMOTE, plugin::format("shm: %s died", describe_peer().c_str()));
}

// A peer closes its producer side before its consumer side: once either is
// seen closed, everything it sent (messages, acks) is in the FIFO and is
// delivered before the rest fails.
void Endpoint::check_closed_by_peer() {
  if (failure_) return;
  const bool receiver_gone = out_control_->consumer_closed.load(std::memory_order_acquire) != 0;
  const bool sender_closed =
      in_control_ &&
      in_control_->producer_state.load(std::memory_order_acquire) == static_cast<uint32_t>(SlotState::Closed);
  if (!receiver_gone && !sender_closed) return;
  receive(std::numeric_limits<size_t>::max());
  if (receiver_gone || !in_->readable())
    fail(HCOMM_ERR_REMOTE, plugin::format("shm: %s closed its endpoint", describe_peer().c_str()));
}

bool Endpoint::has_work() {
  if (failure_) return false;
  if (in_ ? in_->readable() : find_incoming_fifo()) return true;
  if ((!acks_.empty() || !send_queue_.empty()) && out_.has_room(next_payload())) return true;
  return out_control_->consumer_closed.load(std::memory_order_seq_cst) != 0 ||
         (in_control_ &&
          in_control_->producer_state.load(std::memory_order_seq_cst) == static_cast<uint32_t>(SlotState::Closed));
}

void Endpoint::fail(hcomm_result_t code, const std::string& text) {
  if (failure_) return;
  failure_ = Failure{code, text};
  for (Request* r : send_queue_) r->fail(code, text);
  for (auto& [cookie, r] : awaiting_ack_) r->fail(code, text);
  for (Request* r : posted_) r->fail(code, text);
  send_queue_.clear();
  awaiting_ack_.clear();
  posted_.clear();
  acks_.clear();
  // Whole messages already here can still be received; the rest never will.
  std::erase_if(arrivals_, [&](Arrival& a) {
    if (a.receive) a.receive->fail(code, text);
    return !(a.unexpected() && a.complete() && !a.remote_address);
  });
  streaming_ = arrivals_.end();
}

// ---- receiving ----

void Endpoint::receive(size_t max_packets) {
  if (!in_ && !find_incoming_fifo()) return;
  size_t n = 0;
  for (; n < max_packets; ++n) {
    const PacketHeader* p = in_->peek();
    if (!p) break;
    handle(*p);
    in_->release();
  }
  if (n && in_control_->producer_blocked.load(std::memory_order_seq_cst)) peer_doorbell_.ring();
}

void Endpoint::handle(const PacketHeader& p) {
  switch (p.type) {
    case PacketType::Eager:
      begin_eager(p);
      break;
    case PacketType::Fragment:
      continue_eager(p);
      break;
    case PacketType::Rendezvous:
      begin_rendezvous(p);
      break;
    case PacketType::Ack:
      on_ack(p);
      break;
    case PacketType::Pad:
      break;
    default:
      protocol_error("unknown packet type");
  }
}

Request* Endpoint::take_posted(uint64_t tag) {
  auto it = std::find_if(posted_.begin(), posted_.end(), [&](const Request* r) { return r->tag == tag; });
  if (it == posted_.end()) return nullptr;
  Request* r = *it;
  posted_.erase(it);
  return r;
}

// The first packet of a message announces its length; nothing is sized by it
// (an unexpected message's staging grows with its data), but no peer may
// announce more than the transport's largest message.
void Endpoint::check_length(const PacketHeader& p) const {
  if (p.length > kMaxMessage)
    protocol_error(plugin::format("a message of %llu bytes announced, more than the largest a peer may send (%llu)",
                                  ull(p.length), ull(kMaxMessage)));
}

void Endpoint::begin_eager(const PacketHeader& p) {
  if (streaming_ != arrivals_.end()) protocol_error("a message began inside another one");
  check_length(p);
  if (p.payload_bytes > p.length) protocol_error("a first packet longer than its message");
  auto it = arrivals_.insert(arrivals_.end(), Arrival{.tag = p.tag, .length = p.length});
  if (Request* r = take_posted(p.tag)) bind(*it, *r);
  streaming_ = it;
  continue_eager(p);
}

void Endpoint::continue_eager(const PacketHeader& p) {
  if (streaming_ == arrivals_.end()) protocol_error("a fragment outside any message");
  Arrival& a = *streaming_;
  const uint64_t n = p.payload_bytes;
  if (p.length != a.length)
    protocol_error(
        plugin::format("a fragment of a message of %llu bytes inside one of %llu bytes", ull(p.length), ull(a.length)));
  if (n > a.length - a.received)
    protocol_error(
        plugin::format("%llu bytes more for a message of %llu bytes that has %llu already: more data than "
                       "it announced",
                       ull(n), ull(a.length), ull(a.received)));
  if (n && a.receive)
    plugin::copy_bytes(a.receive->target + a.received, payload_of(&p), n);
  else if (n && a.unexpected())
    a.staging.append(payload_of(&p), n, a.length - a.received);
  a.received += n;
  if (!a.complete()) return;
  auto done = streaming_;
  streaming_ = arrivals_.end();
  settle(done);
}

void Endpoint::begin_rendezvous(const PacketHeader& p) {
  if (streaming_ != arrivals_.end()) protocol_error("a message began inside another one");
  check_length(p);
  if (p.payload_bytes != sizeof(RendezvousPayload)) protocol_error("a rendezvous packet of the wrong size");
  RendezvousPayload payload;
  std::memcpy(&payload, payload_of(&p), sizeof payload);
  Arrival a{.tag = p.tag, .length = p.length, .remote_address = payload.address, .cookie = p.cookie};
  if (Request* r = take_posted(p.tag))
    read_rendezvous(a, *r);
  else
    arrivals_.push_back(std::move(a));
}

void Endpoint::on_ack(const PacketHeader& p) {
  auto it = awaiting_ack_.find(p.cookie);
  if (it == awaiting_ack_.end()) protocol_error("an acknowledgement of no pending send");
  Request& r = *it->second;
  awaiting_ack_.erase(it);
  if (p.length == 0)
    r.complete(r.length);
  else
    r.fail(
        HCOMM_ERR_REMOTE,
        plugin::format("shm: %s could not read the message of %llu bytes with tag %llu from this process: %s",
                       describe_peer().c_str(), ull(r.length), ull(r.tag), std::strerror(static_cast<int>(p.length))));
}

void Endpoint::bind(Arrival& a, Request& r) {
  if (a.length > r.length) {
    r.fail(HCOMM_ERR_INVALID_ARGUMENT, truncation(describe_peer(), a.tag, a.length, r.length));
    a.discard = true;
    a.staging.clear();
    return;
  }
  a.staging.copy_to(r.target);
  a.staging.clear();
  a.receive = &r;
}

void Endpoint::read_rendezvous(Arrival& a, Request& r) {
  int status = 0;
  if (a.length > r.length) {
    r.fail(HCOMM_ERR_INVALID_ARGUMENT, truncation(describe_peer(), a.tag, a.length, r.length));
  } else if ((status = net_.cross_memory().read(peer_.pid, *a.remote_address, r.target, a.length)) == 0) {
    r.complete(a.length);
  } else if (status == ESRCH) {
    r.fail(HCOMM_ERR_REMOTE, plugin::format("shm: %s died", describe_peer().c_str()));
  } else if (status == EFAULT) {
    // A live sender keeps the buffer of a pending send mapped: its memory
    // going away means the peer is exiting or failing.
    r.fail(HCOMM_ERR_REMOTE, plugin::format("shm: %s released the buffer of a message in flight (it is exiting or "
                                            "failed)", describe_peer().c_str()));
  } else {
    r.fail(HCOMM_ERR_SYSTEM, plugin::format("shm: cannot read the message of %llu bytes with tag %llu from %s: %s",
                                            ull(a.length), ull(a.tag), describe_peer().c_str(), std::strerror(status)));
  }
  acks_.push_back(Ack{.cookie = a.cookie, .status = status});
}

// A whole message leaves the arrivals once its receive has it (or dropped it).
void Endpoint::settle(Arrivals::iterator it) {
  if (!it->complete()) return;
  if (it->receive) {
    it->receive->complete(it->length);
    arrivals_.erase(it);
  } else if (it->discard) {
    arrivals_.erase(it);
  }
}

// ---- sending ----

bool Endpoint::use_cma(uint64_t length) const {
  return net_.config().cma && length >= net_.config().cma_threshold && in_control_ &&
         in_control_->producer_cma.load(std::memory_order_acquire) == static_cast<uint32_t>(CmaState::Permitted);
}

uint64_t Endpoint::next_payload() const {
  if (!acks_.empty()) return 0;
  const Request& r = *send_queue_.front();
  if (!front_started_ && use_cma(r.length)) return sizeof(RendezvousPayload);
  return std::min(r.length - front_sent_, out_.max_payload());
}

void Endpoint::send() {
  const uint64_t before = out_.written();
  while (!acks_.empty()) {
    PacketHeader* h = out_.reserve(0);
    if (!h) break;
    const Ack& ack = acks_.front();
    h->type = PacketType::Ack;
    h->tag = 0;
    h->length = static_cast<uint64_t>(ack.status);
    h->cookie = ack.cookie;
    out_.commit();
    acks_.pop_front();
  }
  while (acks_.empty() && !send_queue_.empty() && push(*send_queue_.front())) send_queue_.pop_front();
  if (out_.written() != before) peer_doorbell_.ring();
  // Stored before the next look at the room (has_work), seq_cst like the
  // consumer's tail, so that a consumer freeing room sees it (doorbell.hpp).
  const bool blocked = !acks_.empty() || !send_queue_.empty();
  if (blocked != blocked_) out_control_->producer_blocked.store(blocked ? 1 : 0, std::memory_order_seq_cst);
  blocked_ = blocked;
}

// Puts as much of r in the FIFO as fits; true once all of it is there.
bool Endpoint::push(Request& r) {
  if (!front_started_ && use_cma(r.length)) {
    PacketHeader* h = out_.reserve(sizeof(RendezvousPayload));
    if (!h) return false;
    const uint64_t cookie = next_cookie_++;
    h->type = PacketType::Rendezvous;
    h->tag = r.tag;
    h->length = r.length;
    h->cookie = cookie;
    const RendezvousPayload payload{.address = reinterpret_cast<uintptr_t>(r.source)};
    std::memcpy(payload_of(h), &payload, sizeof payload);
    out_.commit();
    awaiting_ack_.emplace(cookie, &r);
    return true;
  }
  do {
    const uint64_t n = std::min(r.length - front_sent_, out_.max_payload());
    PacketHeader* h = out_.reserve(n);
    if (!h) return false;
    h->type = front_started_ ? PacketType::Fragment : PacketType::Eager;
    h->tag = r.tag;
    h->length = r.length;
    h->cookie = 0;
    if (n) plugin::copy_bytes(payload_of(h), r.source + front_sent_, n);
    out_.commit();
    front_started_ = true;
    front_sent_ += n;
  } while (front_sent_ < r.length);
  r.complete(r.length);
  front_started_ = false;
  front_sent_ = 0;
  return true;
}

}  // namespace hcomm::shm
