// The links of one communicator: a transport net per usable transport and an
// endpoint per peer on the transport that serves that pair best. Built at
// communicator creation: addresses are all-gathered through the bootstrap,
// each pair scored (both sides reach the same answer), endpoints connected
// with a deadline.
#pragma once

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "core/bootstrap/bootstrap.hpp"
#include "core/exec/peer_io.hpp"
#include "core/transport/mapped_links.hpp"
#include "core/transport/transport.hpp"
#include "hcomm/plugin/algorithm.h"

namespace hcomm::comm {

class Peers final : public exec::PeerIO {
 public:
  Peers(bootstrap::Bootstrap& bootstrap, const std::array<uint8_t, 16>& comm_key);
  ~Peers() override;
  Peers(const Peers&) = delete;
  Peers& operator=(const Peers&) = delete;

  void* isend(int peer, const void* buf, size_t len, uint64_t tag) override;
  void* irecv(int peer, void* buf, size_t len, uint64_t tag) override;
  bool test(int peer, void* request, size_t* bytes) override;
  void progress() override;
  void wait(int64_t timeout_us) override;
  void check_peers() override;
  exec::MappedIO* mapped() override { return mapped_.get(); }

  // The transport serving a peer ("self" for this rank).
  std::string transport_name(int peer) const;
  // The slowest link's parameters, for the algorithms' cost functions.
  hcomm_link_model_t link_model() const { return link_; }
  // Fills view.flags, view.window_bytes and view.mapped: what the mapped
  // memory steps may use on this communicator (flags 0 unless every rank maps
  // every other's window).
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
  };

  void open_nets(const std::array<uint8_t, 16>& key);
  void choose(const std::vector<uint8_t>& addresses);
  void connect_all(const std::vector<uint8_t>& addresses);
  void map_windows();
  void progress_nets();  // every net, whatever is in flight
  const Link& link(int peer) const;
  void release();  // closes endpoints and nets

  bootstrap::Bootstrap& bootstrap_;
  int rank_, size_;
  bool ordered_ = false;  // HCOMM_TRANSPORTS gave a preference order
  std::vector<std::unique_ptr<Net>> nets_;
  std::vector<Link> links_;
  hcomm_link_model_t link_{};
  std::unique_ptr<transport::MappedLinks> mapped_;
  // Transport requests handed out and not yet ended; progress calls while none are.
  uint64_t in_flight_ = 0;
  uint64_t idle_progress_calls_ = 0;
  static constexpr uint64_t kIdleProgressEvery = 64;
};

}  // namespace hcomm::comm
