#include "net.hpp"

#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

#include "endpoint.hpp"

namespace hcomm::ucx {

using plugin::format;

namespace {

constexpr uint64_t kGoodbye = 1;                 // the control message of an orderly close
constexpr uint64_t kWorkerEvent = ~uint64_t{0};  // epoll data of the worker's event fd
constexpr int kMaxSleepMs = 100;                 // wait wakes up at least this often, for UCX's keepalive
constexpr int kProgressRounds = 64;              // ucp_worker_progress calls per poll, at most
constexpr auto kWatchPeriod = std::chrono::milliseconds(5);
constexpr auto kCloseTimeout = std::chrono::seconds(2);
constexpr size_t kDropBytes = 64 << 10;  // larger unreceived messages end truncated

void epoll_add(int epoll_fd, int fd, uint64_t data) {
  epoll_event event{.events = EPOLLIN, .data = {.u64 = data}};
  if (::epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &event) != 0)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_SYSTEM, "ucx: epoll_ctl(ADD) failed: %s", std::strerror(errno));
}

}  // namespace

Net::Net(Context& context, const hcomm_transport_open_args_t& args)
    : context_(context), rank_(args.rank), nranks_(args.nranks), codec_(args.comm_key, args.nranks) {
  ucp_worker_params_t params{.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE, .thread_mode = UCS_THREAD_MODE_SINGLE};
  check(ucp_worker_create(context.ucp(), &params, &worker_), "creating a ucp worker");
  try {
    check(ucp_worker_get_efd(worker_, &event_fd_), "getting the worker's event fd");
    epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
    if (epoll_fd_ < 0) HCOMM_PLUGIN_THROW(HCOMM_ERR_SYSTEM, "ucx: epoll_create1 failed: %s", std::strerror(errno));
    epoll_add(epoll_fd_, event_fd_, kWorkerEvent);
    local_ = PeerAddress::local(context.reach(), {});
    local_.worker = worker_address(HCOMM_TRANSPORT_MAX_ADDRESS - PeerAddress::kHeaderBytes);
    post_goodbye_receive();
  } catch (...) {
    if (epoll_fd_ >= 0) ::close(epoll_fd_);
    ucp_worker_destroy(worker_);
    throw;
  }
  log(HCOMM_LOG_INFO, format("ucx: rank %d of %d opened a worker; address %zu bytes, tags carry the rank in %d bits",
                             rank_, nranks_, local_.worker.size(), 63 - codec_.payload_bits()));
}

// UCX's full worker address lists every transport; with many devices it can
// outgrow the address blob. Then the network-only address (no shared memory)
// is published, and peers of this host reach this rank over the network.
std::vector<uint8_t> Net::worker_address(size_t room) {
  for (bool net_only : {false, true}) {
    ucp_worker_attr_t attr{.field_mask = UCP_WORKER_ATTR_FIELD_ADDRESS | UCP_WORKER_ATTR_FIELD_ADDRESS_FLAGS,
                           .address_flags = net_only ? uint32_t{UCP_WORKER_ADDRESS_FLAG_NET_ONLY} : 0u};
    check(ucp_worker_query(worker_, &attr), "querying the worker's address");
    const uint8_t* bytes = reinterpret_cast<const uint8_t*>(attr.address);
    std::vector<uint8_t> address(bytes, bytes + attr.address_length);
    ucp_worker_release_address(worker_, attr.address);
    if (address.size() <= room) {
      if (net_only) {
        local_.reach &= ~kReachSharedMemory;
        log(HCOMM_LOG_WARN,
            "ucx: the worker address with shared memory does not fit the address blob; peers of "
            "this host connect over the network (set HCOMM_UCX_TLS or HCOMM_UCX_NET_DEVICES to "
            "fewer transports or devices to keep shared memory)");
      }
      return address;
    }
    log(HCOMM_LOG_INFO, format("ucx: the %sworker address is %zu bytes, over the %zu the address blob holds",
                               net_only ? "network-only " : "", address.size(), room));
  }
  HCOMM_PLUGIN_THROW(HCOMM_ERR_CONFIG,
                     "ucx: the worker address does not fit the %zu bytes of the address blob, even without shared "
                     "memory; set HCOMM_UCX_TLS or HCOMM_UCX_NET_DEVICES to fewer transports or devices",
                     room);
}

Net::~Net() {
  for (auto& [rank, endpoint] : endpoints_) endpoint->close();
  endpoints_.clear();
  requests_.cancel_receives(worker_);
  if (goodbye_) ucp_request_cancel(worker_, goodbye_);
  for (auto deadline = std::chrono::steady_clock::now() + kCloseTimeout;
       !closing_.empty() && std::chrono::steady_clock::now() < deadline;) {
    ucp_worker_progress(worker_);
    finish_closing();
  }
  if (!closing_.empty())
    log(HCOMM_LOG_INFO, format("ucx: %zu endpoint closes did not finish within %lld s; the worker ends them",
                               closing_.size(), static_cast<long long>(kCloseTimeout.count())));
  for (void* request : closing_) ucp_request_free(request);
  drop_unexpected(std::chrono::steady_clock::now() + kCloseTimeout);
  if (goodbye_) ucp_request_free(goodbye_);
  requests_.clear();
  ::close(epoll_fd_);
  ucp_worker_destroy(worker_);
}

// Messages nobody received (from a closed peer, or from another
// communicator that knew this worker's address) are taken and dropped, so
// that the worker ends clean.
void Net::drop_unexpected(std::chrono::steady_clock::time_point deadline) {
  std::vector<uint8_t> scratch(kDropBytes);
  ucp_tag_recv_info_t info{};
  while (ucp_tag_message_h message = ucp_tag_probe_nb(worker_, 0, 0, 1, &info)) {
    ucp_request_param_t params{.op_attr_mask = 0};
    ucs_status_ptr_t taken = ucp_tag_msg_recv_nbx(worker_, scratch.data(), scratch.size(), message, &params);
    if (!taken || UCS_PTR_IS_ERR(taken)) continue;
    while (ucp_request_check_status(taken) == UCS_INPROGRESS && std::chrono::steady_clock::now() < deadline)
      ucp_worker_progress(worker_);
    ucp_request_free(taken);
  }
}

Endpoint& Net::connect(int peer_rank, const PeerAddress& peer) {
  if (peer_rank < 0 || peer_rank >= nranks_)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT, "ucx: connect: peer_rank %d is outside the communicator of %d ranks",
                       peer_rank, nranks_);
  if (peer_rank == rank_)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT,
                       "ucx: connect: peer_rank %d is this rank; the ucx transport connects distinct ranks only",
                       peer_rank);
  if (endpoints_.contains(peer_rank))
    HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT,
                       "ucx: connect: rank %d already has an endpoint on this net; close it before connecting again",
                       peer_rank);
  auto created = std::make_unique<Endpoint>(*this, peer_rank, peer);
  Endpoint& endpoint = *created;
  if (endpoint.process_fd() >= 0) epoll_add(epoll_fd_, endpoint.process_fd(), static_cast<uint64_t>(peer_rank));
  endpoints_.emplace(peer_rank, std::move(created));
  connected_.insert(peer_rank);
  if (closed_early_.erase(peer_rank)) endpoint.peer_closed();
  return endpoint;
}

void Net::adopt_ep(ucp_ep_h ep, Endpoint* endpoint) { by_ep_[ep] = endpoint; }

void Net::close_endpoint(Endpoint& endpoint) {
  endpoint.close();
  if (endpoint.process_fd() >= 0) ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, endpoint.process_fd(), nullptr);
  endpoints_.erase(endpoint.peer_rank());
}

void Net::progress() {
  poll();
  if (lost_.empty()) return;
  std::string text = lost_.front();
  if (lost_.size() > 1) text += format(" (and %zu more lost peers)", lost_.size() - 1);
  lost_.clear();
  throw plugin::Error(HCOMM_ERR_REMOTE, text);
}

void Net::poll() {
  for (int i = 0; i < kProgressRounds && ucp_worker_progress(worker_) != 0; ++i) {
  }
  take_goodbyes();
  take_errors();
  watch_processes();
  finish_closing();
}

// The worker's event fd can report readiness that only progress clears
// (UCX's tcp sockets), so a wake-up that progress finds nothing behind goes
// back to sleep until the deadline.
void Net::wait(int64_t timeout_us) {
  using namespace std::chrono;
  const auto deadline = steady_clock::now() + microseconds(timeout_us);
  for (;;) {
    ucs_status_t status = ucp_worker_arm(worker_);
    if (status == UCS_ERR_BUSY) return;  // events arrived: progress has work
    check(status, "arming the worker's event fd");
    int64_t left_us = duration_cast<microseconds>(deadline - steady_clock::now()).count();
    int64_t ms = std::clamp<int64_t>((left_us + 999) / 1000, 0, kMaxSleepMs);
    std::array<epoll_event, 4> events;
    if (::epoll_wait(epoll_fd_, events.data(), static_cast<int>(events.size()), static_cast<int>(ms)) <= 0) return;
    if (ucp_worker_progress(worker_) != 0 || steady_clock::now() >= deadline) return;
  }
}

void Net::post_goodbye_receive() {
  ucp_request_param_t params{.op_attr_mask = 0};
  ucs_status_ptr_t posted = ucp_tag_recv_nbx(worker_, &goodbye_buffer_, sizeof goodbye_buffer_,
                                             codec_.control(0, kGoodbye), codec_.any_source_mask(), &params);
  if (UCS_PTR_IS_ERR(posted)) check(UCS_PTR_STATUS(posted), "posting the receive of goodbyes");
  goodbye_ = posted;
}

void Net::take_goodbyes() {
  ucp_tag_recv_info_t info{};
  while (goodbye_ && ucp_tag_recv_request_test(goodbye_, &info) == UCS_OK) {
    ucp_request_free(goodbye_);
    goodbye_ = nullptr;
    int source = codec_.source(info.sender_tag);
    if (auto it = endpoints_.find(source); it != endpoints_.end())
      it->second->peer_closed();
    else if (!connected_.contains(source))  // else a goodbye to an endpoint closed here already
      closed_early_.insert(source);
    post_goodbye_receive();
  }
}

void Net::say_goodbye(ucp_ep_h ep) {
  ucp_request_param_t params{.op_attr_mask = 0};
  ucs_status_ptr_t sent = ucp_tag_send_nbx(ep, nullptr, 0, codec_.control(rank_, kGoodbye), &params);
  if (sent && !UCS_PTR_IS_ERR(sent)) closing_.push_back(sent);
}

void Net::close_ep(ucp_ep_h ep, bool force) {
  by_ep_.erase(ep);
  ucp_request_param_t params{.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
                             .flags = force ? uint32_t{UCP_EP_CLOSE_FLAG_FORCE} : 0u};
  ucs_status_ptr_t closed = ucp_ep_close_nbx(ep, &params);
  if (closed && !UCS_PTR_IS_ERR(closed)) closing_.push_back(closed);
}

void Net::on_ucx_error(void* net, ucp_ep_h ep, ucs_status_t status) {
  static_cast<Net*>(net)->errors_.emplace_back(ep, status);
}

void Net::take_errors() {
  std::vector<std::pair<ucp_ep_h, ucs_status_t>> errors;
  errors.swap(errors_);
  for (auto [ep, status] : errors)
    if (auto it = by_ep_.find(ep); it != by_ep_.end()) it->second->ucx_failed(status);
}

// A peer process of this host that exited: its goodbye may still sit in
// UCX's queues, so UCX gets a few more rounds to deliver it first.
void Net::watch_processes() {
  auto now = std::chrono::steady_clock::now();
  if (now < next_watch_) return;
  next_watch_ = now + kWatchPeriod;
  std::array<epoll_event, 16> events;
  int n = ::epoll_wait(epoll_fd_, events.data(), static_cast<int>(events.size()), 0);
  for (int i = 0; i < n; ++i) {
    if (events[i].data.u64 == kWorkerEvent) continue;
    auto it = endpoints_.find(static_cast<int>(events[i].data.u64));
    if (it == endpoints_.end() || it->second->process_alive()) continue;
    for (int round = 0; round < kProgressRounds; ++round) ucp_worker_progress(worker_);
    take_goodbyes();
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, it->second->process_fd(), nullptr);
    it->second->process_died();
  }
}

void Net::finish_closing() {
  std::erase_if(closing_, [](void* request) {
    if (ucp_request_check_status(request) == UCS_INPROGRESS) return false;
    ucp_request_free(request);
    return true;
  });
}

}  // namespace hcomm::ucx
