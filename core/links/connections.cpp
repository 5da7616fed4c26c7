#include "core/links/connections.hpp"

#include <sched.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstring>
#include <thread>

#include "core/common/error.hpp"
#include "core/common/log.hpp"
#include "core/exec/operation.hpp"

namespace hcomm::links {

namespace {

// One transport's address as every rank publishes it.
struct AddressSlot {
  char transport[32];
  uint32_t len;
  uint8_t blob[HCOMM_TRANSPORT_MAX_ADDRESS];
};

using Clock = std::chrono::steady_clock;

// While shared, a wait in the nets holds the lock: it blocks no longer than
// this, so that a call of another thread that comes meanwhile waits at most
// as long.
constexpr int64_t kSharedWaitUs = 1000;

}  // namespace

// Only shared connections are ever poisoned (by another communicator on them).
Connections::Guard::Guard(const Connections& c)
    : mutex_(c.mutex_), locked_(c.shared_.load(std::memory_order_acquire)) {
  if (!locked_) return;
  c.waiters_.fetch_add(1, std::memory_order_relaxed);
  mutex_.lock();
  c.waiters_.fetch_sub(1, std::memory_order_relaxed);
  if (!c.poisoned_.empty()) {
    mutex_.unlock();
    locked_ = false;
    c.throw_poisoned();
  }
}

void Connections::throw_poisoned() const {
  HCOMM_THROW(HCOMM_ERR_REMOTE, "the connections this communicator shares are unusable: %s", poisoned_.c_str());
}

Connections::Connections(bootstrap::Bootstrap& bootstrap, const std::array<uint8_t, 16>& comm_key,
                         const topology::Topology& topology, const std::string& transports, double timeout_s)
    : rank_(bootstrap.rank()), size_(bootstrap.size()), transports_(transports), links_(bootstrap.size()) {
  try {
    open_nets(comm_key, transports);
    exchange_addresses(bootstrap);
    choose(bootstrap, topology);
    connect_all(bootstrap, timeout_s);
  } catch (...) {
    release();
    throw;
  }
}

Connections::~Connections() { release(); }

void Connections::release() {
  for (Link& l : links_)
    if (l.ep) l.net->transport->iface().ep_close(l.ep), l.ep = nullptr;
  for (auto& n : nets_)
    if (n->handle) n->transport->iface().close(n->handle), n->handle = nullptr;
}

void Connections::open_nets(const std::array<uint8_t, 16>& key, const std::string& transports) {
  transport::Allowed allowed = transport::allowed(transports);
  ordered_ = allowed.ordered;
  hcomm_transport_open_args_t args{
      .size = sizeof(hcomm_transport_open_args_t), .rank = rank_, .nranks = size_, .comm_key = {}};
  std::memcpy(args.comm_key, key.data(), key.size());
  for (transport::Transport* t : allowed.transports) {
    auto net = std::make_unique<Net>(Net{t});
    t->check(t->iface().open(t->ctx(), &args, &net->handle), "open");
    nets_.push_back(std::move(net));
  }
}

void Connections::exchange_addresses(bootstrap::Bootstrap& bootstrap) {
  const size_t nt = nets_.size(), record = nt * sizeof(AddressSlot);
  std::vector<uint8_t> mine(record, 0);
  addresses_.resize(record * size_);
  for (size_t t = 0; t < nt; ++t) {
    auto* slot = reinterpret_cast<AddressSlot*>(mine.data() + t * sizeof(AddressSlot));
    std::snprintf(slot->transport, sizeof slot->transport, "%s", nets_[t]->transport->name().c_str());
    size_t len = sizeof slot->blob;
    nets_[t]->transport->check(nets_[t]->transport->iface().address(nets_[t]->handle, slot->blob, &len), "address");
    slot->len = static_cast<uint32_t>(len);
  }
  // Every rank must offer the same transports in the same order.
  uint64_t count = nt;
  std::vector<uint64_t> counts(size_);
  bootstrap.allgather(&count, sizeof count, counts.data());
  for (int r = 0; r < size_; ++r)
    if (counts[r] != nt)
      HCOMM_THROW(HCOMM_ERR_CONFIG,
                  "rank %d uses %llu transports, this rank (%d) %zu: HCOMM_TRANSPORTS and HCOMM_PLUGIN_PATH must be "
                  "the same on every rank",
                  r, static_cast<unsigned long long>(counts[r]), rank_, nt);
  bootstrap.allgather(mine.data(), record, addresses_.data());
  for (int r = 0; r < size_; ++r)
    for (size_t t = 0; t < nt; ++t) {
      const auto* slot = reinterpret_cast<const AddressSlot*>(addresses_.data() + r * record + t * sizeof(AddressSlot));
      if (slot->len > sizeof slot->blob)
        HCOMM_THROW(HCOMM_ERR_REMOTE,
                    "rank %d gave a %s address of %u bytes; an address has at most %zu: does every rank run the "
                    "same HComm?",
                    r, nets_[t]->transport->name().c_str(), slot->len, sizeof slot->blob);
      if (nets_[t]->transport->name() != slot->transport)
        HCOMM_THROW(HCOMM_ERR_CONFIG,
                    "rank %d offers transport '%.31s' where this rank offers '%s': HCOMM_TRANSPORTS and "
                    "HCOMM_PLUGIN_PATH must be the same on every rank",
                    r, slot->transport, nets_[t]->transport->name().c_str());
    }
}

const uint8_t* Connections::address(int r, size_t t, uint32_t* len) const {
  const auto* slot = reinterpret_cast<const AddressSlot*>(
      addresses_.data() + (static_cast<size_t>(r) * nets_.size() + t) * sizeof(AddressSlot));
  *len = slot->len;
  return slot->blob;
}

// Every transport scores the pair from the two addresses; the best offer
// serves it (topology::best_offer). A transport that maps memory reaches
// only the processes of its own host, so it serves only pairs that the
// topology puts on one host, whatever its own score says.
Connections::Choice Connections::pair(const topology::Topology& topology, int a, int b) const {
  std::vector<topology::Offer> offers;
  for (size_t t = 0; t < nets_.size(); ++t) {
    const transport::Transport& tr = *nets_[t]->transport;
    uint32_t la = 0, lb = 0;
    const uint8_t* aa = address(a, t, &la);
    const uint8_t* ab = address(b, t, &lb);
    hcomm_link_score_t s{};
    tr.check(tr.iface().score(nets_[t]->handle, aa, la, ab, lb, &s), "score");
    offers.push_back({.score = s, .priority = tr.props().priority, .host_local = tr.maps_memory()});
  }
  const int best = topology::best_offer(offers, ordered_, topology.same_host(a, b));
  return best < 0 ? Choice{} : Choice{.net = best, .score = offers[best].score};
}

void Connections::choose(bootstrap::Bootstrap& bootstrap, const topology::Topology& topology) {
  std::vector<uint8_t> choice(size_, 0xFF);
  for (int p = 0; p < size_; ++p) {
    if (p == rank_) continue;
    const Choice c = pair(topology, rank_, p);
    if (c.net < 0) {
      std::string names;
      for (const auto& n : nets_) names += (names.empty() ? "" : ", ") + n->transport->name();
      HCOMM_THROW(HCOMM_ERR_UNSUPPORTED,
                  "no allowed transport reaches rank %d from rank %d (link class %s; transports allowed: %s; see "
                  "HCOMM_TRANSPORTS)",
                  p, rank_, topology::link_class_name(topology.link_class(rank_, p)), names.c_str());
    }
    choice[p] = static_cast<uint8_t>(c.net);
    links_[p].net = nets_[c.net].get();
    links_[p].score = c.score;
    nets_[c.net]->used = true;
    HCOMM_INFO(INIT, "rank %d -> rank %d: transport %s (%.1f GB/s, %.1f us, link class %s)", rank_, p,
               nets_[c.net]->transport->name().c_str(), c.score.bandwidth_gbps, c.score.latency_us,
               topology::link_class_name(topology.link_class(rank_, p)));
  }
  // Cross-check: a transport whose scores are not symmetric would split a pair.
  std::vector<uint8_t> all(static_cast<size_t>(size_) * size_);
  bootstrap.allgather(choice.data(), size_, all.data());
  for (int p = 0; p < size_; ++p)
    if (p != rank_ && all[static_cast<size_t>(p) * size_ + rank_] != choice[p])
      HCOMM_THROW(HCOMM_ERR_INTERNAL, "ranks %d and %d chose different transports for their link (%s vs index %u)",
                  rank_, p, nets_[choice[p]]->transport->name().c_str(), all[static_cast<size_t>(p) * size_ + rank_]);
}

void Connections::connect_all(bootstrap::Bootstrap& bootstrap, double timeout_s) {
  for (int p = 0; p < size_; ++p) {
    if (p == rank_) continue;
    Net& net = *links_[p].net;
    const int t = net_index(p);
    uint32_t len = 0;
    const uint8_t* blob = address(p, t, &len);
    net.transport->check(net.transport->iface().connect(net.handle, p, blob, len, &links_[p].ep), "connect");
  }
  auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s));
  for (;;) {
    std::string waiting;
    for (int p = 0; p < size_; ++p) {
      if (p == rank_) continue;
      int ready = 0;
      const auto& t = *links_[p].net->transport;
      t.check(t.iface().ep_ready(links_[p].ep, &ready), "connect");
      if (!ready) waiting += (waiting.empty() ? "" : ", ") + std::to_string(p);
    }
    if (waiting.empty()) break;
    const int failed = bootstrap.failed_peer();
    if (failed >= 0)
      HCOMM_THROW(HCOMM_ERR_REMOTE, "rank %d left the job (its process died or closed the communicator)", failed);
    if (Clock::now() > deadline)
      HCOMM_THROW(HCOMM_ERR_TIMEOUT, "rank %d could not connect to ranks %s within the timeout of %g s (HCOMM_TIMEOUT)",
                  rank_, waiting.c_str(), timeout_s);
    progress_nets();
    wait_nets(1000);
  }
  // Nets that serve nobody are closed at once (a TCP listener among shm peers, say).
  for (auto& n : nets_)
    if (!n->used && n->handle) n->transport->iface().close(n->handle), n->handle = nullptr;
}

bool Connections::any_thread() const {
  return std::ranges::all_of(nets_, [](const auto& n) {
    return !n->used || (n->transport->props().caps & HCOMM_CAP_ANY_THREAD) != 0;
  });
}

int Connections::net_index(int peer) const {
  const Net* net = links_.at(peer).net;
  return static_cast<int>(std::find_if(nets_.begin(), nets_.end(), [&](const auto& n) { return n.get() == net; }) -
                          nets_.begin());
}

const Connections::Link& Connections::link(int peer) const {
  if (peer < 0 || peer >= size_ || peer == rank_ || !links_[peer].ep)
    HCOMM_THROW(HCOMM_ERR_INTERNAL, "no link from rank %d to rank %d", rank_, peer);
  return links_[peer];
}

void* Connections::isend(int peer, const void* buf, size_t len, uint64_t tag, bool counted) {
  const Guard guard(*this);
  const Link& l = link(peer);
  void* req = nullptr;
  l.net->transport->check(l.net->transport->iface().isend(l.ep, buf, len, tag, &req), "send");
  in_flight_ += counted && req != nullptr;
  return req;
}

void* Connections::irecv(int peer, void* buf, size_t len, uint64_t tag, bool counted) {
  const Guard guard(*this);
  const Link& l = link(peer);
  void* req = nullptr;
  l.net->transport->check(l.net->transport->iface().irecv(l.ep, buf, len, tag, &req), "receive");
  in_flight_ += counted && req != nullptr;
  return req;
}

// A request ends when test reports it done or fails.
bool Connections::test(int peer, void* request, size_t* bytes, bool counted) {
  const Guard guard(*this);
  const Link& l = link(peer);
  int done = 0;
  hcomm_result_t rc = l.net->transport->iface().test(request, &done, bytes);
  if (counted && (rc != HCOMM_SUCCESS || done)) --in_flight_;
  l.net->transport->check(rc, "test");
  return done != 0;
}

// With none of this rank's requests in flight on a transport, the transports
// are only looked at every kIdleProgressEvery calls: a rank that waits for a
// mapped call spins here, and peers' messages can wait (they land in FIFOs
// and sockets; what this rank still owes them, like acknowledgements, goes
// out on the next look).
void Connections::progress(bool always) {
  const Guard guard(*this);
  if (!always && in_flight_ == 0 && ++idle_progress_calls_ % kIdleProgressEvery != 0) return;
  progress_nets();
}

void Connections::progress_nets() {
  for (auto& n : nets_)
    if (n->handle) n->transport->check(n->transport->iface().progress(n->handle), "progress");
}

void Connections::wait(int64_t timeout_us) {
  if (!shared_.load(std::memory_order_acquire)) {
    const Guard guard(*this);
    wait_nets(timeout_us);
    return;
  }
  // Shared: a call of another thread must not wait behind this one's sleep
  // (nor find the lock taken again at once, time after time), so this one
  // sleeps in the nets only while no call waits for the lock, and briefly.
  std::unique_lock lock(mutex_, std::try_to_lock);
  if (!lock.owns_lock() || waiters_.load(std::memory_order_relaxed) > 0) {
    if (lock.owns_lock()) lock.unlock();
    std::this_thread::yield();
    return;
  }
  if (!poisoned_.empty()) throw_poisoned();
  wait_nets(std::min(timeout_us, kSharedWaitUs));
}

// One net: block in it; several: short waits in turn, so none starves.
void Connections::wait_nets(int64_t timeout_us) {
  int active = 0;
  for (auto& n : nets_) active += n->handle != nullptr;
  for (auto& n : nets_) {
    if (!n->handle) continue;
    if (!n->transport->has_wait()) {
      sched_yield();
      continue;
    }
    int64_t t = active == 1 ? timeout_us : std::min<int64_t>(timeout_us / active, 200);
    n->transport->check(n->transport->iface().wait(n->handle, t), "wait");
  }
}

uint32_t Connections::free_contexts() const {
  const std::lock_guard lock(mutex_);
  return ~contexts_taken_ & ((uint32_t{1} << exec::kContexts) - 1);
}

void Connections::take_context(int context) {
  const std::lock_guard lock(mutex_);
  if (contexts_taken_ >> context & 1)
    HCOMM_THROW(HCOMM_ERR_INTERNAL, "rank %d: tag context %d is taken already", rank_, context);
  if (contexts_taken_) shared_.store(true, std::memory_order_release);  // from now on, for good
  contexts_taken_ |= uint32_t{1} << context;
}

void Connections::give_back_context(int context, std::shared_ptr<void> keep) {
  const std::lock_guard lock(mutex_);
  if (keep) {
    kept_.push_back(std::move(keep));
    if (kept_.size() > kMaxKept) return;  // the context stays taken
  }
  contexts_taken_ &= ~(uint32_t{1} << context);
}

void Connections::poison(const std::string& why) {
  const std::lock_guard lock(mutex_);
  if (poisoned_.empty()) poisoned_ = why;
}

}  // namespace hcomm::links
