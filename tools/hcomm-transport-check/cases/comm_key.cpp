#include <sched.h>

#include <cstring>
#include <vector>

#include "../payload.hpp"
#include "../transfers.hpp"
#include "cases.hpp"
#include "exchange.hpp"

namespace hcomm::tcheck {

namespace {

constexpr int kRealKey = 0;
constexpr int kStrayKey = 1;
constexpr double kStrayWindow = 1.0;  // seconds the strays get to break in
constexpr size_t kMessage = 4096;
constexpr uint64_t kTag = 0x57A7;
constexpr uint64_t kStrayMessageId = 1;
constexpr uint64_t kRealMessageId = 2;

// A second net in this process, opened with another communicator's key, that
// claims to be this rank and connects to the peers' real nets. The transport
// may refuse it anywhere (connect, ep_ready, isend, test, progress); all it
// must not do is let it in. Calls go to the plugin directly: its errors are
// expected here, not failures.
class StrayNet {
 public:
  StrayNet(RankTransport& transport, int key_index) : s_(transport) {
    hcomm_transport_open_args_t args{};
    args.size = sizeof args;
    args.rank = s_.rank();
    args.nranks = s_.nranks();
    std::memcpy(args.comm_key, s_.shared().comm_keys[key_index], sizeof args.comm_key);
    s_.require("open (a second net, with another key)", [&] { return s_.api().open(s_.context(), &args, &net_); });
  }

  void connect_to_real_nets() {
    for (int peer : peers_of(s_)) {
      const RankSlot& theirs = s_.shared().slots[peer];
      void* ep = nullptr;
      std::string text;
      hcomm_result_t rc =
          s_.call([&] { return s_.api().connect(net_, peer, theirs.address, theirs.address_len, &ep); }, &text);
      expect_text("connect", rc, text);
      if (rc == HCOMM_SUCCESS && ep) endpoints_.push_back({peer, ep});
    }
  }

  void send_to_all(const std::vector<SendBuffer>& payloads) {
    for (size_t i = 0; i < endpoints_.size(); ++i) {
      void* request = nullptr;
      std::string text;
      const SendBuffer& b = payloads[i];
      hcomm_result_t rc =
          s_.call([&] { return s_.api().isend(endpoints_[i].ep, b.data(), b.size(), kTag, &request); }, &text);
      expect_text("isend", rc, text);
      if (rc == HCOMM_SUCCESS && request) requests_.push_back(request);
    }
  }

  void poll() {
    std::string text;
    expect_text("progress", s_.call([&] { return s_.api().progress(net_); }, &text), text);
    std::erase_if(requests_, [&](void* request) {
      int done = 0;
      size_t bytes = 0;
      hcomm_result_t rc = s_.call([&] { return s_.api().test(request, &done, &bytes); }, &text);
      expect_text("test", rc, text);
      return rc != HCOMM_SUCCESS || done;
    });
  }

  // close frees the endpoints and the requests still pending.
  void close() {
    s_.require("close of the second net", [&] { return s_.api().close(net_); });
  }

  size_t endpoints() const { return endpoints_.size(); }

 private:
  struct Endpoint {
    int peer;
    void* ep;
  };

  // A refusal is fine, a refusal without a reason is not.
  static void expect_text(const char* what, hcomm_result_t rc, const std::string& text) {
    if (rc != HCOMM_SUCCESS && text.empty())
      TCHECK_FAIL("%s on the net with the wrong key returned %s but set no error text", what, result_name(rc).c_str());
  }

  RankTransport& s_;
  void* net_ = nullptr;
  std::vector<Endpoint> endpoints_;
  std::vector<void*> requests_;
};

}  // namespace

void run_comm_key(RankContext& ctx) {
  RankTransport& s = ctx.transport;
  s.start(kRealKey);
  std::vector<int> peers = peers_of(s);

  // Receives on the real net that only the real peers may complete.
  TransferSet real(s);
  std::vector<ReceiveBuffer> receives;
  for (size_t i = 0; i < peers.size(); ++i) receives.emplace_back(kMessage);
  for (size_t i = 0; i < peers.size(); ++i) real.recv(peers[i], receives[i].data(), kMessage, kTag, kMessage);

  s.phase("comm-key: a net with another key connects to the real ones");
  StrayNet stray(s, kStrayKey);
  stray.connect_to_real_nets();
  std::vector<SendBuffer> stray_payloads;
  for (int peer : peers) stray_payloads.emplace_back(Payload(ctx.rank, peer, kStrayMessageId, kMessage));
  stray.send_to_all(stray_payloads);
  for (Deadline window = Deadline::after(kStrayWindow); !window.expired(); ::sched_yield()) {
    stray.poll();
    real.poll();
  }
  for (const Transfer& t : real.transfers())
    if (t.done)
      TCHECK_FAIL(
          "%s ended (%s, %zu bytes) before its real sender sent anything: the net with another key got in or broke the "
          "real connection",
          t.describe().c_str(), describe_error(t.status, t.error).c_str(), t.bytes);
  s.shared().barrier.wait_polling(s.deadline(), [&] {
    stray.poll();
    real.poll();
  });

  s.phase("comm-key: the real ranks send");
  std::vector<SendBuffer> real_payloads;
  for (int peer : peers) real_payloads.emplace_back(Payload(ctx.rank, peer, kRealMessageId, kMessage));
  for (size_t i = 0; i < peers.size(); ++i) real.send(peers[i], real_payloads[i].data(), kMessage, kTag);
  real.complete();
  for (size_t i = 0; i < peers.size(); ++i) {
    std::string wrong = receives[i].check(Payload(peers[i], ctx.rank, kRealMessageId, kMessage));
    if (!wrong.empty()) TCHECK_FAIL("message from rank %d on the real net: %s", peers[i], wrong.c_str());
  }
  if (ctx.rank == 0)
    ctx.note(format("the net with another key got %zu of %zu endpoints from connect; none got in", stray.endpoints(),
                    peers.size()));
  s.quiesce();
  stray.close();
  s.close();
  s.finalize();
}

}  // namespace hcomm::tcheck
