#include "core/links/links.hpp"

#include <algorithm>
#include <numeric>

#include "core/common/error.hpp"
#include "core/common/log.hpp"
#include "core/common/settings.hpp"

namespace hcomm::links {

Links::Links(bootstrap::Bootstrap& bootstrap, const std::array<uint8_t, 16>& comm_key,
             const topology::Topology& topology, const std::string& transports, double timeout_s)
    : bootstrap_(bootstrap),
      topology_(topology),
      rank_(bootstrap.rank()),
      size_(bootstrap.size()),
      connections_(std::make_shared<Connections>(bootstrap, comm_key, topology, transports, timeout_s)),
      at_(size_),
      context_(0),
      inherited_(false),
      self_(rank_) {
  std::iota(at_.begin(), at_.end(), 0);
  connections_->take_context(context_);
  map_windows();
}

Links::Links(const Links& parent, const std::vector<int>& members, int context, bootstrap::Bootstrap& bootstrap,
             const topology::Topology& topology)
    : bootstrap_(bootstrap),
      topology_(topology),
      rank_(bootstrap.rank()),
      size_(bootstrap.size()),
      connections_(parent.connections_),
      at_(size_),
      context_(context),
      inherited_(true),
      self_(rank_) {
  for (int r = 0; r < size_; ++r) at_[r] = parent.at_.at(members.at(r));
  connections_->take_context(context_);
  try {
    map_windows();
  } catch (...) {
    connections_->give_back_context(context_);
    throw;
  }
  HCOMM_INFO(INIT, "rank %d of %d shares the connections of the communicator it was split from (tag context %d)",
             rank_, size_, context_);
}

Links::~Links() {
  mapped_.reset();
  if (!left_) connections_->give_back_context(context_);
}

void Links::leave(std::shared_ptr<void> keep, const std::string& unfinished) {
  mapped_.reset();
  left_ = true;
  if (!unfinished.empty()) connections_->poison(unfinished);
  connections_->give_back_context(context_, std::move(keep));
}

// Every rank maps every other's window when one transport that maps memory
// serves all its peers; the ranks agree on it through the bootstrap.
void Links::map_windows() {
  if (size_ == 1) return;
  transport::Transport* shared = &connections_->transport(at(rank_ == 0 ? 1 : 0));
  std::vector<void*> endpoints(size_, nullptr);
  for (int p = 0; p < size_; ++p) {
    if (p == rank_) continue;
    if (shared && &connections_->transport(at(p)) != shared) shared = nullptr;
    endpoints[p] = connections_->endpoint(at(p));
  }
  if (shared && !shared->maps_memory()) shared = nullptr;
  mapped_ = MappedLinks::connect(shared, endpoints, bootstrap_, settings::get_size("HCOMM_WINDOW_BYTES"));
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
  HCOMM_INFO(INIT,
             "rank %d maps the windows of all %d ranks (%llu bytes each call)%s; its caches are apart from "
             "%d of them (it evicts what it reads from them in place and stores into them past its caches)",
             rank_, size_, static_cast<unsigned long long>(mapped_->window_bytes()),
             mapped_->peer_buffers() ? ", and copies from their buffers by address" : "", apart_from);
}

void* Links::isend(int peer, const void* buf, size_t len, uint64_t tag) {
  if (peer == rank_) return self_.isend(buf, len, tag);
  return connections_->isend(at(peer), buf, len, tag, true);
}

void* Links::irecv(int peer, void* buf, size_t len, uint64_t tag) {
  if (peer == rank_) return self_.irecv(buf, len, tag);
  return connections_->irecv(at(peer), buf, len, tag, true);
}

void* Links::irecv_standing(int peer, void* buf, size_t len, uint64_t tag) {
  return connections_->irecv(at(peer), buf, len, tag, false);
}

bool Links::test_standing(int peer, void* request, size_t* bytes) {
  return connections_->test(at(peer), request, bytes, false);
}

bool Links::test(int peer, void* request, size_t* bytes) {
  if (peer == rank_) return self_.test(request, bytes);
  return connections_->test(at(peer), request, bytes, true);
}

// A mapped call waiting for a peer: sleep on this rank's window doorbell,
// which peers ring when they raise a flag; else in the nets.
void Links::wait(int64_t timeout_us) {
  if (mapped_ && mapped_->calls().awaited) {
    mapped_->sleep(timeout_us);
    return;
  }
  connections_->wait(timeout_us);
}

void Links::check_peers() {
  int failed = bootstrap_.failed_peer();
  if (failed >= 0)
    HCOMM_THROW(HCOMM_ERR_REMOTE, "rank %d left the job (its process died or closed the communicator)", failed);
}

std::string Links::transport_name(int peer) const {
  if (peer == rank_) return "self";
  return connections_->transport(at(peer)).name();
}

hcomm_link_score_t Links::score(int peer) const {
  return topology_.described_link(rank_, peer).value_or(connections_->score(at(peer)));
}

// Each rank knows its own links; the ranks all-gather them.
std::vector<topology::LinkEntry> Links::all_links() {
  struct Cell {
    double bandwidth_gbps, latency_us;
    int32_t net;  // the connections' net index (the same on every rank), -1 for the rank itself
    int32_t unused;
  };
  std::vector<Cell> mine(size_, Cell{0, 0, -1, 0}), all(static_cast<size_t>(size_) * size_);
  for (int p = 0; p < size_; ++p) {
    if (p == rank_) continue;
    const hcomm_link_score_t s = score(p);
    mine[p] = {s.bandwidth_gbps, s.latency_us, connections_->net_index(at(p)), 0};
  }
  bootstrap_.allgather(mine.data(), sizeof(Cell) * size_, all.data());
  std::vector<topology::LinkEntry> out;
  for (int a = 0; a < size_; ++a)
    for (int b = a + 1; b < size_; ++b) {
      const Cell& c = all[static_cast<size_t>(a) * size_ + b];
      out.push_back({.a = a,
                     .b = b,
                     .transport = connections_->net_name(c.net),
                     .score = {.reachable = 1, .bandwidth_gbps = c.bandwidth_gbps, .latency_us = c.latency_us}});
    }
  return out;
}

void Links::describe_mapped(hcomm_comm_view_t& view) const {
  view.flags = mapped_ ? HCOMM_VIEW_MAPPED | HCOMM_VIEW_SIGNAL_PAYLOAD |
                             (mapped_->peer_buffers() ? HCOMM_VIEW_PEER_BUFFERS : 0) |
                             (caches_apart_ ? HCOMM_VIEW_CACHES_APART : 0)
                       : 0;
  view.window_bytes = mapped_ ? mapped_->window_bytes() : 0;
}

}  // namespace hcomm::links
