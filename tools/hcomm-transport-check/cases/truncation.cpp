#include <algorithm>

#include "../payload.hpp"
#include "../transfers.hpp"
#include "cases.hpp"
#include "exchange.hpp"

namespace hcomm::tcheck {

namespace {

struct TruncationCase {
  const char* name;
  size_t message;
  size_t receive;      // shorter than the message
  bool after_arrival;  // the receive is posted once the message is there
};

constexpr TruncationCase kCases[] = {
    {"posted first", 1000, 999, false},
    {"large, posted first", (size_t{1} << 20) + 5, (size_t{1} << 20) + 4, false},
    {"posted after arrival", 100, 0, true},
};
constexpr uint64_t kTag = 0x7;
constexpr auto kArrivalTime = std::chrono::milliseconds(50);

// Every receive must fail with a code and a text; every send must end one way
// or the other, so that the sender cannot hang.
void check_outcome(const TransferSet& set, const TruncationCase& c) {
  for (const Transfer& t : set.transfers()) {
    if (!t.done) TCHECK_FAIL("%s: %s did not end before the deadline", c.name, t.describe().c_str());
    if (t.kind != Transfer::Kind::kRecv) continue;
    if (!t.failed())
      TCHECK_FAIL("%s: %s completed (%zu bytes) though the message has %zu bytes: it must fail", c.name,
                  t.describe().c_str(), t.bytes, c.message);
    if (t.error.empty())
      TCHECK_FAIL("%s: %s failed with %s but set no error text", c.name, t.describe().c_str(),
                  result_name(t.status).c_str());
  }
}

void run_case(RankContext& ctx, const TruncationCase& c, int key_index, bool report) {
  RankTransport& s = ctx.transport;
  s.start(key_index);
  s.phase(format("truncation: %s", c.name));
  std::vector<int> peers = peers_of(s);
  std::vector<SendBuffer> sends;
  std::vector<ReceiveBuffer> receives;
  for (int peer : peers) {
    sends.emplace_back(Payload(ctx.rank, peer, 0, c.message));
    receives.emplace_back(c.receive);
  }
  TransferSet set(s);
  auto post_receives = [&] {
    for (size_t i = 0; i < peers.size(); ++i) set.recv(peers[i], receives[i].data(), c.receive, kTag, c.message);
  };
  if (!c.after_arrival) post_receives();
  for (size_t i = 0; i < peers.size(); ++i) set.send(peers[i], sends[i].data(), c.message, kTag);
  if (c.after_arrival) {
    set.barrier();
    set.poll_for(kArrivalTime);
    post_receives();
  }
  set.settle(s.deadline());
  check_outcome(set, c);
  if (ctx.rank == 0 && report) {
    const Transfer& first = *std::find_if(set.transfers().begin(), set.transfers().end(),
                                          [](const Transfer& t) { return t.kind == Transfer::Kind::kRecv; });
    ctx.note(format("%s: \"%s\"", result_name(first.status).c_str(), first.error.c_str()));
  }
  // The plugin may keep reporting the truncation from progress: not a failure here.
  set.barrier();
  s.close();
}

}  // namespace

// Each case runs on a fresh net: what a net does after a truncation is the
// plugin's choice, as long as it reports it and does not hang.
void run_truncation(RankContext& ctx) {
  static_assert(std::size(kCases) <= kNumCommKeys, "every net gets its own key");
  for (size_t i = 0; i < std::size(kCases); ++i) run_case(ctx, kCases[i], static_cast<int>(i), i == 0);
  ctx.transport.finalize();
}

}  // namespace hcomm::tcheck
