#include "net.hpp"

#include <algorithm>
#include <cstring>

#include "endpoint.hpp"

namespace hcomm::tcp {

using plugin::format;

namespace {

constexpr size_t kEventsPerPoll = 64;

}  // namespace

Net::Net(const plugin::Services& services, const Config& config, const hcomm_transport_open_args_t& args)
    : services_(services),
      config_(config),
      rank_(args.rank),
      nranks_(args.nranks),
      sockbuf_(usable_sockbuf(config.sockbuf)),
      acceptor_(*this, resolve_listen_address(config.if_addr)),
      local_{.inet = acceptor_.address(),
             .host_id = local_host_id(),
             .nsocks = config.nsocks,
             .split_bytes = config.split_bytes} {
  std::memcpy(key_.data(), args.comm_key, key_.size());
  if (sockbuf_ != config.sockbuf)
    log(HCOMM_LOG_INFO, format("tcp: HCOMM_TCP_SOCKBUF=%llu exceeds the kernel's net.core.rmem_max/wmem_max; "
                               "keeping the kernel's autotuned buffers",
                               static_cast<unsigned long long>(config.sockbuf)));
  log(HCOMM_LOG_INFO, format("tcp: rank %d listens on %s", rank_, local_.inet.str().c_str()));
}

Net::~Net() {
  for (auto& [rank, endpoint] : endpoints_) endpoint->close();
}

Endpoint& Net::connect(int peer_rank, const PeerAddress& peer) {
  if (peer_rank < 0 || peer_rank >= nranks_)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT, "tcp: connect: peer_rank %d is outside the communicator of %d ranks",
                       peer_rank, nranks_);
  if (peer_rank == rank_)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT,
                       "tcp: connect: peer_rank %d is this rank; the tcp transport connects distinct ranks only",
                       peer_rank);
  if (endpoints_.contains(peer_rank))
    HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT,
                       "tcp: connect: rank %d already has an endpoint on this net; close it before connecting again",
                       peer_rank);
  Endpoint& endpoint = *endpoints_.emplace(peer_rank, std::make_unique<Endpoint>(*this, peer_rank, peer)).first->second;
  if (endpoint.initiator()) {
    endpoint.start();
  } else {
    for (Acceptor::Arrival& arrival : acceptor_.take_early(peer_rank))
      endpoint.adopt(arrival.index, std::move(arrival.socket), arrival.from);
  }
  return endpoint;
}

void Net::close_endpoint(Endpoint& endpoint) {
  endpoint.close();
  retrying_.erase(&endpoint);
  endpoints_.erase(endpoint.peer_rank());
}

Endpoint* Net::endpoint_for(int rank) const {
  auto it = endpoints_.find(rank);
  return it == endpoints_.end() ? nullptr : it->second.get();
}

void Net::progress() {
  poll();
  if (lost_.empty()) return;
  std::string text = lost_.front();
  if (lost_.size() > 1) text += format(" (and %zu more lost connections)", lost_.size() - 1);
  lost_.clear();
  throw plugin::Error(HCOMM_ERR_REMOTE, text);
}

void Net::poll() {
  std::array<epoll_event, kEventsPerPoll> events;
  for (const epoll_event& event : poller_.wait(events, 0))
    static_cast<EventHandler*>(event.data.ptr)->on_events(event.events);
  Clock::time_point now = Clock::now();
  acceptor_.expire(now);
  if (retrying_.empty()) return;
  std::vector<Endpoint*> due(retrying_.begin(), retrying_.end());
  for (Endpoint* endpoint : due)
    if (!endpoint->tick(now)) retrying_.erase(endpoint);
}

void Net::wait(int64_t timeout_us) {
  if (auto next = next_timer()) {
    auto until = std::chrono::duration_cast<std::chrono::microseconds>(*next - Clock::now()).count() + 1;
    timeout_us = std::clamp<int64_t>(until, 0, timeout_us);
  }
  std::array<epoll_event, 1> event;
  poller_.wait(event, timeout_us);  // level-triggered: progress sees the same events again
}

std::optional<Clock::time_point> Net::next_timer() const {
  std::optional<Clock::time_point> next = acceptor_.next_deadline();
  for (const Endpoint* endpoint : retrying_)
    if (auto at = endpoint->next_retry(); at && (!next || *at < *next)) next = at;
  return next;
}

}  // namespace hcomm::tcp
