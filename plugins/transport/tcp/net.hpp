// A net: one per communicator. It owns the poller, the listening side, the
// endpoints and the requests, and drives them all from progress.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "acceptor.hpp"
#include "address.hpp"
#include "buffer_pool.hpp"
#include "config.hpp"
#include "hcomm/plugin/transport.h"
#include "hcomm/plugin/util.hpp"
#include "poller.hpp"
#include "request.hpp"

namespace hcomm::tcp {

class Endpoint;

class Net {
 public:
  Net(const plugin::Services& services, const Config& config, const hcomm_transport_open_args_t& args);
  ~Net();
  Net(const Net&) = delete;
  Net& operator=(const Net&) = delete;

  const PeerAddress& local() const { return local_; }
  Endpoint& connect(int peer_rank, const PeerAddress& peer);
  void close_endpoint(Endpoint& endpoint);

  // Handles every ready socket and due timer; then throws the first lost
  // connection not yet reported (each is reported once here; its endpoint
  // and requests keep reporting it).
  void progress();
  // progress without the report.
  void poll();
  // Sleeps until a socket is ready or a timer is due, at most timeout_us.
  void wait(int64_t timeout_us);

  // --- for the endpoints, connections and the acceptor ---
  const plugin::Services& services() const { return services_; }
  const Config& config() const { return config_; }
  int rank() const { return rank_; }
  int nranks() const { return nranks_; }
  const std::array<uint8_t, 16>& key() const { return key_; }
  uint64_t sockbuf() const { return sockbuf_; }
  Poller& poller() { return poller_; }
  RequestSet& requests() { return requests_; }
  BufferPool& buffers() { return buffers_; }
  Endpoint* endpoint_for(int rank) const;
  void report_lost(const std::string& text) { lost_.push_back(text); }
  void retry_later(Endpoint& endpoint) { retrying_.insert(&endpoint); }
  void log(hcomm_log_level_t level, const std::string& text) const { services_.log(level, "NET", text); }

 private:
  std::optional<Clock::time_point> next_timer() const;

  const plugin::Services& services_;
  const Config config_;
  const int rank_;
  const int nranks_;
  std::array<uint8_t, 16> key_{};
  const uint64_t sockbuf_;
  Poller poller_;
  RequestSet requests_;
  BufferPool buffers_;
  Acceptor acceptor_;
  PeerAddress local_;
  std::unordered_map<int, std::unique_ptr<Endpoint>> endpoints_;  // by peer rank
  std::unordered_set<Endpoint*> retrying_;                        // with sockets waiting to connect again
  std::vector<std::string> lost_;                                 // not yet reported by progress
};

}  // namespace hcomm::tcp
