#include "core/comm/peers.hpp"

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include "core/algorithm/calibration.hpp"
#include "core/common/error.hpp"
#include "core/common/log.hpp"
#include "core/common/settings.hpp"

namespace hcomm::comm {

namespace {

// One transport's address as every rank publishes it.
struct AddressSlot {
  char transport[32];
  uint32_t len;
  uint8_t blob[HCOMM_TRANSPORT_MAX_ADDRESS];
};

using Clock = std::chrono::steady_clock;

// A copy through memory: the scale of the links' models (the transports'
// bandwidths), and a peer's byte loaded through mapped memory. A flag raised
// and seen across cores: mapped memory's latency. Both fitted to allreduces
// of 2 and 4 ranks.
constexpr double kCopyGbps = 16, kMappedFlagUs = 0.3;

// A byte combined costs what this machine's ranks measure against a copy
// (algorithm::reduce_to_copy_ratio, the slowest rank's): one_shot combines
// all of the message on every rank, two_shot, ring and the others a share
// each, and which is the faster turns on it.
hcomm_link_model_t model_of(double bandwidth_gbps, double latency_us, double reduce_to_copy) {
  return {.alpha_us = latency_us,
          .beta_us_per_byte = bandwidth_gbps > 0 ? 1.0 / (bandwidth_gbps * 1e3) : 0,
          .gamma_us_per_byte = reduce_to_copy / (kCopyGbps * 1e3)};
}

}  // namespace

Peers::Peers(bootstrap::Bootstrap& bootstrap, const std::array<uint8_t, 16>& comm_key,
             const topology::Topology& topology, const Config& config)
    : bootstrap_(bootstrap),
      topology_(topology),
      timeout_s_(config.timeout_s),
      rank_(bootstrap.rank()),
      size_(bootstrap.size()),
      links_(bootstrap.size()) {
  try {
    open_nets(comm_key, config.transports);
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
    bootstrap_.allgather(&count, sizeof count, counts.data());
    for (int r = 0; r < size_; ++r)
      if (counts[r] != nt)
        HCOMM_THROW(HCOMM_ERR_CONFIG,
                    "rank %d uses %llu transports, this rank (%d) %zu: HCOMM_TRANSPORTS and HCOMM_PLUGIN_PATH must be "
                    "the same on every rank",
                    r, static_cast<unsigned long long>(counts[r]), rank_, nt);
    bootstrap_.allgather(mine.data(), record, addresses_.data());
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
    choose();
    agree_on_models();
    connect_all();
    map_windows();
  } catch (...) {
    release();
    throw;
  }
}

Peers::~Peers() { release(); }

void Peers::release() {
  mapped_.reset();
  for (Link& l : links_)
    if (l.ep) l.net->transport->iface().ep_close(l.ep), l.ep = nullptr;
  for (auto& n : nets_)
    if (n->handle) n->transport->iface().close(n->handle), n->handle = nullptr;
}

void Peers::open_nets(const std::array<uint8_t, 16>& key, const std::string& transports) {
  transport::Allowed allowed = transport::allowed(transports);
  ordered_ = allowed.ordered;
  hcomm_transport_open_args_t args{.size = sizeof(hcomm_transport_open_args_t), .rank = rank_, .nranks = size_, .comm_key = {}};
  std::memcpy(args.comm_key, key.data(), key.size());
  for (transport::Transport* t : allowed.transports) {
    auto net = std::make_unique<Net>(Net{t});
    t->check(t->iface().open(t->ctx(), &args, &net->handle), "open");
    nets_.push_back(std::move(net));
  }
}

const uint8_t* Peers::address(int r, size_t t, uint32_t* len) const {
  const auto* slot = reinterpret_cast<const AddressSlot*>(addresses_.data() +
                                                          (static_cast<size_t>(r) * nets_.size() + t) * sizeof(AddressSlot));
  *len = slot->len;
  return slot->blob;
}

// Every transport scores the pair from the two addresses; the best offer
// serves it (topology::best_offer). A transport that maps memory reaches
// only the processes of its own host, so it serves only pairs that the
// topology puts on one host, whatever its own score says.
Peers::Choice Peers::pair(int a, int b) const {
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
  const int best = topology::best_offer(offers, ordered_, topology_.same_host(a, b));
  return best < 0 ? Choice{} : Choice{.net = best, .score = offers[best].score};
}

// The link's bandwidth and latency as the algorithms' models see them.
hcomm_link_score_t Peers::modelled(int a, int b, const hcomm_link_score_t& score) const {
  return topology_.described_link(a, b).value_or(score);
}

void Peers::choose() {
  std::vector<uint8_t> choice(size_, 0xFF);
  for (int p = 0; p < size_; ++p) {
    if (p == rank_) continue;
    const Choice c = pair(rank_, p);
    if (c.net < 0) {
      std::string names;
      for (const auto& n : nets_) names += (names.empty() ? "" : ", ") + n->transport->name();
      HCOMM_THROW(HCOMM_ERR_UNSUPPORTED,
                  "no allowed transport reaches rank %d from rank %d (link class %s; transports allowed: %s; see "
                  "HCOMM_TRANSPORTS)",
                  p, rank_, topology::link_class_name(topology_.link_class(rank_, p)), names.c_str());
    }
    choice[p] = static_cast<uint8_t>(c.net);
    links_[p].net = nets_[c.net].get();
    links_[p].score = c.score;
    nets_[c.net]->used = true;
    HCOMM_INFO(INIT, "rank %d -> rank %d: transport %s (%.1f GB/s, %.1f us, link class %s)", rank_, p,
               nets_[c.net]->transport->name().c_str(), c.score.bandwidth_gbps, c.score.latency_us,
               topology::link_class_name(topology_.link_class(rank_, p)));
  }
  // Cross-check: a transport whose scores are not symmetric would split a pair.
  std::vector<uint8_t> all(static_cast<size_t>(size_) * size_);
  bootstrap_.allgather(choice.data(), size_, all.data());
  for (int p = 0; p < size_; ++p)
    if (p != rank_ && all[static_cast<size_t>(p) * size_ + rank_] != choice[p])
      HCOMM_THROW(HCOMM_ERR_INTERNAL, "ranks %d and %d chose different transports for their link (%s vs index %u)", rank_,
                  p, nets_[choice[p]]->transport->name().c_str(), all[static_cast<size_t>(p) * size_ + rank_]);
}

// The slowest links of one host and between hosts: each rank takes the
// lowest bandwidth and highest latency of its own links, and the ranks
// combine theirs, so that every rank's algorithms see the same models.
void Peers::agree_on_models() {
  struct Worst {
    double bandwidth[2] = {0, 0};  // [0] of one host, [1] between hosts; 0: no such link
    double latency[2] = {0, 0};
    double reduce_to_copy = 0;
  };
  auto merge = [](Worst& into, int level, double bw, double lat) {
    into.bandwidth[level] = into.bandwidth[level] == 0 ? bw : std::min(into.bandwidth[level], bw);
    into.latency[level] = std::max(into.latency[level], lat);
  };
  Worst mine;
  mine.reduce_to_copy = algorithm::reduce_to_copy_ratio();
  for (int p = 0; p < size_; ++p) {
    if (p == rank_) continue;
    const int level = topology_.same_host(rank_, p) ? 0 : 1;
    const hcomm_link_score_t s = modelled(rank_, p, links_[p].score);
    merge(mine, level, s.bandwidth_gbps, s.latency_us);
  }
  std::vector<Worst> all(size_);
  bootstrap_.allgather(&mine, sizeof mine, all.data());
  Worst worst;
  for (const Worst& w : all) {
    worst.reduce_to_copy = std::max(worst.reduce_to_copy, w.reduce_to_copy);
    for (int level = 0; level < 2; ++level)
      if (w.bandwidth[level] > 0) merge(worst, level, w.bandwidth[level], w.latency[level]);
  }
  const bool has[2] = {worst.bandwidth[0] > 0, worst.bandwidth[1] > 0};
  for (int level = 0; level < 2; ++level)
    if (!has[level] && has[1 - level])
      worst.bandwidth[level] = worst.bandwidth[1 - level], worst.latency[level] = worst.latency[1 - level];
  const double r = worst.reduce_to_copy;
  intra_ = model_of(worst.bandwidth[0], worst.latency[0], r);
  inter_ = model_of(worst.bandwidth[1], worst.latency[1], r);
  link_ = model_of(has[1] ? std::min(worst.bandwidth[0], worst.bandwidth[1]) : worst.bandwidth[0],
                   std::max(worst.latency[0], worst.latency[1]), r);
  mapped_model_ = model_of(kCopyGbps, kMappedFlagUs, r);
  HCOMM_INFO(INIT, "rank %d: a reduction costs %.2fx a copy (the slowest rank's; this rank measured %.2fx)", rank_, r,
             mine.reduce_to_copy);
}

// Each rank knows its own links; the ranks all-gather them.
std::vector<topology::LinkEntry> Peers::all_links() {
  struct Cell {
    double bandwidth_gbps, latency_us;
    int32_t net;  // index into nets_ (the same on every rank), -1 for the rank itself
    int32_t unused;
  };
  std::vector<Cell> mine(size_, Cell{0, 0, -1, 0}), all(static_cast<size_t>(size_) * size_);
  for (int p = 0; p < size_; ++p) {
    if (p == rank_) continue;
    const hcomm_link_score_t s = modelled(rank_, p, links_[p].score);
    const auto net = std::find_if(nets_.begin(), nets_.end(), [&](const auto& n) { return n.get() == links_[p].net; });
    mine[p] = {s.bandwidth_gbps, s.latency_us, static_cast<int32_t>(net - nets_.begin()), 0};
  }
  bootstrap_.allgather(mine.data(), sizeof(Cell) * size_, all.data());
  std::vector<topology::LinkEntry> out;
  for (int a = 0; a < size_; ++a)
    for (int b = a + 1; b < size_; ++b) {
      const Cell& c = all[static_cast<size_t>(a) * size_ + b];
      out.push_back({.a = a,
                     .b = b,
                     .transport = nets_.at(c.net)->transport->name(),
                     .score = {.reachable = 1, .bandwidth_gbps = c.bandwidth_gbps, .latency_us = c.latency_us}});
    }
  return out;
}

void Peers::connect_all() {
  for (int p = 0; p < size_; ++p) {
    if (p == rank_) continue;
    Net& net = *links_[p].net;
    size_t t = std::find_if(nets_.begin(), nets_.end(), [&](const auto& n) { return n.get() == &net; }) - nets_.begin();
    uint32_t len = 0;
    const uint8_t* blob = address(p, t, &len);
    net.transport->check(net.transport->iface().connect(net.handle, p, blob, len, &links_[p].ep), "connect");
  }
  auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s_));
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
    check_peers();
    if (Clock::now() > deadline)
      HCOMM_THROW(HCOMM_ERR_TIMEOUT, "rank %d could not connect to ranks %s within the timeout of %g s (HCOMM_TIMEOUT)",
                  rank_, waiting.c_str(), timeout_s_);
    progress_nets();
    wait(1000);
  }
  // Nets that serve nobody are closed at once (a TCP listener among shm peers, say).
  for (auto& n : nets_)
    if (!n->used && n->handle) n->transport->iface().close(n->handle), n->handle = nullptr;
}

// Every rank maps every other's window when one transport that maps memory
// serves all its peers; the ranks agree on it through the bootstrap.
void Peers::map_windows() {
  if (size_ == 1) return;
  transport::Transport* shared = links_[rank_ == 0 ? 1 : 0].net->transport;
  std::vector<void*> endpoints(size_, nullptr);
  for (int p = 0; p < size_; ++p) {
    if (p == rank_) continue;
    if (shared && links_[p].net->transport != shared) shared = nullptr;
    endpoints[p] = links_[p].ep;
  }
  if (shared && !shared->maps_memory()) shared = nullptr;
  mapped_ = transport::MappedLinks::connect(shared, endpoints, bootstrap_, settings::get_size("HCOMM_WINDOW_BYTES"));
  if (!mapped_) return;
  // A line read from a peer's input in place stays in this rank's caches until
  // the owner writes it again; between last-level caches taking it back then
  // costs the owner more than evicting it costs the reader, and a line stored
  // into a peer's memory is best read from memory. Under one cache both cost.
  const std::string setting = settings::get_string("HCOMM_CACHES_APART");
  auto apart = [&](int a, int b) {
    return a != b && (setting == "on" || (setting == "auto" && topology_.caches_apart(a, b)));
  };
  int apart_from = 0;
  for (int p = 0; p < size_; ++p) {
    mapped_->set_caches_apart(p, apart(rank_, p));
    apart_from += apart(rank_, p);
  }
  // Every rank sees the same topology, so all agree on the view's flag.
  for (int a = 0; a < size_ && !caches_apart_; ++a)
    for (int b = a + 1; b < size_ && !caches_apart_; ++b) caches_apart_ = apart(a, b);
  HCOMM_INFO(INIT, "rank %d maps the windows of all %d ranks (%llu bytes each call)%s; its caches are apart from "
             "%d of them (it evicts what it reads from them in place and stores into them past its caches)", rank_,
             size_, static_cast<unsigned long long>(mapped_->window_bytes()),
             mapped_->peer_buffers() ? ", and copies from their buffers by address" : "", apart_from);
}

const Peers::Link& Peers::link(int peer) const {
  if (peer < 0 || peer >= size_ || peer == rank_ || !links_[peer].ep)
    HCOMM_THROW(HCOMM_ERR_INTERNAL, "no link from rank %d to rank %d", rank_, peer);
  return links_[peer];
}

void* Peers::isend(int peer, const void* buf, size_t len, uint64_t tag) {
  const Link& l = link(peer);
  void* req = nullptr;
  l.net->transport->check(l.net->transport->iface().isend(l.ep, buf, len, tag, &req), "send");
  in_flight_ += req != nullptr;
  return req;
}

void* Peers::irecv(int peer, void* buf, size_t len, uint64_t tag) {
  void* req = irecv_standing(peer, buf, len, tag);
  in_flight_ += req != nullptr;
  return req;
}

void* Peers::irecv_standing(int peer, void* buf, size_t len, uint64_t tag) {
  const Link& l = link(peer);
  void* req = nullptr;
  l.net->transport->check(l.net->transport->iface().irecv(l.ep, buf, len, tag, &req), "receive");
  return req;
}

bool Peers::test_standing(int peer, void* request, size_t* bytes) {
  const Link& l = link(peer);
  int done = 0;
  l.net->transport->check(l.net->transport->iface().test(request, &done, bytes), "test");
  return done != 0;
}

// A request ends when test reports it done or fails.
bool Peers::test(int peer, void* request, size_t* bytes) {
  const Link& l = link(peer);
  int done = 0;
  hcomm_result_t rc = l.net->transport->iface().test(request, &done, bytes);
  if (rc != HCOMM_SUCCESS || done) --in_flight_;
  l.net->transport->check(rc, "test");
  return done != 0;
}

// With none of this rank's requests in flight on a transport, the transports
// are only looked at every kIdleProgressEvery calls: a rank that waits for a
// mapped call spins here, and peers' messages can wait (they land in FIFOs
// and sockets; what this rank still owes them, like acknowledgements, goes
// out on the next look).
void Peers::progress() {
  if (in_flight_ == 0 && ++idle_progress_calls_ % kIdleProgressEvery != 0) return;
  progress_nets();
}

void Peers::progress_nets() {
  for (auto& n : nets_)
    if (n->handle) n->transport->check(n->transport->iface().progress(n->handle), "progress");
}

// A mapped call waiting for a peer: sleep on this rank's window doorbell,
// which peers ring when they raise a flag. Else one net: block in it;
// several: short waits in turn, so none starves.
void Peers::wait(int64_t timeout_us) {
  if (mapped_ && mapped_->calls().awaited) {
    mapped_->sleep(timeout_us);
    return;
  }
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

void Peers::check_peers() {
  int failed = bootstrap_.failed_peer();
  if (failed >= 0)
    HCOMM_THROW(HCOMM_ERR_REMOTE, "rank %d left the job (its process died or closed the communicator)", failed);
}

std::string Peers::transport_name(int peer) const {
  if (peer == rank_) return "self";
  return links_[peer].net ? links_[peer].net->transport->name() : "none";
}

void Peers::describe_mapped(hcomm_comm_view_t& view) const {
  view.flags = mapped_ ? HCOMM_VIEW_MAPPED | HCOMM_VIEW_SIGNAL_PAYLOAD |
                             (mapped_->peer_buffers() ? HCOMM_VIEW_PEER_BUFFERS : 0) |
                             (caches_apart_ ? HCOMM_VIEW_CACHES_APART : 0)
                       : 0;
  view.window_bytes = mapped_ ? mapped_->window_bytes() : 0;
  view.mapped = mapped_ ? mapped_model_ : link_;
}

}  // namespace hcomm::comm
