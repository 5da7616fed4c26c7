// A net: one per communicator. It owns the ucp worker (one per net, so
// communicators never see each other's messages), the endpoints, the
// requests, and the goodbyes of peers that closed; progress drives them all.
#pragma once

#include <ucp/api/ucp.h>

#include <chrono>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "address.hpp"
#include "context.hpp"
#include "request.hpp"
#include "tag.hpp"

namespace hcomm::ucx {

class Endpoint;

class Net {
 public:
  Net(Context& context, const hcomm_transport_open_args_t& args);
  const Config& config() const { return context_.config(); }
  ~Net();
  Net(const Net&) = delete;
  Net& operator=(const Net&) = delete;

  const PeerAddress& local() const { return local_; }
  Endpoint& connect(int peer_rank, const PeerAddress& peer);
  void close_endpoint(Endpoint& endpoint);

  // Moves every request on; then throws the first lost peer not yet
  // reported (each is reported once here; its endpoint and requests keep
  // reporting it).
  void progress();
  // progress without the report.
  void poll();
  // Sleeps until UCX has an event or a peer process of this host exits, at
  // most timeout_us.
  void wait(int64_t timeout_us);

  // --- for the endpoints ---
  ucp_worker_h worker() const { return worker_; }
  int rank() const { return rank_; }
  const TagCodec& codec() const { return codec_; }
  RequestSet& requests() { return requests_; }
  void adopt_ep(ucp_ep_h ep, Endpoint* endpoint);
  void say_goodbye(ucp_ep_h ep);
  // Closes a ucp endpoint in the background (force: without flushing).
  void close_ep(ucp_ep_h ep, bool force);
  void report_lost(const std::string& text) { lost_.push_back(text); }
  void log(hcomm_log_level_t level, const std::string& text) const { context_.log(level, text); }
  static void on_ucx_error(void* net, ucp_ep_h ep, ucs_status_t status);

 private:
  std::vector<uint8_t> worker_address(size_t room);
  void post_goodbye_receive();
  void take_goodbyes();
  void take_errors();
  void watch_processes();
  void finish_closing();
  void drop_unexpected(std::chrono::steady_clock::time_point deadline);

  Context& context_;
  const int rank_;
  const int nranks_;
  const TagCodec codec_;
  ucp_worker_h worker_ = nullptr;
  int event_fd_ = -1;  // the worker's, owned by UCX
  int epoll_fd_ = -1;  // the worker's event fd and the pidfds of peers of this host
  PeerAddress local_;
  RequestSet requests_;
  std::unordered_map<int, std::unique_ptr<Endpoint>> endpoints_;  // by peer rank
  std::unordered_map<ucp_ep_h, Endpoint*> by_ep_;                 // for UCX's error handler
  std::vector<std::pair<ucp_ep_h, ucs_status_t>> errors_;         // from the handler, taken after progress
  std::unordered_set<int> closed_early_;                          // goodbyes of ranks not connected yet
  std::unordered_set<int> connected_;                             // ranks this net ever connected to
  std::vector<void*> closing_;                                    // goodbye sends and endpoint closes still running
  void* goodbye_ = nullptr;                                       // the receive of any peer's goodbye
  uint64_t goodbye_buffer_ = 0;
  std::chrono::steady_clock::time_point next_watch_{};
  std::vector<std::string> lost_;  // not yet reported by progress
};

}  // namespace hcomm::ucx
