// The links of one communicator: a transport net per usable transport, an
// endpoint per peer on the transport that serves that pair best, messages to
// this rank itself in memory, and the mapped memory of ranks that map each
// other's. Built at communicator creation: addresses are all-gathered through
// the bootstrap, each pair scored (both sides reach the same answer; a
// transport that maps memory serves only ranks the topology puts on one
// host), endpoints connected with a deadline, windows mapped. It is what the
// executor moves data through (exec::PeerIO, exec::MappedIO).
#pragma once

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "core/bootstrap/bootstrap.hpp"
#include "core/exec/peer_io.hpp"
#include "core/links/mapped_links.hpp"
#include "core/links/self_link.hpp"
#include "core/topology/topo_file.hpp"
#include "core/transport/transport.hpp"
#include "hcomm/plugin/algorithm.h"

namespace hcomm::links {

class Links final : public exec::PeerIO {
 public:
  // `transports`: HCOMM_TRANSPORTS' value; `timeout_s`: the deadline of connecting.
  Links(bootstrap::Bootstrap& bootstrap, const std::array<uint8_t, 16>& comm_key, const topology::Topology& topology,
        const std::string& transports, double timeout_s);
  ~Links() override;
  Links(const Links&) = delete;
  Links& operator=(const Links&) = delete;

  void* isend(int peer, const void* buf, size_t len, uint64_t tag) override;
  void* irecv(int peer, void* buf, size_t len, uint64_t tag) override;
  bool test(int peer, void* request, size_t* bytes) override;
  // A receive that may stay posted for the communicator's life (the argument
  // check's): it does not count as a request in flight, which would have the
  // transports polled on every progress call.
  void* irecv_standing(int peer, void* buf, size_t len, uint64_t tag);
  bool test_standing(int peer, void* request, size_t* bytes);
  void progress() override;
  void wait(int64_t timeout_us) override;
  void check_peers() override;
  exec::MappedIO* mapped() override { return mapped_.get(); }

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
  struct Net {
    transport::Transport* transport;
    void* handle = nullptr;
    bool used = false;
  };
  struct Link {
    Net* net = nullptr;
    void* ep = nullptr;
    hcomm_link_score_t score{};  // the transport's score for the pair
  };

  struct Choice {
    int net = -1;  // index into nets_, -1 when none reaches
    hcomm_link_score_t score{};
  };

  void open_nets(const std::array<uint8_t, 16>& key, const std::string& transports);
  const uint8_t* address(int r, size_t t, uint32_t* len) const;
  Choice pair(int a, int b) const;  // from the addresses both published
  void choose();
  void connect_all();
  void map_windows();
  void progress_nets();  // every net, whatever is in flight
  const Link& link(int peer) const;
  void release();  // closes endpoints and nets

  bootstrap::Bootstrap& bootstrap_;
  const topology::Topology& topology_;
  double timeout_s_;
  int rank_, size_;
  bool ordered_ = false;  // HCOMM_TRANSPORTS gave a preference order
  SelfLink self_;
  std::vector<std::unique_ptr<Net>> nets_;
  std::vector<Link> links_;
  std::vector<uint8_t> addresses_;  // every rank's AddressSlot per net, in rank order
  std::unique_ptr<MappedLinks> mapped_;
  bool caches_apart_ = false;  // some two ranks of the host lie under different last-level caches
  // Transport requests handed out and not yet ended; progress calls while none are.
  uint64_t in_flight_ = 0;
  uint64_t idle_progress_calls_ = 0;
  static constexpr uint64_t kIdleProgressEvery = 64;
};

}  // namespace hcomm::links
