#include "endpoint.hpp"

#include <arpa/inet.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <random>

#include "device.hpp"
#include "net.hpp"

namespace hcomm::verbs {

namespace {

constexpr uint8_t kByeByte = 0xb7;
constexpr size_t kAlign = 64;
constexpr uint64_t kWriteChunk = 1ull << 30;  // below every port's max_msg_sz

size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

uint32_t random_psn() {
  static thread_local std::mt19937 gen(std::random_device{}());
  return gen() & 0xffffff;
}

void modify(ibv_qp* qp, const QpTransition& t, const std::string& peer) {
  QpTransition copy = t;
  int rc = ibv_modify_qp(qp, &copy.attr, copy.mask);
  if (rc != 0)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_SYSTEM, "verbs: ibv_modify_qp to %s for %s: %s",
                       t.target == IBV_QPS_INIT  ? "INIT"
                       : t.target == IBV_QPS_RTR ? "RTR"
                                                 : "RTS",
                       peer.c_str(), std::strerror(rc));
}

}  // namespace

Endpoint::Endpoint(Net& net, int peer_rank, const Address& peer)
    : net_(net),
      peer_rank_(peer_rank),
      peer_(peer),
      name_(plugin::format("rank %d (%s)", peer_rank, inet_str(peer.listen_ip, peer.listen_port).c_str())),
      credits_(net.config().credits),
      eager_bytes_(net.config().eager_bytes),
      slot_bytes_(round_up(MsgHeader::kBytes + net.config().eager_bytes, kAlign)),
      flow_(0, net.config().credits) {
  Device& dev = net_.device();
  sq_depth_ = std::min(2 * credits_ + 16, dev.attr().max_qp_wr);
  ibv_qp_init_attr init{};
  init.send_cq = net_.cq();
  init.recv_cq = net_.cq();
  init.qp_type = IBV_QPT_RC;
  init.cap.max_send_wr = static_cast<uint32_t>(sq_depth_);
  init.cap.max_recv_wr = static_cast<uint32_t>(credits_);
  init.cap.max_send_sge = 1;
  init.cap.max_recv_sge = 1;
  qp_ = ibv_create_qp(dev.pd(), &init);
  if (!qp_)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_SYSTEM, "verbs: ibv_create_qp for %s on %s: %s", name_.c_str(),
                       dev.port().device.c_str(), std::strerror(errno));
  size_t bytes = round_up(2 * static_cast<size_t>(credits_) * slot_bytes_, static_cast<size_t>(::getpagesize()));
  region_ = static_cast<uint8_t*>(std::aligned_alloc(static_cast<size_t>(::getpagesize()), bytes));
  if (!region_) {
    destroy();
    throw std::bad_alloc();
  }
  region_mr_ = ibv_reg_mr(dev.pd(), region_, bytes, IBV_ACCESS_LOCAL_WRITE);
  if (!region_mr_) {
    int error = errno;
    destroy();
    HCOMM_PLUGIN_THROW(HCOMM_ERR_SYSTEM, "verbs: ibv_reg_mr of %zu bytes of receive buffers for %s: %s", bytes,
                       name_.c_str(), std::strerror(error));
  }
  slot_owner_.assign(static_cast<size_t>(credits_), nullptr);
  for (int i = credits_ - 1; i >= 0; --i) free_send_slots_.push_back(i);
  psn_ = random_psn();
  try {
    modify(qp_, to_init(local_qp()), name_);
    // Receive buffers go up in INIT, before the peer can learn of the QP.
    for (size_t i = 0; i < static_cast<size_t>(credits_); ++i) post_recv(i);
  } catch (...) {
    destroy();
    throw;
  }
}

Endpoint::~Endpoint() {
  fail_all(HCOMM_ERR_REMOTE, plugin::format("verbs: endpoint of %s closed", name_.c_str()));
  destroy();
}

void Endpoint::destroy() {
  if (qp_) ibv_destroy_qp(qp_);
  if (region_mr_) ibv_dereg_mr(region_mr_);
  std::free(region_);
  qp_ = nullptr;
  region_mr_ = nullptr;
  region_ = nullptr;
}

bool Endpoint::initiator() const { return net_.rank() < peer_rank_; }

LocalQp Endpoint::local_qp() const {
  const PortInfo& port = net_.device().port();
  return LocalQp{.port = port.port,
                 .gid_index = port.gid_index,
                 .psn = psn_,
                 .timeout = net_.config().timeout,
                 .retry_cnt = net_.config().retry_cnt,
                 .mtu = port.mtu,
                 .max_rd_atomic = 1};
}

Hello Endpoint::own_hello(Hello::Kind kind) const {
  const PortInfo& port = net_.device().port();
  return Hello{.kind = kind,
               .mtu = port.mtu,
               .lid = port.lid,
               .rank = net_.rank(),
               .qpn = qp_->qp_num,
               .psn = psn_,
               .credits = static_cast<uint32_t>(credits_),
               .eager_bytes = static_cast<uint32_t>(eager_bytes_),
               .gid = port.gid,
               .nonce = {}};
}

void Endpoint::start() {
  int error = 0;
  Fd fd = connect_to(peer_.listen_ip, peer_.listen_port, &error);
  if (!fd.valid())
    HCOMM_PLUGIN_THROW(HCOMM_ERR_REMOTE, "verbs: cannot reach %s: %s", name_.c_str(), std::strerror(error));
  channel_ = Channel(std::move(fd));
  Hello hello = own_hello(Hello::Kind::kRequest);
  if (!auth::fresh_nonce(&hello.nonce))
    HCOMM_PLUGIN_THROW(HCOMM_ERR_SYSTEM, "verbs: handshake with %s: getrandom() failed: %s", name_.c_str(),
                       std::strerror(errno));
  request_ = hello.encode();
  channel_.send(request_.data(), request_.size());
  await_challenge_ = true;
}

void Endpoint::adopt(Channel channel, const Hello& hello) {
  channel_ = std::move(channel);
  go_live(hello);
  const Hello::Bytes reply = own_hello(Hello::Kind::kReply).encode();
  channel_.send(reply.data(), reply.size());
  await_ready_ = true;
}

// The listener must prove the key as the rank this endpoint meant to reach;
// then this side proves it.
void Endpoint::answer_challenge(const Challenge& challenge) {
  auth::Mac expected{};
  auth::Mac proof{};
  if (!acceptor_proof(net_.key(), request_, challenge.nonce, peer_rank_, &expected) ||
      !initiator_proof(net_.key(), request_, challenge.nonce, &proof))
    HCOMM_PLUGIN_THROW(HCOMM_ERR_SYSTEM, "verbs: handshake with %s: libcrypto failed to compute HMAC-SHA256",
                       name_.c_str());
  if (!auth::same_mac(challenge.proof, expected))
    HCOMM_PLUGIN_THROW(HCOMM_ERR_REMOTE,
                       "verbs: %s did not prove this communicator's key as rank %d (a listener of another "
                       "communicator or rank; is the address stale?)",
                       name_.c_str(), peer_rank_);
  channel_.send(proof.data(), proof.size());
}

// RTR then RTS towards the QP the peer's hello describes.
void Endpoint::go_live(const Hello& h) {
  if (h.eager_bytes != eager_bytes_)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_CONFIG,
                       "verbs: %s uses HCOMM_IB_EAGER_BYTES=%u, this rank %zu; set it alike everywhere", name_.c_str(),
                       h.eager_bytes, eager_bytes_);
  RemoteQp remote{.qpn = h.qpn, .psn = h.psn, .lid = h.lid, .gid = h.gid, .mtu = h.mtu};
  modify(qp_, to_rtr(local_qp(), remote), name_);
  modify(qp_, to_rts(local_qp()), name_);
  flow_.add(static_cast<int>(h.credits));
}

void Endpoint::poll_channel() {
  if (state_ == State::kFailed || !channel_.valid()) return;
  if (state_ == State::kConnecting) {
    if (await_challenge_) {
      channel_.flush();
      if (!channel_.fill(Challenge::kBytes)) return;
      answer_challenge(Challenge::decode(channel_.take(Challenge::kBytes).data()));
      await_challenge_ = false;
      await_reply_ = true;
    }
    if (await_reply_) {
      channel_.flush();
      if (!channel_.fill(Hello::kBytes)) return;
      std::vector<uint8_t> bytes = channel_.take(Hello::kBytes);
      Hello h = Hello::decode(bytes.data(), bytes.size());
      if (h.kind != Hello::Kind::kReply || h.rank != peer_rank_)
        HCOMM_PLUGIN_THROW(HCOMM_ERR_REMOTE,
                           "verbs: %s answered the handshake with a hello of kind %u from rank %d instead of rank "
                           "%d's reply",
                           name_.c_str(), static_cast<unsigned>(h.kind), h.rank, peer_rank_);
      go_live(h);
      channel_.send(&kReadyByte, 1);
      await_reply_ = false;
    } else if (await_ready_) {
      channel_.flush();
      if (!channel_.fill(1)) return;
      if (channel_.take(1)[0] != kReadyByte)
        HCOMM_PLUGIN_THROW(HCOMM_ERR_REMOTE, "verbs: %s sent a bad handshake byte", name_.c_str());
      await_ready_ = false;
    } else {
      return;  // accepting side: the hello has not come yet
    }
    state_ = State::kReady;
    net_.log(HCOMM_LOG_DEBUG, plugin::format("verbs: QP %u connected to %s", qp_->qp_num, name_.c_str()));
    flush();
    return;
  }
  if (state_ != State::kReady) return;
  std::string why;
  bool gone = channel_.closed_by_peer(&why);
  for (uint8_t b : channel_.take_buffered()) bye_seen_ = bye_seen_ || b == kByeByte;
  if (gone) {
    net_.drain_completions();  // what the peer sent before it went is in the CQ already
    peer_closed(why);
  }
}

bool Endpoint::ready() const {
  if (state_ == State::kFailed) throw plugin::Error(error_code_, error_text_);
  return state_ != State::kConnecting;
}

void Endpoint::check_usable() const {
  if (state_ == State::kFailed) throw plugin::Error(error_code_, error_text_);
  if (state_ == State::kConnecting)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT, "verbs: endpoint of %s is not ready; poll ep_ready first",
                       name_.c_str());
}

Request* Endpoint::isend(const void* buf, size_t len, uint64_t tag) {
  check_usable();
  if (state_ == State::kPeerClosed)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_REMOTE, "verbs: %s closed its endpoint; cannot send to it", name_.c_str());
  Request* r = net_.requests().create(Request::Kind::kSend, static_cast<std::byte*>(const_cast<void*>(buf)), len, tag);
  r->seq = next_seq_++;
  outbox_.push_back(r);
  guard([&] { flush(); });
  return r;
}

Request* Endpoint::irecv(void* buf, size_t len, uint64_t tag) {
  check_usable();
  Request* r = net_.requests().create(Request::Kind::kRecv, static_cast<std::byte*>(buf), len, tag);
  if (std::optional<Arrival> a = matcher_.match_receive(tag)) {
    guard([&] {
      deliver(r, std::move(*a));
      flush();
    });
  } else if (state_ == State::kPeerClosed) {
    r->fail(HCOMM_ERR_REMOTE, plugin::format("verbs: %s closed its endpoint before sending a message with tag %llu",
                                             name_.c_str(), static_cast<unsigned long long>(tag)));
  } else {
    matcher_.post_receive(r);
  }
  return r;
}

void Endpoint::post_recv(size_t index) {
  ibv_sge sge{.addr = reinterpret_cast<uint64_t>(slot(index)),
              .length = static_cast<uint32_t>(slot_bytes_),
              .lkey = region_mr_->lkey};
  ibv_recv_wr wr{};
  wr.wr_id = wr_id(Work::kRecv, index);
  wr.sg_list = &sge;
  wr.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  int rc = ibv_post_recv(qp_, &wr, &bad);
  if (rc != 0)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_SYSTEM, "verbs: ibv_post_recv for %s: %s", name_.c_str(), std::strerror(rc));
}

// Sends one header (and eager payload) into the peer's next receive buffer,
// returning the credits owed so far; false when no buffer, slot or queue room.
bool Endpoint::post_header(MsgHeader header, const void* payload, Request* eager_send) {
  bool credit_only = header.type == MsgHeader::Type::kCredit;
  if (!(credit_only ? flow_.can_send_credit() : flow_.can_send_data())) return false;
  if (free_send_slots_.empty() || sq_outstanding_ >= sq_depth_) return false;
  int index = free_send_slots_.back();
  free_send_slots_.pop_back();
  uint8_t* s = slot(static_cast<size_t>(index + credits_));
  header.credits = flow_.take_owed();
  header.encode(s);
  size_t payload_len = header.type == MsgHeader::Type::kEager ? header.len : 0;
  if (payload_len) std::memcpy(s + MsgHeader::kBytes, payload, payload_len);
  ibv_sge sge{.addr = reinterpret_cast<uint64_t>(s),
              .length = static_cast<uint32_t>(MsgHeader::kBytes + payload_len),
              .lkey = region_mr_->lkey};
  ibv_send_wr wr{};
  wr.wr_id = wr_id(Work::kSend, static_cast<uint64_t>(index));
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_SEND;
  wr.send_flags = IBV_SEND_SIGNALED;
  ibv_send_wr* bad = nullptr;
  int rc = ibv_post_send(qp_, &wr, &bad);
  if (rc != 0) HCOMM_PLUGIN_THROW(HCOMM_ERR_SYSTEM, "verbs: ibv_post_send to %s: %s", name_.c_str(), std::strerror(rc));
  flow_.spend();
  ++sq_outstanding_;
  slot_owner_[static_cast<size_t>(index)] = eager_send;
  return true;
}

// Posts what the credits and queues allow: control messages first (the peer
// waits on them), then cleared writes, then new messages in posting order,
// then a credit return if nothing else carried it.
void Endpoint::flush() {
  if (state_ != State::kReady) return;
  while (!control_.empty() && post_header(control_.front(), nullptr, nullptr)) control_.pop_front();
  while (!writes_.empty() && start_write(writes_.front())) writes_.pop_front();
  while (!outbox_.empty()) {
    Request* r = outbox_.front();
    bool eager = r->len() <= eager_bytes_;
    MsgHeader h{.type = eager ? MsgHeader::Type::kEager : MsgHeader::Type::kRts,
                .credits = 0,
                .rkey = 0,
                .seq = r->seq,
                .tag = r->tag(),
                .len = r->len(),
                .addr = 0};
    if (!post_header(h, r->buf(), eager ? r : nullptr)) break;
    outbox_.pop_front();
    if (!eager) announced_.emplace(r->seq, r);
  }
  if (flow_.should_return()) post_header(MsgHeader{}, nullptr, nullptr);
}

// RDMA writes of the message into the receive buffer the CTS named, the
// last one with the sequence number as immediate data.
bool Endpoint::start_write(const Write& w) {
  Request* r = w.send;
  uint64_t chunks = (r->len() + kWriteChunk - 1) / kWriteChunk;
  if (!flow_.can_send_data() || sq_outstanding_ + static_cast<int>(chunks) > sq_depth_) return false;
  if (!r->registration) r->registration = net_.device().cache().acquire(r->buf(), r->len());
  for (uint64_t c = 0; c < chunks; ++c) {
    uint64_t offset = c * kWriteChunk;
    bool last = c + 1 == chunks;
    ibv_sge sge{.addr = reinterpret_cast<uint64_t>(r->buf()) + offset,
                .length = static_cast<uint32_t>(std::min<uint64_t>(kWriteChunk, r->len() - offset)),
                .lkey = r->registration->key.lkey};
    ibv_send_wr wr{};
    wr.wr_id = wr_id(last ? Work::kWriteLast : Work::kWrite, r->seq);
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = last ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE;
    wr.send_flags = IBV_SEND_SIGNALED;
    if (last) wr.imm_data = htonl(static_cast<uint32_t>(r->seq));
    wr.wr.rdma.remote_addr = w.addr + offset;
    wr.wr.rdma.rkey = w.rkey;
    ibv_send_wr* bad = nullptr;
    int rc = ibv_post_send(qp_, &wr, &bad);
    if (rc != 0) HCOMM_PLUGIN_THROW(HCOMM_ERR_SYSTEM, "verbs: RDMA write to %s: %s", name_.c_str(), std::strerror(rc));
    ++sq_outstanding_;
  }
  flow_.spend();  // the immediate takes one of the peer's receive buffers
  writing_.emplace(r->seq, r);
  return true;
}

void Endpoint::on_completion(const ibv_wc& wc) {
  Work work = static_cast<Work>(wc.wr_id >> 56);
  uint64_t value = wc.wr_id & ((1ull << 56) - 1);
  if (wc.status != IBV_WC_SUCCESS) {
    // After the peer's close its QP is gone: late errors of ours tell nothing new.
    if (state_ != State::kReady || wc.status == IBV_WC_WR_FLUSH_ERR) return;
    HCOMM_PLUGIN_THROW(HCOMM_ERR_REMOTE, "verbs: work completion error towards %s: %s (vendor error 0x%x)",
                       name_.c_str(), ibv_wc_status_str(wc.status), wc.vendor_err);
  }
  switch (work) {
    case Work::kRecv:
      on_recv(value, wc);
      break;
    case Work::kSend: {
      --sq_outstanding_;
      size_t index = value;
      if (Request* r = slot_owner_[index]) {
        r->complete(r->len());
        slot_owner_[index] = nullptr;
      }
      free_send_slots_.push_back(static_cast<int>(index));
      break;
    }
    case Work::kWrite:
      --sq_outstanding_;
      break;
    case Work::kWriteLast: {
      --sq_outstanding_;
      auto it = writing_.find(value);
      if (it == writing_.end()) break;
      Request* r = it->second;
      writing_.erase(it);
      release(r);
      r->complete(r->len());
      break;
    }
  }
  flush();
}

void Endpoint::on_recv(size_t index, const ibv_wc& wc) {
  bool credit_only = false;
  if (wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM) {
    auto it = expecting_.find(ntohl(wc.imm_data));
    if (it == expecting_.end())
      HCOMM_PLUGIN_THROW(HCOMM_ERR_REMOTE, "verbs: %s wrote message %u, which no receive expects", name_.c_str(),
                         ntohl(wc.imm_data));
    Request* r = it->second;
    expecting_.erase(it);
    release(r);
    r->complete(r->incoming);
  } else {
    if (wc.byte_len < MsgHeader::kBytes)
      HCOMM_PLUGIN_THROW(HCOMM_ERR_REMOTE, "verbs: %s sent a message of %u bytes, shorter than a header", name_.c_str(),
                         wc.byte_len);
    MsgHeader h = MsgHeader::decode(slot(index));
    if (h.type == MsgHeader::Type::kEager && (h.len > eager_bytes_ || wc.byte_len != MsgHeader::kBytes + h.len))
      HCOMM_PLUGIN_THROW(HCOMM_ERR_REMOTE, "verbs: %s sent an eager message of %llu bytes in %u", name_.c_str(),
                         static_cast<unsigned long long>(h.len), wc.byte_len);
    flow_.add(h.credits);
    credit_only = h.type == MsgHeader::Type::kCredit;
    on_header(h, slot(index) + MsgHeader::kBytes);
  }
  post_recv(index);
  flow_.reposted(credit_only);
}

void Endpoint::on_header(const MsgHeader& h, const uint8_t* payload) {
  switch (h.type) {
    case MsgHeader::Type::kEager:
    case MsgHeader::Type::kRts: {
      Arrival a{.rendezvous = h.type == MsgHeader::Type::kRts, .seq = h.seq, .len = h.len, .payload = {}};
      if (!a.rendezvous)
        a.payload.assign(reinterpret_cast<const std::byte*>(payload),
                         reinterpret_cast<const std::byte*>(payload) + h.len);
      if (Request* recv = matcher_.match_arrival(h.tag))
        deliver(recv, std::move(a));
      else
        matcher_.keep_arrival(h.tag, std::move(a));
      break;
    }
    case MsgHeader::Type::kCts:
    case MsgHeader::Type::kNack: {
      auto it = announced_.find(h.seq);
      if (it == announced_.end())
        HCOMM_PLUGIN_THROW(HCOMM_ERR_REMOTE, "verbs: %s answered message %llu, which is not waiting", name_.c_str(),
                           static_cast<unsigned long long>(h.seq));
      Request* r = it->second;
      announced_.erase(it);
      if (h.type == MsgHeader::Type::kNack)
        r->fail(HCOMM_ERR_INVALID_ARGUMENT,
                plugin::format("verbs: %s refused message %llu of %zu bytes: its receive is shorter", name_.c_str(),
                               static_cast<unsigned long long>(h.seq), r->len()));
      else if (h.len != r->len())
        HCOMM_PLUGIN_THROW(HCOMM_ERR_REMOTE, "verbs: %s cleared %llu bytes of a %zu-byte message", name_.c_str(),
                           static_cast<unsigned long long>(h.len), r->len());
      else
        writes_.push_back(Write{.send = r, .addr = h.addr, .rkey = h.rkey});
      break;
    }
    case MsgHeader::Type::kCredit:
      break;
  }
}

// A receive meets its message: an eager payload is copied; a rendezvous one
// registers the buffer and clears the sender to write into it.
void Endpoint::deliver(Request* recv, Arrival a) {
  if (a.len > recv->len()) {
    recv->fail(HCOMM_ERR_INVALID_ARGUMENT,
               plugin::format("verbs: message of %llu bytes with tag %llu from %s is longer than its receive of %zu "
                              "bytes; post a larger receive",
                              static_cast<unsigned long long>(a.len), static_cast<unsigned long long>(recv->tag()),
                              name_.c_str(), recv->len()));
    if (a.rendezvous) control_.push_back(MsgHeader{.type = MsgHeader::Type::kNack, .seq = a.seq});
    return;
  }
  if (!a.rendezvous) {
    if (a.len) std::memcpy(recv->buf(), a.payload.data(), a.len);
    recv->complete(a.len);
    return;
  }
  if (state_ != State::kReady) {
    recv->fail(HCOMM_ERR_REMOTE, plugin::format("verbs: %s closed before sending the %llu bytes it announced",
                                                name_.c_str(), static_cast<unsigned long long>(a.len)));
    return;
  }
  try {
    recv->registration = net_.device().cache().acquire(recv->buf(), a.len);
  } catch (const plugin::Error& e) {
    recv->fail(e.code(), e.what());  // it is in no queue that fail_all would reach
    throw;
  }
  recv->incoming = a.len;
  recv->seq = a.seq;
  expecting_.emplace(static_cast<uint32_t>(a.seq), recv);
  control_.push_back(MsgHeader{.type = MsgHeader::Type::kCts,
                               .credits = 0,
                               .rkey = recv->registration->key.rkey,
                               .seq = a.seq,
                               .tag = recv->tag(),
                               .len = a.len,
                               .addr = reinterpret_cast<uint64_t>(recv->buf())});
}

void Endpoint::release(Request* r) {
  if (r->registration) net_.device().cache().release(r->registration);
  r->registration = nullptr;
}

void Endpoint::peer_closed(const std::string& why) {
  if (!bye_seen_) {
    fail(HCOMM_ERR_REMOTE, plugin::format("verbs: %s died: %s", name_.c_str(), why.c_str()), true);
    return;
  }
  state_ = State::kPeerClosed;
  channel_.close();
  std::string text = plugin::format("verbs: %s closed its endpoint", name_.c_str());
  fail_all(HCOMM_ERR_REMOTE, text);
}

// Fails every request in flight; arrivals stay for later receives.
void Endpoint::fail_all(hcomm_result_t code, const std::string& text) {
  auto fail_one = [&](Request* r) {
    release(r);
    r->fail(code, text);
  };
  for (Request* r : outbox_) fail_one(r);
  for (auto& [seq, r] : announced_) fail_one(r);
  for (Write& w : writes_) fail_one(w.send);
  for (auto& [seq, r] : writing_) fail_one(r);
  for (auto& [seq, r] : expecting_) fail_one(r);
  for (Request* r : slot_owner_)
    if (r) fail_one(r);
  for (Request* r : matcher_.take_posted()) fail_one(r);
  outbox_.clear();
  announced_.clear();
  writes_.clear();
  writing_.clear();
  expecting_.clear();
  control_.clear();
  std::fill(slot_owner_.begin(), slot_owner_.end(), nullptr);
}

void Endpoint::fail(hcomm_result_t code, const std::string& text, bool report) {
  if (state_ == State::kFailed) return;
  state_ = State::kFailed;
  error_code_ = code;
  error_text_ = text;
  channel_.close();
  fail_all(code, text);
  if (report) net_.report_lost(text);
}

void Endpoint::close() {
  if (channel_.valid() && state_ == State::kReady) {
    try {
      channel_.send(&kByeByte, 1);
    } catch (const std::exception&) {
      // the peer is gone already: nothing to tell
    }
  }
  fail(HCOMM_ERR_REMOTE, plugin::format("verbs: endpoint of %s closed", name_.c_str()), false);
}

}  // namespace hcomm::verbs
