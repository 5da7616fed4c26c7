// One communicator's view of this transport: this rank's segment, its
// endpoints and its requests. Called from one thread at a time.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "address.hpp"
#include "cma.hpp"
#include "config.hpp"
#include "doorbell.hpp"
#include "endpoint.hpp"
#include "hcomm/plugin/transport.h"
#include "hcomm/plugin/util.hpp"
#include "request.hpp"
#include "segment.hpp"

namespace hcomm::shm {

class Net {
 public:
  Net(const Config& config, const plugin::Services& services, const hcomm_transport_open_args_t& args);
  ~Net();
  Net(const Net&) = delete;
  Net& operator=(const Net&) = delete;

  const Config& config() const { return config_; }
  const plugin::Services& services() const { return services_; }
  int rank() const { return rank_; }
  uint64_t key_check() const { return address_.key_check; }
  const Segment& segment() const { return segment_; }
  CrossMemory& cross_memory() { return cross_memory_; }

  void address(void* buf, size_t* len) const { address_.encode(buf, len); }
  Endpoint& connect(int peer_rank, const void* blob, size_t len);
  void close(Endpoint& ep);

  Request& new_request(const std::byte* source, std::byte* target, uint64_t length, uint64_t tag);
  void release(Request& r);

  // Moves data on every endpoint and checks the peers' lives while requests
  // are pending.
  void progress();
  // Sleeps on this rank's doorbell until there is work, up to timeout_us (and
  // not much longer than the liveness interval while a peer is watched).
  void wait(int64_t timeout_us);

  // Logs, once per net, that a peer cannot be read with CMA.
  void note_cma_denied(const std::string& why);

 private:
  bool has_work();
  // Requests are pending or a peer has not attached: its life is checked.
  bool watching_a_peer();

  const Config config_;
  const plugin::Services& services_;
  const int rank_;
  const int nranks_;
  // Holds key_check; peers read it with process_vm_readv to probe CMA.
  const uint64_t cma_probe_word_;
  Segment segment_;
  Doorbell doorbell_;
  CrossMemory cross_memory_;
  Address address_{};
  std::vector<std::unique_ptr<Endpoint>> endpoints_;
  std::vector<bool> connected_;  // by rank
  // Requests live here for the net's lifetime (stable addresses) and are
  // reused, so that a message costs no allocation.
  std::deque<Request> requests_;
  std::vector<Request*> free_requests_;
  bool cma_denied_noted_ = false;
};

}  // namespace hcomm::shm
