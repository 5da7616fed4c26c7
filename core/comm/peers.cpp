#include "core/comm/peers.hpp"

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstring>

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

// Loads and stores through mapped memory, as the direct algorithms' costs see
// them: a flag raised and seen across cores, a byte loaded from a peer (about
// 16 GB/s), a byte combined (about 20 GB/s, as the links' model has it). Fit
// to allreduces of 2 and 4 ranks on the 2-core development VM, on the scale
// of the shm link's model (which the other algorithms' costs use), so that
// the selector ranks them as they measure.
constexpr hcomm_link_model_t kMappedModel = {
    .alpha_us = 0.3, .beta_us_per_byte = 1.0 / 16e3, .gamma_us_per_byte = 1.0 / 20e3};

Clock::time_point deadline_from_now() {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(
                            std::chrono::duration<double>(settings::get_double("HCOMM_TIMEOUT")));
}

}  // namespace

Peers::Peers(bootstrap::Bootstrap& bootstrap, const std::array<uint8_t, 16>& comm_key)
    : bootstrap_(bootstrap), rank_(bootstrap.rank()), size_(bootstrap.size()), links_(bootstrap.size()) {
  try {
    open_nets(comm_key);
    const size_t nt = nets_.size(), record = nt * sizeof(AddressSlot);
    std::vector<uint8_t> mine(record, 0), all(record * size_);
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
    bootstrap_.allgather(mine.data(), record, all.data());
    for (int r = 0; r < size_; ++r)
      for (size_t t = 0; t < nt; ++t) {
        const auto* slot = reinterpret_cast<const AddressSlot*>(all.data() + r * record + t * sizeof(AddressSlot));
        if (nets_[t]->transport->name() != slot->transport || slot->len > sizeof slot->blob)
          HCOMM_THROW(HCOMM_ERR_CONFIG,
                      "rank %d offers transport '%.31s' where this rank offers '%s': HCOMM_TRANSPORTS and "
                      "HCOMM_PLUGIN_PATH must be the same on every rank",
                      r, slot->transport, nets_[t]->transport->name().c_str());
      }
    choose(all);
    connect_all(all);
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

void Peers::open_nets(const std::array<uint8_t, 16>& key) {
  transport::Allowed allowed = transport::allowed();
  ordered_ = allowed.ordered;
  hcomm_transport_open_args_t args{.size = sizeof(hcomm_transport_open_args_t), .rank = rank_, .nranks = size_, .comm_key = {}};
  std::memcpy(args.comm_key, key.data(), key.size());
  for (transport::Transport* t : allowed.transports) {
    auto net = std::make_unique<Net>(Net{t});
    t->check(t->iface().open(t->ctx(), &args, &net->handle), "open");
    nets_.push_back(std::move(net));
  }
}

// For every peer, the best reachable transport: the first in HCOMM_TRANSPORTS
// order when the user gave one, else the highest bandwidth, then the lowest
// latency, then the plugin's priority. Scores are symmetric, so both ranks of
// a pair choose alike.
void Peers::choose(const std::vector<uint8_t>& addresses) {
  const size_t nt = nets_.size(), record = nt * sizeof(AddressSlot);
  auto slot = [&](int r, size_t t) {
    return reinterpret_cast<const AddressSlot*>(addresses.data() + r * record + t * sizeof(AddressSlot));
  };
  std::vector<uint8_t> choice(size_, 0xFF);
  double worst_bw = 0, worst_lat = 0;
  for (int p = 0; p < size_; ++p) {
    if (p == rank_) continue;
    int best = -1;
    hcomm_link_score_t best_score{};
    for (size_t t = 0; t < nt; ++t) {
      const transport::Transport& tr = *nets_[t]->transport;
      hcomm_link_score_t s{};
      tr.check(tr.iface().score(nets_[t]->handle, slot(rank_, t)->blob, slot(rank_, t)->len, slot(p, t)->blob,
                                slot(p, t)->len, &s),
               "score");
      if (!s.reachable) continue;
      bool better = best < 0 ||
                    (!ordered_ && (s.bandwidth_gbps > best_score.bandwidth_gbps ||
                                   (s.bandwidth_gbps == best_score.bandwidth_gbps &&
                                    (s.latency_us < best_score.latency_us ||
                                     (s.latency_us == best_score.latency_us &&
                                      tr.props().priority > nets_[best]->transport->props().priority)))));
      if (better) best = static_cast<int>(t), best_score = s;
    }
    if (best < 0)
      HCOMM_THROW(HCOMM_ERR_UNSUPPORTED, "no allowed transport reaches rank %d from rank %d (HCOMM_TRANSPORTS='%s')",
                  p, rank_, settings::raw("HCOMM_TRANSPORTS").c_str());
    choice[p] = static_cast<uint8_t>(best);
    links_[p].net = nets_[best].get();
    nets_[best]->used = true;
    worst_bw = worst_bw == 0 ? best_score.bandwidth_gbps : std::min(worst_bw, best_score.bandwidth_gbps);
    worst_lat = std::max(worst_lat, best_score.latency_us);
    HCOMM_INFO(INIT, "rank %d -> rank %d: transport %s (%.1f GB/s, %.1f us)", rank_, p,
               nets_[best]->transport->name().c_str(), best_score.bandwidth_gbps, best_score.latency_us);
  }
  // Cross-check: a transport whose scores are not symmetric would split a pair.
  std::vector<uint8_t> all(static_cast<size_t>(size_) * size_);
  bootstrap_.allgather(choice.data(), size_, all.data());
  for (int p = 0; p < size_; ++p)
    if (p != rank_ && all[static_cast<size_t>(p) * size_ + rank_] != choice[p])
      HCOMM_THROW(HCOMM_ERR_INTERNAL, "ranks %d and %d chose different transports for their link (%s vs index %u)", rank_,
                  p, nets_[choice[p]]->transport->name().c_str(), all[static_cast<size_t>(p) * size_ + rank_]);
  link_.alpha_us = worst_lat;
  link_.beta_us_per_byte = worst_bw > 0 ? 1.0 / (worst_bw * 1e3) : 0;
  link_.gamma_us_per_byte = 1.0 / 20e3;  // about 20 GB/s of reduction traffic on one core
}

void Peers::connect_all(const std::vector<uint8_t>& addresses) {
  const size_t nt = nets_.size(), record = nt * sizeof(AddressSlot);
  for (int p = 0; p < size_; ++p) {
    if (p == rank_) continue;
    Net& net = *links_[p].net;
    size_t t = std::find_if(nets_.begin(), nets_.end(), [&](const auto& n) { return n.get() == &net; }) - nets_.begin();
    const auto* slot = reinterpret_cast<const AddressSlot*>(addresses.data() + p * record + t * sizeof(AddressSlot));
    net.transport->check(net.transport->iface().connect(net.handle, p, slot->blob, slot->len, &links_[p].ep),
                         "connect");
  }
  auto deadline = deadline_from_now();
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
      HCOMM_THROW(HCOMM_ERR_TIMEOUT, "rank %d could not connect to ranks %s within HCOMM_TIMEOUT=%s s", rank_,
                  waiting.c_str(), settings::raw("HCOMM_TIMEOUT").c_str());
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
  if (mapped_)
    HCOMM_INFO(INIT, "rank %d maps the windows of all %d ranks (%llu bytes each call)%s", rank_, size_,
               static_cast<unsigned long long>(mapped_->window_bytes()),
               mapped_->peer_buffers() ? ", and copies from their buffers by address" : "");
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
  const Link& l = link(peer);
  void* req = nullptr;
  l.net->transport->check(l.net->transport->iface().irecv(l.ep, buf, len, tag, &req), "receive");
  in_flight_ += req != nullptr;
  return req;
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
  view.flags = mapped_ ? HCOMM_VIEW_MAPPED | (mapped_->peer_buffers() ? HCOMM_VIEW_PEER_BUFFERS : 0) : 0;
  view.window_bytes = mapped_ ? mapped_->window_bytes() : 0;
  view.mapped = mapped_ ? kMappedModel : link_;
}

}  // namespace hcomm::comm
