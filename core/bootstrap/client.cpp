#include "core/bootstrap/client.hpp"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "core/common/log.hpp"

namespace hcomm::bootstrap {

RendezvousClient::RendezvousClient(const ClientOptions& options) : options_(options) {
  const Deadline deadline = Deadline::after(options_.timeout_s);
  auto pause = std::chrono::milliseconds(10);
  for (int drops = 1; !try_join(deadline); ++drops) {
    if (deadline.expired())
      fail(HCOMM_ERR_TIMEOUT,
           format("bootstrap: rank %d could not join the rendezvous at %s within %g s: it closed this rank's "
                  "connection %d times before the handshake ended, as it does when too many unidentified "
                  "connections wait (is something flooding it with connections?)",
                  options_.rank, options_.root_text.c_str(), options_.timeout_s, drops));
    HCOMM_DEBUG(INIT,
                "bootstrap: the rendezvous at %s closed the connection of rank %d before admitting it; trying "
                "again",
                options_.root_text.c_str(), options_.rank);
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(500));
  }
  int32_t host_rank = -1;
  if (!decode_int(await(FrameType::kReady, "every rank to join"), &host_rank))
    fail(HCOMM_ERR_INTERNAL, "bootstrap: a malformed ready message from the rendezvous at " + options_.root_text);
  host_rank_ = host_rank;
  joined_ = true;
  HCOMM_DEBUG(INIT, "bootstrap: rank %d of %d joined the rendezvous at %s", options_.rank, options_.nranks,
              options_.root_text.c_str());
}

bool RendezvousClient::try_join(const Deadline& deadline) {
  int last_error = 0;
  fd_ = connect_with_retry(options_.root, deadline, &last_error);
  if (!fd_)
    HCOMM_THROW(HCOMM_ERR_TIMEOUT,
                "bootstrap: rank %d could not reach the rendezvous at %s within %g s (last attempt: %s); check the "
                "address and that the process serving it runs",
                options_.rank, options_.root_text.c_str(), options_.timeout_s, std::strerror(last_error));
  reader_ = FrameReader(kMaxNoticeBytes);
  try {
    handshake();
    return true;
  } catch (const Error&) {
    if (!dropped_) throw;  // refused, or the rendezvous failed its proof: trying again changes nothing
    dropped_ = false;
    error_.reset();
    return false;
  }
}

void RendezvousClient::handshake() {
  Hello hello{.magic = kHelloMagic,
              .version = kProtocolVersion,
              .rank = options_.rank,
              .nranks = options_.nranks,
              .flags = options_.hosts_rendezvous ? kHelloHostsRendezvous : 0,
              .reserved = 0,
              .nonce = {}};
  if (!auth::fresh_nonce(&hello.nonce))
    fail(HCOMM_ERR_SYSTEM, format("bootstrap: getrandom() failed: %s", std::strerror(errno)));
  send_bytes(&hello, sizeof hello, "hello");
  const Bytes payload = await(FrameType::kChallenge, "the rendezvous's challenge");
  Challenge challenge{};
  if (payload.size() != sizeof challenge)
    fail(HCOMM_ERR_INTERNAL, "bootstrap: a malformed challenge from the rendezvous at " + options_.root_text);
  std::memcpy(&challenge, payload.data(), sizeof challenge);
  auth::Mac expected{};
  Proof proof{};
  if (!root_proof(options_.secret, hello, challenge.nonce, &expected) ||
      !rank_proof(options_.secret, hello, challenge.nonce, &proof))
    fail(HCOMM_ERR_SYSTEM, "bootstrap: libcrypto failed to compute HMAC-SHA256");
  if (!auth::same_mac(challenge.proof, expected))
    fail(HCOMM_ERR_INVALID_ARGUMENT,
         format("bootstrap: rank %d: the rendezvous at %s could not prove this job's secret: its unique id or "
                "HCOMM_SECRET differs from this rank's (or another job's rendezvous listens there)",
                options_.rank, options_.root_text.c_str()));
  send_bytes(proof.data(), proof.size(), "proof of the job's secret");
  await(FrameType::kWelcome, "admission to the job");
  welcomed_ = true;
}

std::array<uint8_t, 16> RendezvousClient::derive_key(const void* context, size_t len) const {
  auth::Mac mac{};
  if (!auth::mac(options_.secret, {auth::label("hcomm communicator key"), {static_cast<const uint8_t*>(context), len}},
                 &mac))
    HCOMM_THROW(HCOMM_ERR_SYSTEM, "bootstrap: libcrypto failed to compute HMAC-SHA256");
  std::array<uint8_t, 16> key{};
  std::memcpy(key.data(), mac.data(), key.size());
  return key;
}

void RendezvousClient::allgather(const void* mine, size_t len, void* all) {
  if (closed_) HCOMM_THROW(HCOMM_ERR_INVALID_ARGUMENT, "bootstrap: allgather after close()");
  if (len > 0 && (!mine || !all))
    HCOMM_THROW(HCOMM_ERR_INVALID_ARGUMENT, "bootstrap: allgather of %zu bytes with a null %s buffer", len,
                mine ? "result" : "input");
  const size_t total = len * static_cast<size_t>(options_.nranks);
  if (len > kMaxBlobBytes || total > kMaxGatheredBytes)
    HCOMM_THROW(HCOMM_ERR_INVALID_ARGUMENT,
                "bootstrap: allgather of %zu bytes per rank over %d ranks exceeds the limits (%zu bytes per rank, %zu "
                "in all)",
                len, options_.nranks, kMaxBlobBytes, kMaxGatheredBytes);
  throw_if_broken();
  Bytes frame = encode_frame(FrameType::kContribute, mine, len);
  send_bytes(frame.data(), frame.size(), "allgather contribution");
  reader_.set_max_length(std::max(total, kMaxNoticeBytes));
  Bytes gathered = await(FrameType::kGathered, "the other ranks' allgather contributions");
  reader_.set_max_length(kMaxNoticeBytes);
  if (gathered.size() != total)
    fail(HCOMM_ERR_INTERNAL,
         format("bootstrap: the rendezvous at %s answered an allgather with %zu bytes, expected %zu",
                options_.root_text.c_str(), gathered.size(), total));
  if (total > 0) std::memcpy(all, gathered.data(), total);
}

int RendezvousClient::failed_peer() {
  if (!closed_ && !error_) read_notices();
  return failed_peer_;
}

void RendezvousClient::report_stall(const std::vector<int>& waits_on, double judge_after_s) {
  if (closed_ || error_ || !fd_) return;
  held_up_by_.reset();
  std::vector<int32_t> payload;
  if (!waits_on.empty()) payload.push_back(static_cast<int32_t>(judge_after_s * 1000));
  payload.insert(payload.end(), waits_on.begin(), waits_on.end());
  Bytes frame = encode_ints_frame(FrameType::kStalled, payload);
  send_bytes(frame.data(), frame.size(), "stall report");
}

std::optional<std::vector<int>> RendezvousClient::held_up_by() {
  if (!closed_ && !error_) read_notices();
  return held_up_by_;
}

void RendezvousClient::close() {
  if (closed_) return;
  closed_ = true;
  if (!fd_) return;
  const Deadline linger = Deadline::after(std::min(options_.timeout_s, kGoodbyeLingerS));
  Bytes goodbye = encode_frame(FrameType::kGoodbye, nullptr, 0);
  if (send_all(fd_.get(), goodbye.data(), goodbye.size(), linger) == IoStatus::kDone) {
    // Waits for the root to close its side: closing first with unread data
    // would reset the connection, and the goodbye could be lost with it.
    ::shutdown(fd_.get(), SHUT_WR);
    char sink[256];
    while (wait_for(fd_.get(), POLLIN, linger) && recv_some(fd_.get(), sink, sizeof sink) >= 0) {
    }
  }
  fd_.reset();
}

void RendezvousClient::send_bytes(const void* data, size_t len, const char* what) {
  switch (send_all(fd_.get(), data, len, Deadline::after(options_.timeout_s))) {
    case IoStatus::kDone:
      return;
    case IoStatus::kTimedOut:
      fail(HCOMM_ERR_TIMEOUT, format("bootstrap: rank %d could not send its %s to the rendezvous at %s within %g s",
                                     options_.rank, what, options_.root_text.c_str(), options_.timeout_s));
    case IoStatus::kClosed:
      // The root's last words (an abort, a refusal) may still wait unread.
      read_notices();
      if (!error_) on_root_lost();
      throw_if_broken();
  }
}

Bytes RendezvousClient::await(FrameType expected, const char* waiting_for) {
  const Deadline deadline = reply_deadline();
  for (;;) {
    throw_if_broken();
    switch (reader_.read(fd_.get())) {
      case FrameReader::Status::kFrame:
        if (reader_.type() == expected) return reader_.take_payload();
        on_notice();
        break;
      case FrameReader::Status::kClosed:
        on_root_lost();
        break;
      case FrameReader::Status::kTooLong:
        fail(HCOMM_ERR_INTERNAL, too_long());
      case FrameReader::Status::kWouldBlock:
        if (!wait_for(fd_.get(), POLLIN, deadline))
          fail(HCOMM_ERR_TIMEOUT,
               format("bootstrap: rank %d had no answer from the rendezvous at %s within %g s while waiting for %s",
                      options_.rank, options_.root_text.c_str(), options_.timeout_s + kReplyGraceS, waiting_for));
        break;
    }
  }
}

void RendezvousClient::read_notices() {
  while (fd_ && !error_) {
    switch (reader_.read(fd_.get())) {
      case FrameReader::Status::kFrame:
        on_notice();
        break;
      case FrameReader::Status::kClosed:
        on_root_lost();
        break;
      case FrameReader::Status::kTooLong:
        record(HCOMM_ERR_INTERNAL, too_long());
        break;
      case FrameReader::Status::kWouldBlock:
        return;
    }
  }
}

std::string RendezvousClient::too_long() const {
  return format(
      "bootstrap: rank %d: the rendezvous at %s announced a message of %llu bytes where at most %zu are "
      "due; refused without reading it",
      options_.rank, options_.root_text.c_str(), static_cast<unsigned long long>(reader_.length()),
      reader_.max_length());
}

void RendezvousClient::on_notice() {
  int32_t rank = -1;
  hcomm_result_t code = HCOMM_SUCCESS;
  std::string text;
  switch (reader_.type()) {
    case FrameType::kPeerFailed:
      if (!decode_int(reader_.payload(), &rank)) break;
      if (failed_peer_ < 0) failed_peer_ = rank;
      return record(HCOMM_ERR_REMOTE,
                    format("bootstrap: rank %d failed: its connection to the rendezvous at %s closed without goodbye",
                           rank, options_.root_text.c_str()));
    case FrameType::kAbort:
    case FrameType::kReject:
      if (!decode_error(reader_.payload(), &code, &text)) break;
      return record(code, text);
    case FrameType::kHeldUpBy: {
      std::vector<int32_t> ranks;
      if (!decode_ints(reader_.payload(), &ranks)) break;
      held_up_by_.emplace(ranks.begin(), ranks.end());
      return;
    }
    default:
      break;
  }
  record(HCOMM_ERR_INTERNAL,
         format("bootstrap: an unexpected message (type %u, %zu bytes) from the rendezvous at %s",
                static_cast<unsigned>(reader_.type()), reader_.payload().size(), options_.root_text.c_str()));
}

void RendezvousClient::on_root_lost() {
  fd_.reset();
  if (!welcomed_) {
    dropped_ = true;
    return record(HCOMM_ERR_REMOTE,
                  format("bootstrap: the rendezvous at %s closed the connection of rank %d before admitting it",
                         options_.root_text.c_str(), options_.rank));
  }
  if (!joined_)
    return record(
        HCOMM_ERR_REMOTE,
        format("bootstrap: the rendezvous at %s closed the connection of rank %d before every rank had joined",
               options_.root_text.c_str(), options_.rank));
  if (host_rank_ < 0)
    return record(HCOMM_ERR_REMOTE,
                  format("bootstrap: the rendezvous at %s closed: the process that made the unique id ended",
                         options_.root_text.c_str()));
  if (failed_peer_ < 0) failed_peer_ = host_rank_;
  record(HCOMM_ERR_REMOTE, format("bootstrap: rank %d failed: the rendezvous at %s, which its process served, closed",
                                  host_rank_, options_.root_text.c_str()));
}

void RendezvousClient::record(hcomm_result_t code, const std::string& text) {
  if (!error_) error_.emplace(code, text);
}

void RendezvousClient::fail(hcomm_result_t code, const std::string& text) {
  record(code, text);
  throw *error_;
}

void RendezvousClient::throw_if_broken() const {
  if (error_) throw *error_;
}

}  // namespace hcomm::bootstrap
