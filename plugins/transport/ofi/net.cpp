#include "net.hpp"

#include <poll.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_tagged.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <string_view>
#include <thread>

#include "hcomm/plugin/auth.hpp"

namespace hcomm::ofi {

namespace {

constexpr size_t kControlRecvs = 8;
constexpr size_t kCompletionBatch = 16;
// A receive from a peer that said bye fails this long after the bye (or after
// its posting): what the peer sent before the bye has arrived by then, and
// matches at once.
constexpr auto kByeGrace = std::chrono::milliseconds(200);
// How long close keeps the endpoint open for its byes to leave.
constexpr auto kByeFlush = std::chrono::milliseconds(200);
constexpr auto kWaitNapMin = std::chrono::microseconds(50);
constexpr auto kWaitNapMax = std::chrono::milliseconds(2);

uint64_t key_check_of(const uint8_t (&key)[16]) {
  uint64_t check = 0;
  if (!plugin::auth::derived_tag(key, "hcomm ofi communicator", &check))
    HCOMM_PLUGIN_THROW(HCOMM_ERR_SYSTEM, "ofi: cannot derive the communicator's check value: libcrypto's HMAC failed");
  return check;
}

// The shared-memory file of a peer of the shm provider, whose endpoint names
// are "fi_shm://<file in /dev/shm>"; empty for other providers.
std::string shm_region(const Address& peer) {
  constexpr std::string_view kPrefix = "fi_shm://";
  std::string name(peer.name.begin(), peer.name.end());
  name.resize(std::strlen(name.c_str()));
  if (!peer.host_local || name.rfind(kPrefix, 0) != 0 || name.find('/', kPrefix.size()) != std::string::npos) return {};
  return name.substr(kPrefix.size());
}

}  // namespace

Net::Net(Fabric& fabric, const Config& config, const plugin::Services& services,
         const hcomm_transport_open_args_t& args)
    : fabric_(fabric),
      services_(services),
      rank_(args.rank),
      key_check_(key_check_of(args.comm_key)),
      liveness_(std::chrono::milliseconds(config.liveness_ms)),
      next_check_(Clock::now() + liveness_) {
  // A completion queue with a descriptor to sleep on where the provider has one (tcp), else none (shm).
  fi_cq_attr cq_attr{.size = 0, .format = FI_CQ_FORMAT_TAGGED, .wait_obj = FI_WAIT_FD};
  if (fi_cq_open(fabric_.domain(), &cq_attr, cq_.out(), nullptr) == 0) {
    if (fi_control(&cq_.get()->fid, FI_GETWAIT, &wait_fd_) != 0) wait_fd_ = -1;
  } else {
    cq_attr.wait_obj = FI_WAIT_NONE;
    check_fi(fi_cq_open(fabric_.domain(), &cq_attr, cq_.out(), nullptr), HCOMM_ERR_SYSTEM, "fi_cq_open");
  }
  fi_av_attr av_attr{.type = FI_AV_TABLE};
  check_fi(fi_av_open(fabric_.domain(), &av_attr, av_.out(), nullptr), HCOMM_ERR_SYSTEM, "fi_av_open");
  check_fi(fi_endpoint(fabric_.domain(), const_cast<fi_info*>(&fabric_.info()), ep_.out(), nullptr),
           HCOMM_ERR_SYSTEM, "fi_endpoint");
  check_fi(fi_ep_bind(ep_.get(), &av_.get()->fid, 0), HCOMM_ERR_SYSTEM, "fi_ep_bind (address vector)");
  check_fi(fi_ep_bind(ep_.get(), &cq_.get()->fid, FI_TRANSMIT | FI_RECV), HCOMM_ERR_SYSTEM,
           "fi_ep_bind (completion queue)");
  check_fi(fi_enable(ep_.get()), HCOMM_ERR_SYSTEM, "fi_enable");

  size_t room = HCOMM_TRANSPORT_MAX_ADDRESS - Address::overhead();
  std::vector<uint8_t> name(room);
  size_t name_len = room;
  int rc = fi_getname(&ep_.get()->fid, name.data(), &name_len);
  if (rc == -FI_ETOOSMALL)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_UNSUPPORTED,
                       "ofi: provider %s names its endpoints with %zu bytes; the address blob has room for %zu",
                       fabric_.provider().c_str(), name_len, room);
  check_fi(rc, HCOMM_ERR_SYSTEM, "fi_getname");
  name.resize(name_len);
  local_ = Address{.host_id = local_host_id(),
                   .provider_id = fnv1a(fabric_.provider().data(), fabric_.provider().size()),
                   .link_bps = fabric_.link_bps(),
                   .pid = ::getpid(),
                   .host_local = fabric_.host_local(),
                   .loopback = is_loopback_name(fabric_.info().addr_format, name),
                   .name = std::move(name)};
  // Entry 0 is this endpoint itself: libfabric 1.17's shm provider reports
  // senders missing from the address vector as entry 0, so no peer may have it.
  fi_addr_t self = FI_ADDR_NOTAVAIL;
  if (fi_av_insert(av_.get(), local_.name.data(), 1, &self, 0, nullptr) != 1 || self != 0)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_SYSTEM, "ofi: fi_av_insert of this endpoint's own address failed");

  for (size_t i = 0; i < kControlRecvs; ++i) {
    auto& c = control_recvs_.emplace_back(std::make_unique<ControlOp>(Op::Kind::kControlRecv));
    c->mr = register_buffer(&c->message, sizeof c->message, FI_RECV);
    post_control_recv(*c);
  }
}

Net::~Net() {
  try {
    for (auto& [rank, ep] : by_rank_)
      if (ep->state() == Endpoint::State::kOpen) send_control(*ep, ControlMessage::kBye);
    for (auto until = Clock::now() + kByeFlush; !control_sends_.empty() && Clock::now() < until;)
      if (read_completions() == 0) std::this_thread::yield();
  } catch (const std::exception& e) {  // closing goes on: the byes are a courtesy
    services_.log(HCOMM_LOG_DEBUG, "NET", plugin::format("ofi: while closing: %s", e.what()));
  }
  ep_.reset();  // first: the provider lets go of every buffer and registration
  requests_.clear();
  control_recvs_.clear();
  control_sends_.clear();
}

Fid<fid_mr> Net::register_buffer(void* buf, size_t len, uint64_t access) {
  Fid<fid_mr> mr;
  if (!fabric_.needs_local_mr() || len == 0) return mr;
  check_fi(fi_mr_reg(fabric_.domain(), buf, len, access, 0, 0, 0, mr.out(), nullptr), HCOMM_ERR_SYSTEM,
           "fi_mr_reg");
  if (fabric_.mr_per_endpoint()) {
    check_fi(fi_mr_bind(mr.get(), &ep_.get()->fid, 0), HCOMM_ERR_SYSTEM, "fi_mr_bind");
    check_fi(fi_mr_enable(mr.get()), HCOMM_ERR_SYSTEM, "fi_mr_enable");
  }
  return mr;
}

Endpoint& Net::connect(int rank, const Address& peer) {
  if (rank < 0 || rank == rank_)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT, "ofi: connect: peer rank %d (this rank is %d)", rank, rank_);
  if (by_rank_.count(rank))
    HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT, "ofi: connect: rank %d is already connected on this net", rank);
  if (peer.provider_id != local_.provider_id)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT,
                       "ofi: connect: rank %d uses another libfabric provider than this rank (%s); set the same "
                       "HCOMM_OFI_PROVIDER on every rank",
                       rank, fabric_.provider().c_str());
  fi_addr_t addr = FI_ADDR_NOTAVAIL;
  int inserted = fi_av_insert(av_.get(), peer.name.data(), 1, &addr, 0, nullptr);
  if (inserted != 1)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_REMOTE, "ofi: connect: fi_av_insert of rank %d's address failed: %s", rank,
                       inserted < 0 ? fi_strerror(-inserted) : "no entry inserted");
  bool same_host = peer.host_id == local_.host_id;
  Endpoint& ep =
      *endpoints_.emplace_back(std::make_unique<Endpoint>(*this, rank, addr, peer.pid, same_host, shm_region(peer)));
  by_rank_[rank] = &ep;
  return ep;
}

bool Net::ready(Endpoint& ep) {
  if (!ep.greeted()) {
    send_control(ep, ControlMessage::kHello);
    ep.set_greeted();
  }
  progress();
  if (ep.state() == Endpoint::State::kFailed) ep.check_usable(true);
  return true;
}

void Net::close_endpoint(Endpoint& ep) {
  if (ep.state() == Endpoint::State::kOpen) send_control(ep, ControlMessage::kBye);
  ep.close();
  auto it = by_rank_.find(ep.rank());
  if (it != by_rank_.end() && it->second == &ep) by_rank_.erase(it);
}

Request* Net::isend(Endpoint& ep, const void* buf, size_t len, uint64_t tag) {
  return post(ep, true, const_cast<void*>(buf), len, tag);
}

Request* Net::irecv(Endpoint& ep, void* buf, size_t len, uint64_t tag) { return post(ep, false, buf, len, tag); }

Request* Net::post(Endpoint& ep, bool send, void* buf, size_t len, uint64_t tag) {
  ep.check_usable(send);
  auto owned = std::make_unique<Request>(ep, send, buf, len, tag);
  Request& r = *owned;
  r.mr = register_buffer(buf, len, send ? FI_SEND : FI_RECV);
  void* desc = r.mr.get() ? fi_mr_desc(r.mr.get()) : nullptr;
  // Every message carries the key's check value; directed receives take only the peer's.
  ssize_t rc = send ? fi_tsenddata(ep_.get(), buf, len, desc, key_check_, ep.addr(), tag, &r.op) : post_recv(r, desc);
  if (rc == -FI_EAGAIN) {
    read_completions();
    return nullptr;
  }
  if (rc < 0)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_SYSTEM, "ofi: %s: %s: %s (%zd)", send ? "fi_tsenddata" : "fi_trecv",
                       r.describe(ep.rank()).c_str(), fi_strerror(static_cast<int>(-rc)), rc);
  if (services_.enabled(HCOMM_LOG_TRACE, "NET"))
    services_.log(HCOMM_LOG_TRACE, "NET", plugin::format("ofi: rank %d: posted %s", rank_, r.describe(ep.rank()).c_str()));
  ep.add(r);
  requests_.emplace(&r, std::move(owned));
  return &r;
}

ssize_t Net::post_recv(Request& r, void* desc) {
  const Fabric::Tail& tail = fabric_.overflow_tail();
  if (!tail.base) return fi_trecv(ep_.get(), r.buf, r.len, desc, r.ep->addr(), r.tag, 0, &r.op);
  iovec iov[2] = {{.iov_base = r.buf, .iov_len = r.len}, {.iov_base = tail.base, .iov_len = tail.bytes}};
  void* descs[2] = {desc, nullptr};
  return fi_trecvv(ep_.get(), iov, descs, 2, r.ep->addr(), r.tag, 0, &r.op);
}

bool Net::test(Request& r, size_t* bytes) {
  if (!r.finished) return false;
  r.user_holds = false;
  hcomm_result_t status = r.status;
  std::string error = std::move(r.error);
  *bytes = r.bytes;
  release(r);
  if (status != HCOMM_SUCCESS) throw plugin::Error(status, error);
  return true;
}

void Net::fail(Request& r, hcomm_result_t code, const std::string& text) {
  r.ep->remove(r);
  r.ep->remove_leftover_if_dead();
  if (r.finished) return;
  r.finished = true;
  r.status = code;
  r.error = text;
  // A receive can be taken back; a send stays with the provider until close.
  if (!r.send && r.provider_holds) fi_cancel(&ep_.get()->fid, &r.op);
}

void Net::fail_truncated(Request& r, size_t message_bytes) {
  std::string size = message_bytes ? plugin::format(" (%zu bytes)", message_bytes) : std::string();
  fail(r, HCOMM_ERR_INVALID_ARGUMENT,
       plugin::format("ofi: %s is shorter than the message%s; give a buffer of the message's size",
                      r.describe(r.ep->rank()).c_str(), size.c_str()));
}

void Net::release(Request& r) {
  if (!r.user_holds && !r.provider_holds) requests_.erase(&r);
}

void Net::progress() {
  read_completions();
  check_peers();
}

void Net::check_peers() {
  for (ControlOp* c : std::exchange(unposted_, {})) post_control_recv(*c);
  Clock::time_point now = Clock::now();
  if (now < next_check_) return;
  next_check_ = now + liveness_;
  for (auto& ep : endpoints_) ep->check(now, kByeGrace);
}

void Net::wait(int64_t timeout_us) {
  if (read_completions() > 0) return;
  auto until = Clock::now() + std::chrono::microseconds(timeout_us);
  if (wait_fd_ >= 0) {
    fid* fids[] = {&cq_.get()->fid};
    if (fi_trywait(fabric_.fabric(), fids, 1) != FI_SUCCESS) return;  // completions are waiting
    // At most a liveness period, so that the caller's progress checks the peers.
    auto ms = std::chrono::ceil<std::chrono::milliseconds>(std::min<Clock::duration>(until - Clock::now(), liveness_));
    pollfd p{.fd = wait_fd_, .events = POLLIN, .revents = 0};
    ::poll(&p, 1, static_cast<int>(std::max<int64_t>(ms.count(), 0)));
    return;
  }
  // No descriptor: short naps, growing to kWaitNapMax, between looks at the queue.
  for (Clock::duration nap = kWaitNapMin;; nap = std::min<Clock::duration>(nap * 2, kWaitNapMax)) {
    auto left = until - Clock::now();
    if (left <= Clock::duration::zero()) return;
    std::this_thread::sleep_for(std::min(left, nap));
    if (read_completions() > 0) return;
  }
}

size_t Net::read_completions() {
  fi_cq_tagged_entry entries[kCompletionBatch];
  size_t handled = 0;
  for (;;) {
    ssize_t n = fi_cq_read(cq_.get(), entries, kCompletionBatch);
    if (n > 0) {
      for (ssize_t i = 0; i < n; ++i) on_completion(entries[i]);
      handled += static_cast<size_t>(n);
      continue;
    }
    if (n == -FI_EAGAIN) return handled;
    if (n != -FI_EAVAIL) check_fi(static_cast<int>(n), HCOMM_ERR_SYSTEM, "fi_cq_read");
    fi_cq_err_entry err{};
    ssize_t m = fi_cq_readerr(cq_.get(), &err, 0);
    if (m == -FI_EAGAIN) return handled;
    check_fi(static_cast<int>(m), HCOMM_ERR_SYSTEM, "fi_cq_readerr");
    on_error(err);
    ++handled;
  }
}

void Net::on_completion(const fi_cq_tagged_entry& entry) {
  Op& op = *static_cast<Op*>(entry.op_context);
  switch (op.kind) {
    case Op::Kind::kRequest:
      on_request_done(*static_cast<Request*>(op.owner), entry);
      break;
    case Op::Kind::kControlRecv: {
      auto& c = *static_cast<ControlOp*>(op.owner);
      on_control(c);
      post_control_recv(c);
      break;
    }
    case Op::Kind::kControlSend:
      control_sends_.erase(static_cast<ControlOp*>(op.owner));
      break;
  }
}

void Net::on_request_done(Request& r, const fi_cq_tagged_entry& entry) {
  if (services_.enabled(HCOMM_LOG_TRACE, "NET"))
    services_.log(HCOMM_LOG_TRACE, "NET",
                  plugin::format("ofi: rank %d: %s done, %zu bytes", rank_, r.describe(r.ep->rank()).c_str(), entry.len));
  r.provider_holds = false;
  if (!r.send && entry.len > r.len) {
    // It ran into the overflow tail: give those pages back.
    const Fabric::Tail& tail = fabric_.overflow_tail();
    ::madvise(tail.base, std::min(entry.len - r.len, tail.bytes), MADV_DONTNEED);
  }
  if (!r.finished) {
    r.ep->remove(r);
    if (r.send) {
      r.finished = true;
      r.bytes = r.len;
    } else if (!(entry.flags & FI_REMOTE_CQ_DATA) || entry.data != key_check_) {
      repost_after_stray(r);
    } else if (entry.len > r.len) {
      fail_truncated(r, entry.len);
    } else {
      r.finished = true;
      r.bytes = entry.len;
    }
  }
  release(r);
}

// A message without this communicator's key took the receive (a provider
// that misattributes unknown senders): it is dropped and the receive waits
// again for its real message, which overwrites what the stray left.
void Net::repost_after_stray(Request& r) {
  services_.log(HCOMM_LOG_WARN, "NET",
                plugin::format("ofi: rank %d: dropped a message without this communicator's key that took the %s",
                               rank_, r.describe(r.ep->rank()).c_str()));
  void* desc = r.mr.get() ? fi_mr_desc(r.mr.get()) : nullptr;
  ssize_t rc = post_recv(r, desc);
  if (rc == 0) {
    r.provider_holds = true;
    return;
  }
  fail(r, HCOMM_ERR_REMOTE,
       plugin::format("ofi: %s: a message without this communicator's key took it, and posting it again failed: %s",
                      r.describe(r.ep->rank()).c_str(), fi_strerror(static_cast<int>(-rc))));
}

void Net::on_error(const fi_cq_err_entry& err) {
  Op& op = *static_cast<Op*>(err.op_context);
  switch (op.kind) {
    case Op::Kind::kRequest: {
      auto& r = *static_cast<Request*>(op.owner);
      services_.log(HCOMM_LOG_DEBUG, "NET",
                    plugin::format("ofi: rank %d: %s ended with %s", rank_, r.describe(r.ep->rank()).c_str(),
                                   fi_strerror(err.err)));
      r.provider_holds = false;
      int peer = r.ep->rank();
      if (err.err == FI_ETRUNC) {
        fail_truncated(r, err.olen ? r.len + err.olen : 0);
      } else if (err.err != FI_ECANCELED) {
        char detail[256] = {};
        fi_cq_strerror(cq_.get(), err.prov_errno, err.err_data, detail, sizeof detail);
        std::string text =
            plugin::format("ofi: the link to rank %d failed: %s (provider: %s)", peer, fi_strerror(err.err), detail);
        fail(r, HCOMM_ERR_REMOTE, text + ": " + r.describe(peer));
        r.ep->fail(HCOMM_ERR_REMOTE, text);
      }
      release(r);
      break;
    }
    case Op::Kind::kControlRecv:  // a stray's message too large for a control buffer, say
      if (err.err != FI_ECANCELED) post_control_recv(*static_cast<ControlOp*>(op.owner));
      break;
    case Op::Kind::kControlSend:
      control_sends_.erase(static_cast<ControlOp*>(op.owner));
      break;
  }
}

void Net::on_control(ControlOp& c) {
  const ControlMessage& m = c.message;
  if (m.magic != ControlMessage::kMagic || m.key_check != key_check_) {
    services_.log(HCOMM_LOG_DEBUG, "NET",
                  plugin::format("ofi: rank %d dropped a control message without this communicator's key", rank_));
    return;
  }
  auto it = by_rank_.find(m.rank);
  if (m.kind == ControlMessage::kBye && it != by_rank_.end()) it->second->peer_closed();
}

void Net::post_control_recv(ControlOp& c) {
  void* desc = c.mr.get() ? fi_mr_desc(c.mr.get()) : nullptr;
  ssize_t rc = fi_recv(ep_.get(), &c.message, sizeof c.message, desc, FI_ADDR_UNSPEC, &c.op);
  if (rc == -FI_EAGAIN) {
    unposted_.push_back(&c);
    return;
  }
  check_fi(static_cast<int>(rc), HCOMM_ERR_SYSTEM, "fi_recv (control message)");
}

// Best effort: a peer that never gets the bye still learns of the close when
// this process exits (same host) or from the provider.
void Net::send_control(Endpoint& ep, ControlMessage::Kind kind) {
  auto owned = std::make_unique<ControlOp>(Op::Kind::kControlSend);
  ControlOp& c = *owned;
  c.message.kind = kind;
  c.message.rank = rank_;
  c.message.key_check = key_check_;
  c.mr = register_buffer(&c.message, sizeof c.message, FI_SEND);
  void* desc = c.mr.get() ? fi_mr_desc(c.mr.get()) : nullptr;
  for (auto until = Clock::now() + kByeFlush;;) {
    ssize_t rc = fi_send(ep_.get(), &c.message, sizeof c.message, desc, ep.addr(), &c.op);
    if (rc == 0) break;
    if (rc != -FI_EAGAIN || Clock::now() > until) {
      services_.log(HCOMM_LOG_DEBUG, "NET",
                    plugin::format("ofi: control message %u to rank %d was not sent: %s", kind, ep.rank(),
                                   fi_strerror(static_cast<int>(-rc))));
      return;
    }
    read_completions();
  }
  control_sends_.emplace(&c, std::move(owned));
}

}  // namespace hcomm::ofi
