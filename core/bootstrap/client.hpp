// A rank's side of the rendezvous: one connection to the root service that
// carries its hello, its all-gathers and the root's failure notices.
#pragma once

#include <optional>
#include <string>

#include "core/bootstrap/bootstrap.hpp"
#include "core/bootstrap/socket.hpp"
#include "core/bootstrap/wire.hpp"
#include "core/common/error.hpp"

namespace hcomm::bootstrap {

struct ClientOptions {
  Endpoint root;
  std::string root_text;  // the rendezvous as the user gave it, for messages
  Secret secret{};
  int rank = 0;
  int nranks = 1;
  double timeout_s = 30;
  bool hosts_rendezvous = false;  // this process runs the root service too
  Locality locality;
};

// Not thread-safe: one thread at a time uses a bootstrap.
class RendezvousClient final : public Bootstrap {
 public:
  // Connects (retrying until HCOMM_TIMEOUT while the root is not up yet, or
  // drops the connection before admitting this rank), proves the job's
  // secret and returns once every rank has joined.
  explicit RendezvousClient(const ClientOptions& options);
  // Without close() the connection drops without goodbye, and the other
  // ranks are told that this one failed: the right news when an exception
  // unwinds a rank.
  ~RendezvousClient() override = default;

  int rank() const override { return options_.rank; }
  int size() const override { return options_.nranks; }
  Locality locality() const override { return options_.locality; }
  void allgather(const void* mine, size_t len, void* all) override;
  void barrier() override { allgather(nullptr, 0, nullptr); }
  int failed_peer() override;
  void close() override;
  std::array<uint8_t, 16> derive_key(const void* context, size_t len) const override;
  void report_stall(const std::vector<int>& waits_on, double judge_after_s) override;
  std::optional<std::vector<int>> held_up_by() override;

 private:
  // The root answers within its own deadline; the client waits a little
  // longer so that the root's message, which names the late ranks, wins.
  Deadline reply_deadline() const { return Deadline::after(options_.timeout_s + kReplyGraceS); }
  // One attempt to be admitted: false when the root closed the connection
  // before admitting or refusing this rank.
  bool try_join(const Deadline& deadline);
  // Hello, challenge, proofs and welcome (wire.hpp).
  void handshake();
  // `what` names the message in errors ("hello", "allgather contribution").
  void send_bytes(const void* data, size_t len, const char* what);
  // Reads frames until one of type `expected`; notices on the way are recorded.
  Bytes await(FrameType expected, const char* waiting_for);
  // Reads whatever notices have arrived, without waiting.
  void read_notices();
  void on_notice();
  void on_root_lost();
  // The error for a frame longer than the reader takes.
  std::string too_long() const;
  void record(hcomm_result_t code, const std::string& text);
  [[noreturn]] void fail(hcomm_result_t code, const std::string& text);
  void throw_if_broken() const;

  static constexpr double kReplyGraceS = 2;
  static constexpr double kGoodbyeLingerS = 2;

  ClientOptions options_;
  Fd fd_;
  FrameReader reader_{kMaxNoticeBytes};  // longer while an all-gather's result is due
  bool welcomed_ = false;                // admitted by the root
  bool dropped_ = false;                 // the root closed the connection before admitting or refusing
  bool joined_ = false;                  // every rank was admitted
  int host_rank_ = -1;  // the rank whose process serves the rendezvous, or -1
  int failed_peer_ = -1;
  std::optional<std::vector<int>> held_up_by_;  // the root's answer to a stall report
  std::optional<Error> error_;  // once set, every call throws it
  bool closed_ = false;
};

}  // namespace hcomm::bootstrap
