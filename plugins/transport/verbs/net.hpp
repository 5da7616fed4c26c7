// A net: one per communicator. It owns the completion queue (with its
// completion channel for wait), the side-channel listener, the endpoints and
// the requests, and drives them all from progress. Without a usable RDMA
// port it still opens and publishes an address that says so: every link then
// scores unreachable and connect refuses with the reason.
#pragma once

#include <infiniband/verbs.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "acceptor.hpp"
#include "config.hpp"
#include "hcomm/plugin/transport.h"
#include "hcomm/plugin/util.hpp"
#include "request.hpp"
#include "side_channel.hpp"
#include "wire.hpp"

namespace hcomm::verbs {

class Device;
class Endpoint;

using Clock = std::chrono::steady_clock;

class Net {
 public:
  // device is null when this process found no usable port (no_device says why).
  Net(const plugin::Services& services, const Config& config, Device* device, const std::string& no_device,
      const hcomm_transport_open_args_t& args);
  ~Net();
  Net(const Net&) = delete;
  Net& operator=(const Net&) = delete;

  const Address& local() const { return local_; }
  Endpoint& connect(int peer_rank, const Address& peer);
  void close_endpoint(Endpoint& endpoint);

  // Polls the completion queue and the side channels; then throws the first
  // lost peer not yet reported (each is reported once here; its endpoint
  // and requests keep reporting it).
  void progress();
  // progress without the report.
  void poll();
  // Sleeps until a completion or a side-channel event, at most timeout_us.
  void wait(int64_t timeout_us);

  // --- for the endpoints ---
  Device& device() const { return *device_; }
  ibv_cq* cq() const { return cq_; }
  const Config& config() const { return config_; }
  int rank() const { return rank_; }
  const Key& key() const { return key_; }
  RequestSet& requests() { return requests_; }
  // Handles every completion in the queue; returns how many.
  size_t drain_completions();
  void report_lost(const std::string& text) { lost_.push_back(text); }
  void log(hcomm_log_level_t level, const std::string& text) const { services_.log(level, "NET", text); }

 private:
  // A side channel admitted before its endpoint was created.
  using Early = Acceptor::Admitted;

  void poll_channels(bool force);
  std::vector<int> watched_fds() const;

  const plugin::Services& services_;
  const Config config_;
  Device* const device_;
  const int rank_;
  const int nranks_;
  Key key_{};
  Address local_;
  std::string no_device_;
  std::optional<Acceptor> acceptor_;  // with a device only
  ibv_comp_channel* events_ = nullptr;
  ibv_cq* cq_ = nullptr;
  RequestSet requests_;  // outlives the endpoints, which fail their requests on the way out
  std::unordered_map<int, std::unique_ptr<Endpoint>> endpoints_;  // by peer rank
  std::unordered_map<uint32_t, Endpoint*> by_qpn_;
  std::unordered_map<int, Early> early_;  // by rank
  std::vector<std::string> lost_;
  Clock::time_point next_channel_poll_{};
};

}  // namespace hcomm::verbs
