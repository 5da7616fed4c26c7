#include "net.hpp"

#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <optional>

namespace hcomm::shm {

namespace {

// Liveness is checked from progress: while a peer is watched (requests
// pending, or not attached yet), a waiting rank comes back this often.
constexpr int64_t kMaxSleepUs = 50'000;

const hcomm_transport_open_args_t& checked(const hcomm_transport_open_args_t& args) {
  if (args.nranks < 1 || args.rank < 0 || args.rank >= args.nranks)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT, "shm: open: rank %d is not in 0..nranks-1 (nranks %d)", args.rank,
                       args.nranks);
  return args;
}

// One FIFO per peer that may attach; more ranks than this on one host are
// not expected (a FIFO only costs memory once it is used).
uint32_t fifo_count(int nranks) {
  const long cpus = ::sysconf(_SC_NPROCESSORS_CONF);
  const long most = std::max(256L, 2 * cpus);
  return static_cast<uint32_t>(std::min<long>(nranks, most));
}

}  // namespace

Net::Net(const Config& config, const plugin::Services& services, const hcomm_transport_open_args_t& args)
    : config_(config),
      services_(services),
      rank_(checked(args).rank),
      nranks_(args.nranks),
      cma_probe_word_(keyed_check(args.comm_key)),
      segment_(Segment::create(SegmentOwner{.rank = rank_, .pid = ::getpid(), .key_check = cma_probe_word_},
                               Geometry{.fifo_count = fifo_count(nranks_), .fifo_bytes = config.fifo_bytes})),
      doorbell_(segment_.header()),
      connected_(static_cast<size_t>(nranks_), false) {
  address_.host = HostIdentity::local();
  address_.key_check = cma_probe_word_;
  address_.probe_address = reinterpret_cast<uintptr_t>(&cma_probe_word_);
  address_.rank = rank_;
  address_.pid = ::getpid();
  address_.uid = ::getuid();
  address_.dumpable = ::prctl(PR_GET_DUMPABLE) == 1 ? 1 : 0;
  address_.segment_fd = segment_.file().fd;
  address_.segment_inode = segment_.file().inode;
  address_.segment_device = segment_.file().device;
  if (!address_.host.known())
    services_.log(HCOMM_LOG_INFO, "NET",
                  "shm: this host's identity (boot id, namespaces) cannot be read: shm reaches no peer");
  if (!address_.dumpable)
    services_.log(HCOMM_LOG_INFO, "NET",
                  "shm: this process is not dumpable (prctl PR_SET_DUMPABLE, or a set-uid program): peers cannot "
                  "open its segment, shm reaches no peer");
}

Net::~Net() {
  // Endpoints fail their pending requests, so they go first.
  endpoints_.clear();
}

Endpoint& Net::connect(int peer_rank, const void* blob, size_t len) {
  if (peer_rank < 0 || peer_rank >= nranks_)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT, "shm: connect: peer_rank %d is not in 0..%d", peer_rank,
                       nranks_ - 1);
  const Address peer = Address::decode(blob, len, "connect: peer_addr");
  if (peer.rank != peer_rank)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT, "shm: connect: peer_addr is the address of rank %d, not of rank %d",
                       peer.rank, peer_rank);
  if (peer.key_check != key_check())
    HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT,
                       "shm: connect: the address of rank %d belongs to another communicator (its key differs)",
                       peer_rank);
  if (!address_.can_share_memory_with(peer))
    HCOMM_PLUGIN_THROW(HCOMM_ERR_UNSUPPORTED,
                       "shm: connect: rank %d runs on another host or container (%s), as another user (uid %u) or "
                       "one of the two is not dumpable; score reports it unreachable",
                       peer_rank, peer.host.hostname, peer.uid);
  if (peer_rank == rank_ && peer.pid != ::getpid())
    HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT, "shm: connect: the address of this rank (%d) names pid %d", rank_,
                       peer.pid);
  if (connected_[static_cast<size_t>(peer_rank)])
    HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT, "shm: connect: rank %d is connected already; ep_close it first",
                       peer_rank);
  endpoints_.push_back(std::make_unique<Endpoint>(*this, peer));
  connected_[static_cast<size_t>(peer_rank)] = true;
  return *endpoints_.back();
}

void Net::close(Endpoint& ep) {
  connected_[static_cast<size_t>(ep.peer_rank())] = false;
  std::erase_if(endpoints_, [&](const std::unique_ptr<Endpoint>& e) { return e.get() == &ep; });
}

Request& Net::new_request(const std::byte* source, std::byte* target, uint64_t length, uint64_t tag) {
  const Request fresh{.net = this, .source = source, .target = target, .length = length, .tag = tag};
  if (free_requests_.empty()) return requests_.emplace_back(fresh);
  Request& r = *free_requests_.back();
  free_requests_.pop_back();
  r = fresh;
  return r;
}

void Net::release(Request& r) {
  r.error_text.clear();
  free_requests_.push_back(&r);
}

bool Net::watching_a_peer() {
  return std::any_of(endpoints_.begin(), endpoints_.end(),
                     [](const auto& ep) { return ep->has_pending_requests() || !ep->attached_or_failed(); });
}

void Net::progress() {
  std::optional<Endpoint::Clock::time_point> now;
  for (auto& ep : endpoints_) {
    ep->progress();
    if (!ep->has_pending_requests() && ep->attached_or_failed()) continue;
    if (!now) now = Endpoint::Clock::now();
    ep->check_peer(*now);
  }
}

bool Net::has_work() {
  return std::any_of(endpoints_.begin(), endpoints_.end(), [](const auto& ep) { return ep->has_work(); });
}

void Net::wait(int64_t timeout_us) {
  if (timeout_us < 0)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT, "shm: wait: timeout_us is %lld, it must be 0 or more",
                       static_cast<long long>(timeout_us));
  if (timeout_us == 0 || has_work()) return;
  doorbell_.sleep([this] { return has_work(); }, watching_a_peer() ? std::min(timeout_us, kMaxSleepUs) : timeout_us);
}

void Net::note_cma_denied(const std::string& why) {
  if (cma_denied_noted_) return;
  cma_denied_noted_ = true;
  services_.log(HCOMM_LOG_INFO, "NET", why);
}

}  // namespace hcomm::shm
