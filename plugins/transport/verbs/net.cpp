#include "net.hpp"

#include <fcntl.h>
#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "device.hpp"
#include "endpoint.hpp"

namespace hcomm::verbs {

namespace {

// Side channels are looked at this often while ready: a death shows well
// within the second the transport contract allows.
constexpr auto kChannelPollPeriod = std::chrono::milliseconds(2);
constexpr int kPollBatch = 32;

}  // namespace

Net::Net(const plugin::Services& services, const Config& config, Device* device, const std::string& no_device,
         const hcomm_transport_open_args_t& args)
    : services_(services),
      config_(config),
      device_(device),
      rank_(args.rank),
      nranks_(args.nranks),
      no_device_(no_device) {
  std::copy(std::begin(args.comm_key), std::end(args.comm_key), key_.begin());
  local_.host_id = local_host_id();
  if (!device_) return;
  const PortInfo& port = device_->port();
  uint32_t ip = choose_listen_ip(config_.if_addr);
  acceptor_.emplace(key_, rank_, nranks_, ip);
  local_.listen_port = acceptor_->port();
  local_.listen_ip = ip;
  local_.has_device = true;
  local_.link_layer = port.link_layer;
  local_.port = port.port;
  local_.mtu = port.mtu;
  local_.lid = port.lid;
  local_.rate_mbps = port.rate_mbps;
  local_.gid = port.gid;

  events_ = ibv_create_comp_channel(device_->context());
  if (!events_)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_SYSTEM, "verbs: ibv_create_comp_channel on %s: %s", port.device.c_str(),
                       std::strerror(errno));
  ::fcntl(events_->fd, F_SETFL, ::fcntl(events_->fd, F_GETFL) | O_NONBLOCK);
  int per_peer = 3 * config_.credits + 16;  // receives, sends and writes of one QP
  int cqe = std::min<long long>(static_cast<long long>(per_peer) * std::max(1, nranks_ - 1), device_->attr().max_cqe);
  cq_ = ibv_create_cq(device_->context(), cqe, nullptr, events_, 0);
  if (!cq_) {
    int error = errno;
    ibv_destroy_comp_channel(events_);
    HCOMM_PLUGIN_THROW(HCOMM_ERR_SYSTEM, "verbs: ibv_create_cq of %d entries on %s: %s", cqe, port.device.c_str(),
                       std::strerror(error));
  }
}

Net::~Net() {
  endpoints_.clear();  // queue pairs go before their completion queue
  if (cq_) ibv_destroy_cq(cq_);
  if (events_) ibv_destroy_comp_channel(events_);
}

Endpoint& Net::connect(int peer_rank, const Address& peer) {
  if (peer_rank < 0 || peer_rank >= nranks_ || peer_rank == rank_)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT, "verbs: connect: peer rank %d; give another rank from 0 to %d",
                       peer_rank, nranks_ - 1);
  if (!device_)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_UNSUPPORTED, "verbs: connect to rank %d: %s", peer_rank, no_device_.c_str());
  if (!peer.has_device)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_UNSUPPORTED, "verbs: connect: rank %d has no usable RDMA port", peer_rank);
  if (peer.link_layer != local_.link_layer)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_UNSUPPORTED, "verbs: connect: rank %d is on %s, this rank on %s", peer_rank,
                       peer.link_layer == LinkLayer::kInfiniBand ? "InfiniBand" : "Ethernet",
                       local_.link_layer == LinkLayer::kInfiniBand ? "InfiniBand" : "Ethernet");
  if (endpoints_.count(peer_rank))
    HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT, "verbs: connect: rank %d is connected already; ep_close it first",
                       peer_rank);
  auto owned = std::make_unique<Endpoint>(*this, peer_rank, peer);
  Endpoint& ep = *owned;
  endpoints_.emplace(peer_rank, std::move(owned));
  by_qpn_.emplace(ep.qpn(), &ep);
  ep.guard([&] {
    if (ep.initiator()) {
      ep.start();
    } else if (auto it = early_.find(peer_rank); it != early_.end()) {
      Early early = std::move(it->second);
      early_.erase(it);
      ep.adopt(std::move(early.channel), early.hello);
    }
  });
  return ep;
}

void Net::close_endpoint(Endpoint& endpoint) {
  endpoint.close();
  by_qpn_.erase(endpoint.qpn());
  endpoints_.erase(endpoint.peer_rank());
}

void Net::progress() {
  poll();
  if (!lost_.empty()) {
    std::string text = lost_.front();
    lost_.erase(lost_.begin());
    HCOMM_PLUGIN_THROW(HCOMM_ERR_REMOTE, "%s", text.c_str());
  }
}

void Net::poll() {
  if (!device_) return;
  drain_completions();
  poll_channels(false);
}

size_t Net::drain_completions() {
  ibv_wc wc[kPollBatch];
  size_t total = 0;
  for (;;) {
    int n = ibv_poll_cq(cq_, kPollBatch, wc);
    if (n < 0) HCOMM_PLUGIN_THROW(HCOMM_ERR_SYSTEM, "verbs: ibv_poll_cq failed (%d)", n);
    for (int i = 0; i < n; ++i) {
      auto it = by_qpn_.find(wc[i].qp_num);
      if (it == by_qpn_.end()) continue;  // of an endpoint closed since
      Endpoint& ep = *it->second;
      ep.guard([&] { ep.on_completion(wc[i]); });
    }
    total += static_cast<size_t>(n);
    if (n < kPollBatch) return total;
  }
}

// Accepts, reads hellos and moves handshakes on at every call while any is
// under way; ready side channels are only watched for the peer's close.
void Net::poll_channels(bool force) {
  Clock::time_point now = Clock::now();
  bool connecting = acceptor_->busy();
  for (auto& [rank, ep] : endpoints_) connecting = connecting || ep->connecting();
  if (!force && !connecting && now < next_channel_poll_) return;
  next_channel_poll_ = now + kChannelPollPeriod;
  // A side channel whose peer proved the key goes to its rank's endpoint, or
  // waits for it. Anyone can connect: the warnings are rate-limited.
  Acceptor::Progress accepted = acceptor_->poll();
  for (const std::string& warning : accepted.warnings)
    HCOMM_PLUGIN_LOG_LIMITED(services_, HCOMM_LOG_WARN, "NET", "verbs: %s", warning.c_str());
  for (Acceptor::Admitted& admitted : accepted.admitted) {
    const int rank = admitted.hello.rank;
    if (auto it = endpoints_.find(rank); it != endpoints_.end()) {
      Endpoint& ep = *it->second;
      ep.guard([&] { ep.adopt(std::move(admitted.channel), admitted.hello); });
    } else {
      early_.insert_or_assign(rank, std::move(admitted));
    }
  }
  for (auto& [rank, ep] : endpoints_) {
    Endpoint& e = *ep;
    e.guard([&] { e.poll_channel(); });
  }
}

std::vector<int> Net::watched_fds() const {
  std::vector<int> fds{events_->fd};
  acceptor_->watched_fds(&fds);
  for (auto& [rank, ep] : endpoints_)
    if (ep->channel_fd() >= 0) fds.push_back(ep->channel_fd());
  return fds;
}

void Net::wait(int64_t timeout_us) {
  if (!device_) {
    ::poll(nullptr, 0, static_cast<int>(timeout_us / 1000));
    return;
  }
  if (ibv_req_notify_cq(cq_, 0) != 0) return;  // then progress just polls
  if (drain_completions() > 0) return;         // came before the notification was armed
  std::vector<pollfd> fds;
  for (int fd : watched_fds()) fds.push_back(pollfd{.fd = fd, .events = POLLIN, .revents = 0});
  timespec ts{.tv_sec = timeout_us / 1000000, .tv_nsec = (timeout_us % 1000000) * 1000};
  int n = ::ppoll(fds.data(), fds.size(), &ts, nullptr);
  if (n > 0 && (fds[0].revents & POLLIN)) {
    ibv_cq* cq = nullptr;
    void* context = nullptr;
    if (ibv_get_cq_event(events_, &cq, &context) == 0) ibv_ack_cq_events(cq, 1);
  }
  if (n > 0) next_channel_poll_ = {};  // a side channel may have news
}

}  // namespace hcomm::verbs
