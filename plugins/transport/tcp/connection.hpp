// One socket of an endpoint: its set-up (connect or accept side, then the
// hello exchange), the pieces it writes and the pieces it reads.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>

#include "matcher.hpp"
#include "poller.hpp"
#include "request.hpp"
#include "socket.hpp"
#include "wire.hpp"

namespace hcomm::tcp {

class Endpoint;

// A piece queued on a socket: the header, then header.length bytes at payload.
struct OutPiece {
  wire::PieceHeader header{};
  const std::byte* payload = nullptr;
  Request* request = nullptr;
};

class Connection final : public EventHandler {
 public:
  Connection(Endpoint& endpoint, int index);
  ~Connection() override;
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Connecting side: a non-blocking connect; a refused one is tried again
  // after a short, growing pause (the peer may not listen yet).
  void start_connect();
  bool retry_due(Clock::time_point now) const { return state_ == State::kRetryWait && now >= retry_at_; }
  std::optional<Clock::time_point> retry_time() const;
  // Accepting side: the socket whose handshake named this connection.
  void adopt(Socket socket);

  bool has_socket() const { return socket_.valid(); }
  bool ready() const { return state_ == State::kReady; }
  // The kernel's send buffer is full: writing waits for the socket to drain.
  bool blocked() const { return tx_blocked_; }

  // Takes pieces from the endpoint and writes until the socket is full.
  void flush();
  // At close, best effort: tells the peer that nothing more comes, when the
  // stream is between pieces.
  void say_bye();
  // Drops the socket; queued sends fail with `text`.
  void close(hcomm_result_t code, const std::string& text);

  void on_events(uint32_t events) override;

 private:
  // The connecting side goes through the handshake (wire.hpp); the
  // accepting side's Acceptor has done it before adopt.
  enum class State { kIdle, kRetryWait, kConnecting, kSendHello, kRecvChallenge, kSendProof, kReady, kClosed };
  enum class Rx { kHeader, kPayload };

  void handle(uint32_t events);
  void finish_connect();
  void connect_failed(int error);
  void start_hello();
  // Moves what is left of a handshake message; true once all of it moved.
  bool send_handshake(const void* message, size_t size);
  bool recv_handshake(void* message, size_t size);
  void send_hello();
  void recv_challenge();
  // Checks the acceptor's proof and makes this side's.
  void check_challenge();
  void send_proof();
  void became_ready();

  void refill();
  void sent(size_t bytes);
  void set_blocked(bool blocked);

  void read_pieces(size_t budget);
  void read_then_fail();
  void take(size_t bytes);
  void start_piece();

  void watch();
  void drop_socket();

  Endpoint& endpoint_;
  const int index_;
  State state_ = State::kIdle;
  Socket socket_;
  uint32_t watched_ = 0;
  bool registered_ = false;
  Clock::time_point retry_at_{};
  std::chrono::milliseconds backoff_{1};
  wire::Hello hello_{};
  wire::Challenge challenge_{};
  wire::Proof proof_{};
  size_t handshake_done_ = 0;  // bytes of the current handshake message moved

  std::deque<OutPiece> tx_;
  size_t tx_bytes_ = 0;      // header and payload bytes queued
  size_t tx_head_done_ = 0;  // of the first queued piece, already written
  bool tx_blocked_ = false;

  Rx rx_ = Rx::kHeader;
  wire::PieceHeader rx_header_{};  // the next header, as it comes in
  size_t rx_header_done_ = 0;
  wire::PieceHeader rx_piece_{};  // the piece being read
  InMessage* rx_message_ = nullptr;
  uint64_t rx_done_ = 0;  // payload bytes of rx_piece_ read
  std::array<std::byte, 4096> discard_;  // where the bytes of a dropped message are read
};

}  // namespace hcomm::tcp
