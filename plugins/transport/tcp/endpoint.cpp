#include "endpoint.hpp"

#include <algorithm>
#include <utility>

#include "net.hpp"

namespace hcomm::tcp {

using plugin::format;

namespace {

// A large message is cut into about this many pieces per socket, so that a
// slower socket does not hold the others back...
constexpr uint64_t kPiecesPerSocket = 4;
// ...but no piece is larger than this.
constexpr uint64_t kMaxPiece = 4 << 20;

}  // namespace

Endpoint::Endpoint(Net& net, int peer_rank, const PeerAddress& peer)
    : net_(net),
      peer_rank_(peer_rank),
      peer_(peer),
      name_(format("rank %d (%s)", peer_rank, peer.inet.str().c_str())),
      nsocks_(std::min(net.config().nsocks, peer.nsocks)),
      split_bytes_(std::min(net.config().split_bytes, peer.split_bytes)),
      matcher_(peer_rank, split_bytes_, net.buffers(), [this](uint64_t seq) { clear_to_send(seq); }) {
  for (int i = 0; i < nsocks_; ++i) connections_.push_back(std::make_unique<Connection>(*this, i));
}

Endpoint::~Endpoint() = default;

bool Endpoint::initiator() const { return net_.rank() < peer_rank_; }

void Endpoint::start() {
  guard([&] {
    for (auto& connection : connections_) connection->start_connect();
  });
}

void Endpoint::adopt(int index, Socket socket, const InetAddress& from) {
  if (state_ == State::kFailed || state_ == State::kPeerClosed) {
    net_.log(HCOMM_LOG_INFO, format("tcp: dropped connection from %s: the endpoint to %s is closed",
                                    from.str().c_str(), name_.c_str()));
    return;
  }
  if (index >= nsocks_ || connections_[index]->has_socket()) {
    net_.log(HCOMM_LOG_WARN,
             format("tcp: dropped connection from %s: %s already has socket %d, or the pair uses only %d sockets",
                    from.str().c_str(), name_.c_str(), index, nsocks_));
    return;
  }
  guard([&] { connections_[index]->adopt(std::move(socket)); });
}

bool Endpoint::tick(Clock::time_point now) {
  guard([&] {
    for (auto& connection : connections_)
      if (connection->retry_due(now)) connection->start_connect();
  });
  return next_retry().has_value();
}

std::optional<Clock::time_point> Endpoint::next_retry() const {
  std::optional<Clock::time_point> next;
  if (state_ == State::kFailed) return next;
  for (const auto& connection : connections_)
    if (auto at = connection->retry_time(); at && (!next || *at < *next)) next = at;
  return next;
}

bool Endpoint::ready() const {
  check_usable();
  return state_ == State::kReady || state_ == State::kPeerClosed;
}

void Endpoint::check_usable() const {
  if (state_ == State::kFailed) throw plugin::Error(error_code_, error_text_);
}

Request* Endpoint::isend(const void* buf, size_t len, uint64_t tag) {
  check_usable();
  if (state_ == State::kPeerClosed) throw plugin::Error(error_code_, error_text_);
  Request* send =
      net_.requests().create(Request::Kind::kSend, static_cast<std::byte*>(const_cast<void*>(buf)), len, tag);
  send->send.seq = next_send_seq_++;
  send->send.rendezvous = len > split_bytes_;
  send->send.piece_bytes = piece_length(len);
  unsent_.push_back(send);
  guard([&] { flush_all(); });
  return send;
}

// Also on a failed endpoint: what arrived whole before the link was lost
// stays receivable, and the matcher fails any other receive.
Request* Endpoint::irecv(void* buf, size_t len, uint64_t tag) {
  Request* recv = net_.requests().create(Request::Kind::kRecv, static_cast<std::byte*>(buf), len, tag);
  guard([&] { matcher_.post(*recv); });
  return recv;
}

void Endpoint::close() {
  if (state_ != State::kFailed)
    for (auto& connection : connections_) connection->say_bye();
  fail(HCOMM_ERR_INVALID_ARGUMENT,
       format("tcp: the endpoint to %s was closed with this request pending", name_.c_str()), false);
  net_.log(HCOMM_LOG_DEBUG, format("tcp: closed the endpoint to %s", name_.c_str()));
}

// A message up to the pair's split travels whole, on one socket.
uint64_t Endpoint::piece_length(uint64_t total) const {
  if (total <= split_bytes_) return total;
  uint64_t even = total / (static_cast<uint64_t>(nsocks_) * kPiecesPerSocket);
  return std::max(split_bytes_, std::min(even, kMaxPiece));
}

bool Endpoint::next_piece(OutPiece& piece) {
  if (!go_aheads_.empty()) {
    piece = OutPiece{.header = {.kind = static_cast<uint32_t>(wire::PieceKind::kCts), .seq = go_aheads_.front()}};
    go_aheads_.pop_front();
    return true;
  }
  if (!unsent_.empty()) {
    Request& send = *unsent_.front();
    if (!send.send.rendezvous) {
      carve(unsent_, piece);
      return true;
    }
    piece = OutPiece{.header = {.kind = static_cast<uint32_t>(wire::PieceKind::kRts),
                                .tag = send.tag(),
                                .seq = send.send.seq,
                                .total = send.len()}};
    announced_.emplace(send.send.seq, &send);
    unsent_.pop_front();
    return true;
  }
  if (!cleared_.empty()) {
    carve(cleared_, piece);
    return true;
  }
  return false;
}

// The next piece of the send at the front of `queue`, which lets go of the
// send once every byte is handed out.
void Endpoint::carve(std::deque<Request*>& queue, OutPiece& piece) {
  Request& send = *queue.front();
  Request::SendProgress& progress = send.send;
  uint64_t length = std::min<uint64_t>(progress.piece_bytes, send.len() - progress.carved);
  piece = OutPiece{.header = {.kind = static_cast<uint32_t>(wire::PieceKind::kData),
                              .length = static_cast<uint32_t>(length),
                              .tag = send.tag(),
                              .seq = progress.seq,
                              .total = send.len(),
                              .offset = progress.carved},
                   .payload = send.buf() + progress.carved,
                   .request = &send};
  progress.carved += length;
  ++progress.in_flight;
  if (progress.carved == send.len()) queue.pop_front();
}

void Endpoint::piece_written(Request& send) {
  if (--send.send.in_flight == 0 && send.send.carved == send.len()) send.complete(send.len());
}

void Endpoint::cleared(uint64_t seq) {
  auto it = announced_.find(seq);
  if (it == announced_.end())
    throw LinkError(plugin::format("protocol error: go-ahead for message %llu, which waits for none",
                                   static_cast<unsigned long long>(seq)));
  cleared_.push_back(it->second);
  announced_.erase(it);
  flush_all();
}

void Endpoint::clear_to_send(uint64_t seq) {
  go_aheads_.push_back(seq);
  flush_all();
}

void Endpoint::flush_all() {
  for (auto& connection : connections_)
    if (connection->ready() && !connection->blocked()) connection->flush();
}

void Endpoint::connection_ready() {
  if (++ready_count_ == nsocks_) {
    state_ = State::kReady;
    net_.log(HCOMM_LOG_INFO, format("tcp: connected to %s with %d sockets", name_.c_str(), nsocks_));
  }
  flush_all();
}

void Endpoint::connection_retrying() { net_.retry_later(*this); }

void Endpoint::peer_closed_socket() {
  if (++bye_count_ < nsocks_) return;
  if (state_ == State::kFailed) return;
  // Every byte the peer sent is in: its messages stay receivable.
  state_ = State::kPeerClosed;
  error_code_ = HCOMM_ERR_REMOTE;
  error_text_ = format("tcp: %s closed its endpoint", name_.c_str());
  fail_sends(error_code_, error_text_);
  matcher_.peer_closed(error_code_, error_text_);
  net_.log(HCOMM_LOG_DEBUG, error_text_);
}

void Endpoint::fail_sends(hcomm_result_t code, const std::string& text) {
  for (Request* send : unsent_) send->fail(code, text);
  for (auto& [seq, send] : announced_) send->fail(code, text);
  for (Request* send : cleared_) send->fail(code, text);
  unsent_.clear();
  announced_.clear();
  cleared_.clear();
  go_aheads_.clear();
  for (auto& connection : connections_) connection->close(code, text);
}

// A lost link is reported (progress fails) only when a request of this rank
// waited on it: a peer that finished its part and exited, its last
// messages here, is no error until something more is asked of it.
void Endpoint::fail(hcomm_result_t code, const std::string& text, bool report) {
  if (state_ == State::kFailed) return;
  const bool sends_waiting = !unsent_.empty() || !announced_.empty() || !cleared_.empty();
  state_ = State::kFailed;
  error_code_ = code;
  error_text_ = text;
  fail_sends(code, text);
  const bool receives_waiting = matcher_.peer_closed(code, text);
  if (report && (sends_waiting || receives_waiting)) {
    net_.log(HCOMM_LOG_INFO, text);
    net_.report_lost(text);
  } else if (report) {
    net_.log(HCOMM_LOG_DEBUG, text);
  }
}

}  // namespace hcomm::tcp
