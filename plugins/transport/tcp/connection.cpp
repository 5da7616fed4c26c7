#include "connection.hpp"

#include <algorithm>
#include <array>
#include <cstring>

#include "endpoint.hpp"
#include "link_error.hpp"
#include "net.hpp"

namespace hcomm::tcp {

using plugin::format;

namespace {

constexpr std::chrono::milliseconds kMaxBackoff{100};
// Pieces taken from the endpoint ahead of writing: enough to batch small
// messages into one sendmsg, few enough to leave large ones to other sockets.
constexpr size_t kQueuePieces = 32;
constexpr size_t kQueueBytes = 256 << 10;
// Bytes read from one socket per event, so that one busy peer cannot starve the others.
constexpr size_t kReadBudget = 16 << 20;

// The peer may simply not listen yet, or the network may be settling.
bool worth_retrying(int error) {
  switch (error) {
    case ECONNREFUSED:
    case ECONNRESET:
    case ETIMEDOUT:
    case EHOSTUNREACH:
    case ENETUNREACH:
    case EAGAIN:
    case EADDRNOTAVAIL:
      return true;
    default:
      return false;
  }
}

std::string reason(int error) { return error ? std::strerror(error) : "socket error"; }

iovec span_of(const void* base, size_t len) { return {const_cast<void*>(base), len}; }

}  // namespace

Connection::Connection(Endpoint& endpoint, int index) : endpoint_(endpoint), index_(index) {}

Connection::~Connection() { drop_socket(); }

void Connection::on_events(uint32_t events) {
  endpoint_.guard([&] { handle(events); });
}

void Connection::handle(uint32_t events) {
  switch (state_) {
    case State::kConnecting:
      return finish_connect();
    case State::kSendHello:
      return send_hello();
    case State::kRecvChallenge:
      return recv_challenge();
    case State::kSendProof:
      return send_proof();
    case State::kReady:
      break;
    default:
      return;  // an event reported before the socket closed
  }
  if (events & EPOLLERR) return read_then_fail();
  if (events & (EPOLLIN | EPOLLHUP)) read_pieces(kReadBudget);
  if ((events & EPOLLOUT) && state_ == State::kReady) {
    tx_blocked_ = false;
    flush();
  }
}

// --- set-up ---------------------------------------------------------------

void Connection::start_connect() {
  socket_ = Socket::stream();
  socket_.set_nodelay();
  socket_.set_buffers(endpoint_.net().sockbuf());
  int error = socket_.connect(endpoint_.peer().inet);
  if (error == 0) return start_hello();
  if (error != EINPROGRESS) return connect_failed(error);
  state_ = State::kConnecting;
  watch();
}

std::optional<Clock::time_point> Connection::retry_time() const {
  if (state_ != State::kRetryWait) return std::nullopt;
  return retry_at_;
}

void Connection::finish_connect() {
  int error = socket_.take_error();
  if (error == 0) return start_hello();
  connect_failed(error);
}

void Connection::connect_failed(int error) {
  if (!worth_retrying(error)) throw LinkError(format("cannot connect: %s", std::strerror(error)));
  drop_socket();
  state_ = State::kRetryWait;
  retry_at_ = Clock::now() + backoff_;
  if (endpoint_.net().services().enabled(HCOMM_LOG_DEBUG, "NET"))
    endpoint_.net().log(HCOMM_LOG_DEBUG,
                        format("tcp: connect to %s socket %d: %s; again in %lld ms", endpoint_.name().c_str(), index_,
                               std::strerror(error), static_cast<long long>(backoff_.count())));
  backoff_ = std::min(backoff_ * 2, kMaxBackoff);
  endpoint_.connection_retrying();
}

void Connection::adopt(Socket socket) {
  socket_ = std::move(socket);
  became_ready();
}

void Connection::start_hello() {
  hello_ = wire::Hello{.magic = wire::kHelloMagic,
                       .version = wire::kVersion,
                       .socket_index = static_cast<uint16_t>(index_),
                       .rank = endpoint_.net().rank(),
                       .reserved = 0,
                       .nonce = {}};
  if (!wire::auth::fresh_nonce(&hello_.nonce))
    throw LinkError(format("handshake: getrandom() failed: %s", std::strerror(errno)));
  handshake_done_ = 0;
  state_ = State::kSendHello;
  send_hello();
}

bool Connection::send_handshake(const void* message, size_t size) {
  iovec iov = span_of(static_cast<const std::byte*>(message) + handshake_done_, size - handshake_done_);
  IoResult r = socket_.send({&iov, 1});
  if (r.error && !r.would_block()) throw LinkError(format("handshake failed: %s", std::strerror(r.error)));
  handshake_done_ += r.bytes;
  if (handshake_done_ < size) {
    watch();
    return false;
  }
  handshake_done_ = 0;
  return true;
}

bool Connection::recv_handshake(void* message, size_t size) {
  iovec iov = span_of(static_cast<std::byte*>(message) + handshake_done_, size - handshake_done_);
  IoResult r = socket_.recv({&iov, 1});
  if (r.eof)
    throw LinkError(
        "the listener closed the connection during the handshake (a listener of another "
        "communicator, or not an HComm tcp listener)");
  if (r.error) {
    if (r.would_block()) return false;
    throw LinkError(format("handshake failed: %s", std::strerror(r.error)));
  }
  handshake_done_ += r.bytes;
  if (handshake_done_ < size) return false;
  handshake_done_ = 0;
  return true;
}

void Connection::send_hello() {
  if (!send_handshake(&hello_, sizeof hello_)) return;
  state_ = State::kRecvChallenge;
  watch();
}

void Connection::recv_challenge() {
  if (!recv_handshake(&challenge_, sizeof challenge_)) return;
  check_challenge();
  state_ = State::kSendProof;
  send_proof();
}

void Connection::check_challenge() {
  const Net& net = endpoint_.net();
  wire::auth::Mac expected{};
  if (!wire::acceptor_proof(net.key(), hello_, challenge_.nonce, endpoint_.peer_rank(), &expected) ||
      !wire::initiator_proof(net.key(), hello_, challenge_.nonce, &proof_))
    throw LinkError("handshake: libcrypto failed to compute HMAC-SHA256");
  if (!wire::auth::same_mac(challenge_.proof, expected))
    throw LinkError(
        format("handshake: the listener did not prove this communicator's key as rank %d (a listener of "
               "another communicator, or of another rank)",
               endpoint_.peer_rank()));
}

void Connection::send_proof() {
  if (send_handshake(proof_.data(), proof_.size())) became_ready();
}

void Connection::became_ready() {
  state_ = State::kReady;
  watch();
  endpoint_.connection_ready();
}

// --- writing --------------------------------------------------------------

void Connection::flush() {
  while (state_ == State::kReady) {
    refill();
    if (tx_.empty()) return set_blocked(false);
    std::array<iovec, 2 * kQueuePieces> iov;
    size_t count = 0;
    size_t want = 0;
    size_t skip = tx_head_done_;
    auto add = [&](const void* base, size_t len) {
      if (skip >= len) {
        skip -= len;
        return;
      }
      iov[count++] = span_of(static_cast<const std::byte*>(base) + skip, len - skip);
      want += len - skip;
      skip = 0;
    };
    for (const OutPiece& piece : tx_) {
      add(&piece.header, sizeof piece.header);
      add(piece.payload, piece.header.length);
    }
    IoResult r = socket_.send({iov.data(), count});
    if (r.error) {
      if (r.would_block()) return set_blocked(true);
      throw LinkError(format("send failed: %s", std::strerror(r.error)));
    }
    sent(r.bytes);
    if (r.bytes < want) return set_blocked(true);
  }
}

void Connection::refill() {
  OutPiece piece;
  while (tx_.size() < kQueuePieces && tx_bytes_ < kQueueBytes && endpoint_.next_piece(piece)) {
    tx_bytes_ += sizeof piece.header + piece.header.length;
    tx_.push_back(piece);
  }
}

void Connection::sent(size_t bytes) {
  size_t done = tx_head_done_ + bytes;
  while (!tx_.empty()) {
    size_t size = sizeof(wire::PieceHeader) + tx_.front().header.length;
    if (done < size) break;
    done -= size;
    tx_bytes_ -= size;
    Request* request = tx_.front().request;
    tx_.pop_front();
    if (request) endpoint_.piece_written(*request);
  }
  tx_head_done_ = done;
}

void Connection::set_blocked(bool blocked) {
  tx_blocked_ = blocked;
  watch();
}

// --- reading --------------------------------------------------------------

// A socket error (a reset from a peer that died with data of ours unread)
// can come behind what the peer sent before it: that is read first, and
// when the peer's goodbye is among it, the error costs nothing.
void Connection::read_then_fail() {
  const int error = socket_.take_error();
  try {
    read_pieces(SIZE_MAX);
  } catch (const LinkError&) {
    // The error itself, reached behind the data; reported below by its cause.
  }
  if (state_ == State::kReady) throw LinkError(reason(error));
}

// Payload goes straight to its destination; the next header, when it is
// already there, comes along in the same call.
void Connection::read_pieces(size_t budget) {
  while (state_ == State::kReady && budget > 0) {
    std::array<iovec, 2> iov;
    size_t count = 0;
    auto* header = reinterpret_cast<std::byte*>(&rx_header_);
    if (rx_ == Rx::kPayload && !rx_message_->dest) {
      // A dropped message's bytes go to a scratch buffer, the next header only once they are all read.
      const size_t left = rx_piece_.length - rx_done_;
      iov[count++] = span_of(discard_.data(), std::min(left, discard_.size()));
      if (left <= discard_.size()) iov[count++] = span_of(header, sizeof rx_header_);
    } else if (rx_ == Rx::kPayload) {
      iov[count++] = span_of(rx_message_->dest + rx_piece_.offset + rx_done_, rx_piece_.length - rx_done_);
      iov[count++] = span_of(header, sizeof rx_header_);
    } else {
      iov[count++] = span_of(header + rx_header_done_, sizeof rx_header_ - rx_header_done_);
    }
    size_t want = iov[0].iov_len + (count > 1 ? iov[1].iov_len : 0);
    IoResult r = socket_.recv({iov.data(), count});
    if (r.eof) throw LinkError("the peer closed the connection");
    if (r.error) {
      if (r.would_block()) return;
      throw LinkError(std::strerror(r.error));
    }
    take(r.bytes);
    budget -= std::min(budget, r.bytes);
    if (r.bytes < want) return;  // the socket is drained
  }
}

void Connection::take(size_t bytes) {
  if (rx_ == Rx::kPayload) {
    size_t payload = std::min<size_t>(bytes, rx_piece_.length - rx_done_);
    uint64_t at = rx_piece_.offset + rx_done_;
    InMessage& message = *rx_message_;
    rx_done_ += payload;
    if (rx_done_ == rx_piece_.length) {
      rx_ = Rx::kHeader;
      rx_message_ = nullptr;
    }
    endpoint_.matcher().received(message, at, payload);
    rx_header_done_ = bytes - payload;
  } else {
    rx_header_done_ += bytes;
  }
  if (rx_ == Rx::kHeader && rx_header_done_ == sizeof rx_header_) start_piece();
}

void Connection::start_piece() {
  rx_piece_ = rx_header_;
  rx_header_done_ = 0;
  switch (static_cast<wire::PieceKind>(rx_piece_.kind)) {
    case wire::PieceKind::kData:
      break;
    case wire::PieceKind::kRts:
      return endpoint_.matcher().announce(rx_piece_);
    case wire::PieceKind::kCts:
      return endpoint_.cleared(rx_piece_.seq);
    case wire::PieceKind::kBye:
      drop_socket();
      state_ = State::kClosed;
      return endpoint_.peer_closed_socket();
    default:
      throw LinkError(format("protocol error: unknown piece kind %u", rx_piece_.kind));
  }
  InMessage& message = endpoint_.matcher().resolve(rx_piece_);
  rx_done_ = 0;
  if (rx_piece_.length > 0) {
    rx_ = Rx::kPayload;
    rx_message_ = &message;
  } else {
    endpoint_.matcher().received(message, rx_piece_.offset, 0);
  }
}

// --- closing --------------------------------------------------------------

void Connection::say_bye() {
  if (state_ != State::kReady || tx_head_done_ > 0) return;
  wire::PieceHeader bye{.kind = static_cast<uint32_t>(wire::PieceKind::kBye)};
  iovec iov = span_of(&bye, sizeof bye);
  socket_.send({&iov, 1});
}

void Connection::close(hcomm_result_t code, const std::string& text) {
  for (const OutPiece& piece : tx_)
    if (piece.request) piece.request->fail(code, text);
  tx_.clear();
  tx_bytes_ = 0;
  tx_head_done_ = 0;
  tx_blocked_ = false;
  rx_ = Rx::kHeader;
  rx_message_ = nullptr;
  rx_header_done_ = 0;
  drop_socket();
  state_ = State::kClosed;
}

// --- polling --------------------------------------------------------------

void Connection::watch() {
  uint32_t events = 0;
  switch (state_) {
    case State::kConnecting:
    case State::kSendHello:
    case State::kSendProof:
      events = EPOLLOUT;
      break;
    case State::kRecvChallenge:
      events = EPOLLIN;
      break;
    case State::kReady:
      events = EPOLLIN | (tx_blocked_ ? uint32_t{EPOLLOUT} : 0);
      break;
    default:
      return;
  }
  Poller& poller = endpoint_.net().poller();
  if (!registered_) {
    poller.add(socket_.fd(), this, events);
    registered_ = true;
  } else if (events != watched_) {
    poller.modify(socket_.fd(), this, events);
  }
  watched_ = events;
}

void Connection::drop_socket() {
  if (registered_) endpoint_.net().poller().remove(socket_.fd());
  registered_ = false;
  watched_ = 0;
  socket_.reset();
}

}  // namespace hcomm::tcp
