// The links of one communicator: its ranks' transport connections
// (links::Connections, its own or shared with the communicator it was split
// from), messages to this rank itself in memory, and the mapped memory of
// ranks that map each other's. It is what the executor moves data through
// (exec::PeerIO, exec::MappedIO).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/bootstrap/bootstrap.hpp"
#include "core/exec/peer_io.hpp"
#include "core/links/connections.hpp"
#include "core/links/mapped_links.hpp"
#include "core/links/self_link.hpp"
#include "core/topology/topo_file.hpp"
#include "hcomm/plugin/algorithm.h"

namespace hcomm::links {

class Links final : public exec::PeerIO {
 public:
  // Connections of its own. `transports`: HCOMM_TRANSPORTS' value;
  // `timeout_s`: the deadline of connecting. Collective over `bootstrap`.
  Links(bootstrap::Bootstrap& bootstrap, const std::array<uint8_t, 16>& comm_key, const topology::Topology& topology,
        const std::string& transports, double timeout_s);
  // The connections of `parent`, whose ranks `members` are this
  // communicator's ranks in order, under tag context `context` (free on
  // every member: Connections::free_contexts). Collective over `bootstrap`,
  // this communicator's.
  Links(const Links& parent, const std::vector<int>& members, int context, bootstrap::Bootstrap& bootstrap,
        const topology::Topology& topology);
  ~Links() override;
  Links(const Links&) = delete;
  Links& operator=(const Links&) = delete;

  // This communicator's tag context (exec::kContexts).
  int context() const { return context_; }
  // Whether the connections are a parent communicator's.
  bool inherited() const { return inherited_; }
  const Connections& connections() const { return *connections_; }

  void* isend(int peer, const void* buf, size_t len, uint64_t tag) override;
  void* irecv(int peer, void* buf, size_t len, uint64_t tag) override;
  bool test(int peer, void* request, size_t* bytes) override;
  // A receive that may stay posted for the communicator's life (the argument
  // check's): it does not count as a request in flight, which would have the
  // transports polled on every progress call.
  void* irecv_standing(int peer, void* buf, size_t len, uint64_t tag);
  bool test_standing(int peer, void* request, size_t* bytes);
  void progress() override { connections_->progress(); }
  // Moves data for the standing receives too, which progress() looks at only
  // now and then while no request is in flight: for a caller waiting on them.
  void progress_standing() { connections_->progress(true); }
  void wait(int64_t timeout_us) override;
  void check_peers() override;
  exec::MappedIO* mapped() override { return mapped_.get(); }

  // How many communicators of this process use these links' connections.
  long sharers() const { return connections_.use_count(); }
  // Operations abandoned with receives posted: no call may move data on the
  // shared connections any more (Connections::poison).
  void poison(const std::string& why) { connections_->poison(why); }
  // Ends this communicator's use of shared connections: `keep` holds the
  // memory its posted receives write into (nullptr: none posted), `unfinished`
  // says why operations it started may never complete (empty: none).
  void leave(std::shared_ptr<void> keep, const std::string& unfinished);

  // The transport serving a peer ("self" for this rank).
  std::string transport_name(int peer) const;
  // The bandwidth and latency of the link to `peer`: what a topology file
  // gave for the pair, else the transport's score.
  hcomm_link_score_t score(int peer) const;
  // The link of every pair a < b of ranks: the transport its ranks chose,
  // with its score(). Collective: every rank calls it.
  std::vector<topology::LinkEntry> all_links();
  // Fills view.flags, view.window_bytes: what the mapped memory steps may use
  // on this communicator (flags 0 unless every rank maps every other's window).
  void describe_mapped(hcomm_comm_view_t& view) const;
  // The transport whose memory this communicator's ranks map (for
  // hcomm_mem_register), or nullptr.
  const transport::Transport* memory_transport() const { return mapped_ ? &mapped_->transport() : nullptr; }

 private:
  int at(int peer) const { return at_[peer]; }  // `peer`'s rank in the connections
  void map_windows();

  bootstrap::Bootstrap& bootstrap_;
  const topology::Topology& topology_;
  int rank_, size_;
  std::shared_ptr<Connections> connections_;
  std::vector<int> at_;  // by rank here: the rank in connections_
  int context_;
  bool inherited_;
  bool left_ = false;
  SelfLink self_;
  std::unique_ptr<MappedLinks> mapped_;
  bool caches_apart_ = false;  // some two ranks of the host lie under different last-level caches
};

}  // namespace hcomm::links
