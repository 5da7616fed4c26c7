#include "core/bootstrap/root_service.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "core/bootstrap/wire.hpp"
#include "core/common/log.hpp"
#include "hcomm/plugin/pending.hpp"

namespace hcomm::bootstrap {

namespace {

// How long a new connection may take to send its hello, and again its proof;
// a silent or slow client holds only its own slot meanwhile. Connections not
// yet identified are bounded as hcomm/plugin/pending.hpp says; a rank dropped
// to make room connects again.
constexpr double kHelloTimeoutS = 2;
// Connections accepted per wake-up: in between, the service reads what the
// accepted ones sent, so that a rank's hello is read before newer
// connections can push the rank out.
constexpr int kAcceptsPerWake = 16;
// With no descriptor left to accept a connection, and none to free: the
// pause before the service tries again.
constexpr double kAcceptPauseS = 0.1;
// After an abort, the time left to deliver it before the connections close.
constexpr double kAbortLingerS = 2;

// "rank 3 of 8", "ranks 3, 5 of 8", "ranks 0-3, 7 of 8"; long lists are cut short.
std::string describe_ranks(const std::vector<int>& ranks, int nranks) {
  constexpr int kMaxGroups = 8;
  std::string list;
  int groups = 0;
  for (size_t i = 0; i < ranks.size(); ++groups) {
    size_t last = i;
    while (last + 1 < ranks.size() && ranks[last + 1] == ranks[last] + 1) ++last;
    if (groups == kMaxGroups) {
      list += format(", ... (%zu in all)", ranks.size());
      break;
    }
    if (groups > 0) list += ", ";
    list += std::to_string(ranks[i]);
    if (last > i) list += "-" + std::to_string(ranks[last]);
    i = last + 1;
  }
  return format("%s %s of %d", ranks.size() == 1 ? "rank" : "ranks", list.c_str(), nranks);
}

// A connection whose handshake is not complete: its hello, then (once
// challenged) its proof.
struct PendingClient {
  Fd fd;
  Endpoint peer;
  std::string address;
  Deadline deadline;
  Hello hello{};
  bool challenged = false;
  auth::Nonce nonce{};  // the root's, sent in the challenge
  Proof proof{};
  size_t got = 0;  // bytes of the hello, then of the proof
};

// What the eviction policy (hcomm/plugin/pending.hpp) needs to know of a pending client.
plugin::PendingState describe(const PendingClient& c) { return {bool(c.fd), !c.challenged, c.peer.ip}; }

// A frame queued for one member; frames sent to many are shared.
struct Outgoing {
  std::shared_ptr<const Bytes> frame;
  size_t sent = 0;
};

enum class MemberState { kAbsent, kJoined, kLeft, kFailed };

struct Member {
  MemberState state = MemberState::kAbsent;
  Fd fd;
  std::string address;
  bool hosts_rendezvous = false;
  FrameReader reader{kMaxBlobBytes};
  std::deque<Outgoing> out;
  bool write_shut = false;  // after an abort: our side is closed, theirs drains
  bool contributed = false;
  Bytes blob;
  // Stall reports: the ranks this member's stalled call waits on, and when
  // to tell it which ranks hold it up.
  std::vector<int> waits_on;
  std::optional<Deadline> judge_at;
  bool holds_up_others = false;  // named by a judgement: not waited for at exit
};

// The protocol state of one job: admission, all-gather rounds, failure
// notices and deadlines. Runs on the service thread only, except for
// linger_at_exit(), which any thread may read.
class Rendezvous {
 public:
  Rendezvous(Fd listener, const RootOptions& options, int wake_fd)
      : listener_(std::move(listener)),
        options_(options),
        wake_fd_(wake_fd),
        port_(local_endpoint(listener_.get()).port),
        hello_timeout_s_(std::min(kHelloTimeoutS, options.timeout_s)) {
    if (options_.nranks > 0) learn_size(options_.nranks);
  }

  // Serves until the job ends or the wake descriptor becomes readable.
  void run();

  uint16_t port() const { return port_; }
  const Secret& secret() const { return options_.secret; }
  double timeout_s() const { return options_.timeout_s; }
  // True while an abort is being delivered, or while a formed job runs and
  // this process's own ranks have said goodbye: then the service should
  // outlive the process's exit a little.
  bool linger_at_exit() const { return linger_at_exit_.load(); }

 private:
  bool aborting() const { return abort_deadline_.has_value(); }
  bool finished() const;
  // One poll() and the work it found; false when asked to stop.
  bool serve_once();
  int poll_timeout_ms() const;

  void accept_clients();
  // Makes room for one more unidentified connection from `source`.
  void make_room(uint32_t source);
  // Drops the oldest pending client, a silent one first; false when there is none.
  bool evict_oldest();
  void evict(PendingClient& client);
  void read_handshake(PendingClient& client);
  void challenge(PendingClient& client);
  void admit(PendingClient& client);
  void refuse(PendingClient& client, const std::string& reason, bool tell_client);
  void learn_size(int nranks);
  void form_job();

  void read_frames(int rank);
  // After an abort: reads and drops what a member still sends until it closes.
  void drain_after_abort(int rank);
  // Handles the frame just read; false once the member's connection is closed.
  bool on_frame(int rank);
  void on_contribution(int rank, Bytes blob);
  void check_round();
  void complete_round();
  void member_lost(int rank, const char* how);
  void broadcast(Bytes frame);
  void flush(int rank);
  void abort(hcomm_result_t code, const std::string& text);
  void check_deadlines();
  void on_stall_report(int rank, const Bytes& payload);
  // The ranks that `rank`'s waits lead to, from stalled rank to stalled rank,
  // which wait on nobody: stopped, or not in the call the others wait in.
  std::vector<int> holding_up(int rank) const;
  // Whether a member that the job's end should wait for is still connected.
  bool waiting_for_members() const;
  void update_linger();

  Fd listener_;
  RootOptions options_;
  int wake_fd_;
  uint16_t port_;
  double hello_timeout_s_;
  std::vector<PendingClient> pending_;
  std::vector<Member> members_;  // by rank, once the job's size is known
  std::vector<pollfd> poll_fds_;
  int joined_ = 0;
  bool formed_ = false;
  bool rank_failed_ = false;  // no round can complete any more
  uint64_t round_ = 0;
  int contributions_ = 0;
  int first_contributor_ = -1;
  std::optional<Deadline> join_deadline_;
  std::optional<Deadline> round_deadline_;
  std::optional<Deadline> abort_deadline_;
  std::optional<Deadline> accept_paused_;
  std::atomic<bool> linger_at_exit_{false};
};

void Rendezvous::run() {
  while (!finished() && serve_once()) {
  }
  // Whatever is still open closes now, so that the ranks see the end at once.
  listener_.reset();
  pending_.clear();
  for (Member& m : members_) m.fd.reset();
}

bool Rendezvous::serve_once() {
  std::vector<pollfd>& fds = poll_fds_;
  fds.clear();
  fds.push_back({wake_fd_, POLLIN, 0});
  if (accept_paused_ && accept_paused_->expired()) accept_paused_.reset();
  fds.push_back({listener_ && !accept_paused_ ? listener_.get() : -1, POLLIN, 0});
  for (const PendingClient& c : pending_) fds.push_back({c.fd.get(), POLLIN, 0});
  const size_t polled_pending = pending_.size();
  const size_t polled_members = members_.size();
  for (const Member& m : members_) {
    short events = static_cast<short>(POLLIN | (m.out.empty() ? 0 : POLLOUT));
    fds.push_back({m.fd.get(), events, 0});
  }
  if (::poll(fds.data(), fds.size(), poll_timeout_ms()) < 0 && errno != EINTR) {
    HCOMM_WARN(NET, "bootstrap: the rendezvous at %s stops: poll failed: %s", options_.address.c_str(),
               std::strerror(errno));
    return false;
  }
  if (fds[0].revents) return false;
  const pollfd* pending_events = &fds[2];
  const pollfd* member_events = pending_events + polled_pending;
  for (size_t i = 0; i < polled_pending; ++i)
    if (pending_events[i].revents && pending_[i].fd) read_handshake(pending_[i]);
  for (size_t r = 0; r < polled_members; ++r)
    if ((member_events[r].revents & ~POLLOUT) && members_[r].fd) read_frames(static_cast<int>(r));
  if (fds[1].revents && listener_) accept_clients();
  for (size_t r = 0; r < members_.size(); ++r) flush(static_cast<int>(r));
  check_deadlines();
  return true;
}

bool Rendezvous::finished() const {
  if (aborting()) return !waiting_for_members() || abort_deadline_->expired();
  return formed_ && !waiting_for_members();
}

bool Rendezvous::waiting_for_members() const {
  return std::any_of(members_.begin(), members_.end(),
                     [this](const Member& m) { return m.fd && (aborting() || !m.holds_up_others); });
}

int Rendezvous::poll_timeout_ms() const {
  std::optional<Clock::time_point> next;
  auto consider = [&next](const std::optional<Deadline>& d) {
    if (d && (!next || d->when() < *next)) next = d->when();
  };
  for (const PendingClient& c : pending_) consider(c.deadline);
  consider(join_deadline_);
  consider(round_deadline_);
  consider(abort_deadline_);
  consider(accept_paused_);
  for (const Member& m : members_) consider(m.judge_at);
  return next ? Deadline(*next).poll_ms() : -1;
}

void Rendezvous::accept_clients() {
  for (int i = 0; i < kAcceptsPerWake; ++i) {
    Endpoint peer;
    Fd fd = accept_connection(listener_.get(), &peer);
    if (!fd) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno == EMFILE || errno == ENFILE) {
        // Out of descriptors: the oldest unidentified connection gives its own up.
        if (evict_oldest()) continue;
        accept_paused_ = Deadline::after(kAcceptPauseS);
      }
      if (errno != EAGAIN && errno != EWOULDBLOCK)
        HCOMM_WARN_LIMITED(NET, "bootstrap: the rendezvous at %s cannot accept a client: %s", options_.address.c_str(),
                           std::strerror(errno));
      return;
    }
    make_room(peer.ip);
    pending_.push_back(PendingClient{std::move(fd), peer, peer.to_string(), Deadline::after(hello_timeout_s_)});
    read_handshake(pending_.back());  // a rank's hello is often there already
  }
}

void Rendezvous::make_room(uint32_t source) {
  auto victim = plugin::pending_to_drop(pending_.begin(), pending_.end(), source, plugin::kPendingLimits, describe);
  if (victim != pending_.end()) evict(*victim);
}

bool Rendezvous::evict_oldest() {
  auto victim = plugin::oldest_pending(pending_.begin(), pending_.end(), describe,
                                       [](const plugin::PendingState&) { return true; });
  if (victim == pending_.end()) return false;
  evict(*victim);
  return true;
}

void Rendezvous::evict(PendingClient& client) {
  refuse(client, "dropped to make room for a newer connection: too many wait for their handshake", false);
}

void Rendezvous::read_handshake(PendingClient& client) {
  uint8_t* into = client.challenged ? client.proof.data() : reinterpret_cast<uint8_t*>(&client.hello);
  const size_t size = client.challenged ? sizeof client.proof : sizeof client.hello;
  ptrdiff_t n = recv_some(client.fd.get(), into + client.got, size - client.got);
  if (n < 0)
    return refuse(
        client, client.challenged ? "closed the connection before its proof" : "closed the connection before its hello",
        false);
  client.got += static_cast<size_t>(n);
  if (client.got < size) return;
  client.got = 0;
  if (client.challenged) return admit(client);
  challenge(client);
}

void Rendezvous::challenge(PendingClient& client) {
  const Hello& h = client.hello;
  if (h.magic != kHelloMagic) return refuse(client, "wrong magic (not an HComm bootstrap client)", false);
  if (h.version != kProtocolVersion)
    return refuse(client, format("protocol version %u, this rendezvous speaks %u", h.version, kProtocolVersion), true);
  Challenge c{};
  if (!auth::fresh_nonce(&c.nonce) || !root_proof(options_.secret, h, c.nonce, &c.proof))
    return refuse(client, "no challenge could be made (getrandom or libcrypto failed)", false);
  // The first bytes this service sends on the connection: an empty socket buffer takes them.
  const Bytes frame = encode_frame(FrameType::kChallenge, &c, sizeof c);
  if (send_some(client.fd.get(), frame.data(), frame.size()) != static_cast<ptrdiff_t>(frame.size()))
    return refuse(client, "its connection did not take the challenge", false);
  client.nonce = c.nonce;
  client.challenged = true;
  client.deadline = Deadline::after(hello_timeout_s_);
}

void Rendezvous::admit(PendingClient& client) {
  const Hello& h = client.hello;
  Proof expected{};
  if (!rank_proof(options_.secret, h, client.nonce, &expected) || !auth::same_mac(client.proof, expected))
    return refuse(client, "wrong secret (its unique id or HCOMM_SECRET is not this job's)", true);
  if (options_.nranks > 0 && h.nranks != options_.nranks)
    return refuse(client, format("it names a job of %d ranks, this job has %d", h.nranks, options_.nranks), true);
  if (h.nranks < 1 || h.nranks > kMaxRanks)
    return refuse(client, format("job size %d is outside 1..%d", h.nranks, kMaxRanks), true);
  if (h.rank < 0 || h.rank >= h.nranks)
    return refuse(client, format("rank %d is outside 0..%d", h.rank, h.nranks - 1), true);
  if (options_.nranks == 0) learn_size(h.nranks);
  Member& m = members_[static_cast<size_t>(h.rank)];
  if (m.state != MemberState::kAbsent) return refuse(client, format("rank %d has joined already", h.rank), true);
  m.state = MemberState::kJoined;
  m.fd = std::move(client.fd);
  m.address = client.address;
  m.hosts_rendezvous = (h.flags & kHelloHostsRendezvous) != 0;
  m.out.push_back({std::make_shared<const Bytes>(encode_frame(FrameType::kWelcome, nullptr, 0)), 0});
  HCOMM_DEBUG(INIT, "bootstrap: rank %d joined from %s", h.rank, m.address.c_str());
  if (++joined_ == options_.nranks) form_job();
}

void Rendezvous::refuse(PendingClient& client, const std::string& reason, bool tell_client) {
  HCOMM_WARN_LIMITED(NET, "bootstrap: the rendezvous at %s refused a client from %s: %s", options_.address.c_str(),
                     client.address.c_str(), reason.c_str());
  if (tell_client) {
    // Best effort: the frame is small enough for an empty socket buffer.
    Bytes frame = encode_error_frame(FrameType::kReject, HCOMM_ERR_INVALID_ARGUMENT,
                                     format("bootstrap: the rendezvous at %s refused rank %d: %s",
                                            options_.address.c_str(), client.hello.rank, reason.c_str()));
    send_some(client.fd.get(), frame.data(), frame.size());
  }
  discard_input(client.fd.get());  // so that the client sees an orderly close
  client.fd.reset();
}

void Rendezvous::learn_size(int nranks) {
  options_.nranks = nranks;
  members_.resize(static_cast<size_t>(nranks));
  // A contribution as long as every rank's together may be: no member makes
  // this service allocate more than one all-gather's result.
  for (Member& m : members_) m.reader.set_max_length(std::min(kMaxBlobBytes, kMaxGatheredBytes / members_.size()));
  join_deadline_ = Deadline::after(options_.timeout_s);
}

void Rendezvous::form_job() {
  formed_ = true;
  join_deadline_.reset();
  int host_rank = -1;
  for (size_t r = 0; r < members_.size() && host_rank < 0; ++r)
    if (members_[r].hosts_rendezvous) host_rank = static_cast<int>(r);
  HCOMM_INFO(INIT, "bootstrap: all %d ranks joined the rendezvous at %s", options_.nranks, options_.address.c_str());
  broadcast(encode_int_frame(FrameType::kReady, host_rank));
  update_linger();
}

void Rendezvous::read_frames(int rank) {
  if (aborting()) return drain_after_abort(rank);
  Member& m = members_[static_cast<size_t>(rank)];
  for (;;) {
    switch (m.reader.read(m.fd.get())) {
      case FrameReader::Status::kWouldBlock:
        return;
      case FrameReader::Status::kClosed:
        return member_lost(rank, "closed its connection without goodbye");
      case FrameReader::Status::kTooLong:
        return member_lost(
            rank, format("broke the protocol (a frame of %llu bytes, at most %zu are allowed per rank "
                         "in a job of %d)",
                         static_cast<unsigned long long>(m.reader.length()), m.reader.max_length(), options_.nranks)
                      .c_str());
      case FrameReader::Status::kFrame:
        if (!on_frame(rank)) return;
        break;
    }
  }
}

void Rendezvous::drain_after_abort(int rank) {
  Member& m = members_[static_cast<size_t>(rank)];
  if (!discard_input(m.fd.get())) m.fd.reset();
}

bool Rendezvous::on_frame(int rank) {
  Member& m = members_[static_cast<size_t>(rank)];
  switch (m.reader.type()) {
    case FrameType::kGoodbye:
      HCOMM_DEBUG(INIT, "bootstrap: rank %d said goodbye", rank);
      m.state = MemberState::kLeft;
      // Before the close that ends the rank's close(): its process may exit
      // right after, and must find the service ready to linger.
      update_linger();
      m.fd.reset();
      m.out.clear();
      check_round();
      return false;
    case FrameType::kContribute:
      if (!formed_ || m.contributed) {
        member_lost(rank, "broke the protocol (an allgather contribution out of turn)");
        return false;
      }
      on_contribution(rank, m.reader.take_payload());
      return m.fd && !aborting();
    case FrameType::kStalled:
      on_stall_report(rank, m.reader.payload());
      return bool(m.fd);
    default:
      member_lost(rank, "broke the protocol (an unknown frame)");
      return false;
  }
}

void Rendezvous::on_contribution(int rank, Bytes blob) {
  if (rank_failed_) return;  // the round cannot complete; the ranks have been told why
  Member& m = members_[static_cast<size_t>(rank)];
  if (contributions_ == 0) {
    first_contributor_ = rank;
    round_deadline_ = Deadline::after(options_.timeout_s);
  } else {
    const Bytes& first = members_[static_cast<size_t>(first_contributor_)].blob;
    if (blob.size() != first.size())
      return abort(
          HCOMM_ERR_INVALID_ARGUMENT,
          format("bootstrap: allgather number %llu: rank %d gave %zu bytes but rank %d gave %zu; every rank "
                 "must give the same length",
                 static_cast<unsigned long long>(round_ + 1), rank, blob.size(), first_contributor_, first.size()));
  }
  m.blob = std::move(blob);
  m.contributed = true;
  ++contributions_;
  check_round();
}

void Rendezvous::check_round() {
  if (!formed_ || rank_failed_ || aborting() || contributions_ == 0) return;
  if (contributions_ == options_.nranks) return complete_round();
  std::vector<int> left;
  for (size_t r = 0; r < members_.size(); ++r)
    if (!members_[r].contributed && members_[r].state == MemberState::kLeft) left.push_back(static_cast<int>(r));
  if (!left.empty())
    abort(HCOMM_ERR_REMOTE,
          format("bootstrap: %s closed the bootstrap while the others wait in allgather number %llu",
                 describe_ranks(left, options_.nranks).c_str(), static_cast<unsigned long long>(round_ + 1)));
}

void Rendezvous::complete_round() {
  const size_t len = members_[static_cast<size_t>(first_contributor_)].blob.size();
  const FrameHeader header{static_cast<uint32_t>(FrameType::kGathered), 0, len * members_.size()};
  auto frame = std::make_shared<Bytes>(sizeof header + header.length);
  std::memcpy(frame->data(), &header, sizeof header);
  uint8_t* at = frame->data() + sizeof header;
  for (Member& m : members_) {
    if (len > 0) std::memcpy(at, m.blob.data(), len);
    at += len;
    m.blob.clear();
    m.contributed = false;
  }
  for (Member& m : members_)
    if (m.fd) m.out.push_back({frame, 0});
  contributions_ = 0;
  first_contributor_ = -1;
  round_deadline_.reset();
  ++round_;
}

void Rendezvous::member_lost(int rank, const char* how) {
  Member& m = members_[static_cast<size_t>(rank)];
  m.fd.reset();
  m.out.clear();
  if (aborting()) return;
  m.state = MemberState::kFailed;
  if (!formed_)
    return abort(HCOMM_ERR_REMOTE,
                 format("bootstrap: rank %d (%s) %s before every rank had joined the rendezvous at %s", rank,
                        m.address.c_str(), how, options_.address.c_str()));
  // The first failure is the news; later ones usually follow from it.
  HCOMM_LOG(rank_failed_ ? HCOMM_LOG_INFO : HCOMM_LOG_WARN, log::NET, "bootstrap: rank %d (%s) %s; telling the others",
            rank, m.address.c_str(), how);
  rank_failed_ = true;
  round_deadline_.reset();
  broadcast(encode_int_frame(FrameType::kPeerFailed, rank));
  update_linger();
}

void Rendezvous::broadcast(Bytes frame) {
  auto shared = std::make_shared<const Bytes>(std::move(frame));
  for (Member& m : members_)
    if (m.fd) m.out.push_back({shared, 0});
}

void Rendezvous::flush(int rank) {
  Member& m = members_[static_cast<size_t>(rank)];
  while (m.fd && !m.out.empty()) {
    Outgoing& next = m.out.front();
    ptrdiff_t n = send_some(m.fd.get(), next.frame->data() + next.sent, next.frame->size() - next.sent);
    if (n < 0) return member_lost(rank, "closed its connection without goodbye");
    if (n == 0) return;
    next.sent += static_cast<size_t>(n);
    if (next.sent == next.frame->size()) m.out.pop_front();
  }
  // Closing with unread input would reset the connection and could destroy
  // the abort in flight: shut our side only, and close once the member has.
  if (aborting() && m.fd && m.out.empty() && !m.write_shut) {
    ::shutdown(m.fd.get(), SHUT_WR);
    m.write_shut = true;
  }
}

void Rendezvous::abort(hcomm_result_t code, const std::string& text) {
  if (aborting()) return;
  HCOMM_WARN(NET, "%s", text.c_str());
  broadcast(encode_error_frame(FrameType::kAbort, code, text));
  abort_deadline_ = Deadline::after(kAbortLingerS);
  join_deadline_.reset();
  round_deadline_.reset();
  listener_.reset();
  for (PendingClient& c : pending_) c.fd.reset();
  update_linger();
}

void Rendezvous::check_deadlines() {
  for (PendingClient& c : pending_)
    if (c.fd && c.deadline.expired())
      refuse(c, format("sent no %s within %g s", c.challenged ? "proof" : "hello", hello_timeout_s_), false);
  std::erase_if(pending_, [](const PendingClient& c) { return !c.fd; });
  auto ranks_where = [this](auto predicate) {
    std::vector<int> ranks;
    for (size_t r = 0; r < members_.size(); ++r)
      if (predicate(members_[r])) ranks.push_back(static_cast<int>(r));
    return ranks;
  };
  if (join_deadline_ && join_deadline_->expired()) {
    auto missing = ranks_where([](const Member& m) { return m.state == MemberState::kAbsent; });
    abort(HCOMM_ERR_TIMEOUT,
          format("bootstrap: %s did not join the rendezvous at %s within %g s",
                 describe_ranks(missing, options_.nranks).c_str(), options_.address.c_str(), options_.timeout_s));
  }
  for (size_t r = 0; r < members_.size(); ++r) {
    Member& m = members_[r];
    if (!m.judge_at || !m.judge_at->expired()) continue;
    m.judge_at.reset();
    std::vector<int> culprits = holding_up(static_cast<int>(r));
    for (int c : culprits) members_[static_cast<size_t>(c)].holds_up_others = true;
    if (m.fd)
      m.out.push_back({std::make_shared<const Bytes>(encode_ints_frame(
                           FrameType::kHeldUpBy, std::vector<int32_t>(culprits.begin(), culprits.end()))),
                       0});
    update_linger();
  }
  if (round_deadline_ && round_deadline_->expired()) {
    auto missing = ranks_where([](const Member& m) { return !m.contributed; });
    abort(HCOMM_ERR_TIMEOUT,
          format("bootstrap: %s did not reach allgather number %llu within %g s after rank %d did",
                 describe_ranks(missing, options_.nranks).c_str(), static_cast<unsigned long long>(round_ + 1),
                 options_.timeout_s, first_contributor_));
  }
}

void Rendezvous::on_stall_report(int rank, const Bytes& payload) {
  Member& m = members_[static_cast<size_t>(rank)];
  std::vector<int32_t> values;
  if (!decode_ints(payload, &values) || std::any_of(values.begin() + (values.empty() ? 0 : 1), values.end(),
                                                    [this](int32_t r) { return r < 0 || r >= options_.nranks; }))
    return member_lost(rank, "broke the protocol (a malformed stall report)");
  m.judge_at.reset();
  m.waits_on.clear();
  if (values.empty()) return;
  m.waits_on.assign(values.begin() + 1, values.end());
  m.judge_at = Deadline::after(values[0] / 1000.0);
}

std::vector<int> Rendezvous::holding_up(int rank) const {
  std::vector<bool> seen(members_.size());
  std::vector<int> todo = members_[static_cast<size_t>(rank)].waits_on, found;
  seen[static_cast<size_t>(rank)] = true;
  while (!todo.empty()) {
    const int r = todo.back();
    todo.pop_back();
    if (seen[static_cast<size_t>(r)]) continue;
    seen[static_cast<size_t>(r)] = true;
    const std::vector<int>& next = members_[static_cast<size_t>(r)].waits_on;
    if (next.empty()) found.push_back(r);
    todo.insert(todo.end(), next.begin(), next.end());
  }
  std::sort(found.begin(), found.end());
  return found;
}

void Rendezvous::update_linger() {
  bool any_open = waiting_for_members();
  bool own_ranks_left = std::all_of(members_.begin(), members_.end(), [](const Member& m) {
    return !m.hosts_rendezvous || m.state == MemberState::kLeft;
  });
  linger_at_exit_.store(any_open && (aborting() || (formed_ && own_ranks_left)));
}

// Runs one Rendezvous on its own thread.
class ServiceThread {
 public:
  ServiceThread(Fd listener, const RootOptions& options)
      : wake_(make_eventfd()), rendezvous_(std::move(listener), options, wake_.get()), thread_([this] { serve(); }) {}
  ~ServiceThread() {
    stop();
    thread_.join();
  }
  ServiceThread(const ServiceThread&) = delete;
  ServiceThread& operator=(const ServiceThread&) = delete;

  bool serves(uint16_t port, const Secret& secret) const {
    return rendezvous_.port() == port && secrets_equal(rendezvous_.secret(), secret);
  }
  bool finished() {
    std::lock_guard<std::mutex> lock(mutex_);
    return finished_;
  }
  // At process exit: gives a running job's other ranks up to the job's
  // timeout to leave in order, then stops.
  void shut_down() {
    if (rendezvous_.linger_at_exit()) {
      std::unique_lock<std::mutex> lock(mutex_);
      auto limit = std::chrono::duration<double>(rendezvous_.timeout_s());
      finished_cv_.wait_for(lock, limit, [this] { return finished_; });
    }
    stop();
  }

 private:
  static Fd make_eventfd() {
    Fd fd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    if (!fd) HCOMM_THROW(HCOMM_ERR_SYSTEM, "bootstrap: eventfd() failed: %s", std::strerror(errno));
    return fd;
  }
  void serve() {
    rendezvous_.run();
    std::lock_guard<std::mutex> lock(mutex_);
    finished_ = true;
    finished_cv_.notify_all();
  }
  void stop() {
    uint64_t one = 1;
    [[maybe_unused]] ssize_t n = ::write(wake_.get(), &one, sizeof one);
  }

  Fd wake_;
  Rendezvous rendezvous_;
  std::mutex mutex_;
  std::condition_variable finished_cv_;
  bool finished_ = false;
  std::thread thread_;
};

// The process's services; joins their threads at exit.
class Registry {
 public:
  ~Registry() {
    if (::getpid() != owner_) {
      // A child made by fork(): the threads run in the parent only.
      for (auto& s : services_) static_cast<void>(s.release());
      return;
    }
    for (auto& s : services_) s->shut_down();
    services_.clear();
  }

  void add(std::unique_ptr<ServiceThread> service) {
    std::lock_guard<std::mutex> lock(mutex_);
    forget_inherited();
    std::erase_if(services_, [](const auto& s) { return s->finished(); });
    services_.push_back(std::move(service));
  }

  bool serves_here(uint16_t port, const Secret& secret) {
    std::lock_guard<std::mutex> lock(mutex_);
    forget_inherited();
    return ::getpid() == owner_ && std::any_of(services_.begin(), services_.end(), [&](const auto& s) {
             return !s->finished() && s->serves(port, secret);
           });
  }

 private:
  // A child made by fork() inherits the parent's services but not their
  // threads: it must neither join nor stop them.
  void forget_inherited() {
    if (::getpid() == owner_) return;
    for (auto& s : services_) static_cast<void>(s.release());
    services_.clear();
    owner_ = ::getpid();
  }

  pid_t owner_ = ::getpid();
  std::mutex mutex_;
  std::vector<std::unique_ptr<ServiceThread>> services_;
};

Registry& registry() {
  // Service threads log until the registry's destructor joins them; statics
  // die in reverse order of construction, so the logger is set up first.
  log::enabled(HCOMM_LOG_WARN, log::NET);
  static Registry services;
  return services;
}

}  // namespace

void start_root_service(Fd listener, const RootOptions& options) {
  registry().add(std::make_unique<ServiceThread>(std::move(listener), options));
}

bool root_service_runs_here(uint16_t port, const Secret& secret) { return registry().serves_here(port, secret); }

}  // namespace hcomm::bootstrap
