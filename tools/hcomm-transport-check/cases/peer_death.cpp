#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <vector>

#include "../payload.hpp"
#include "../transfers.hpp"
#include "cases.hpp"

namespace hcomm::tcheck {

namespace {

constexpr double kDetectLimit = 2.0;                // seconds from the kill to the error
constexpr double kObserveFor = kDetectLimit + 3.0;  // how long survivors watch, to tell late from never
constexpr size_t kReceiveBytes = size_t{1} << 20;
constexpr size_t kSendBytes = size_t{16} << 20;  // more than a socket or FIFO holds: stays in flight
constexpr uint64_t kTag = 0xDEAD;

// The text must say which peer died: "rank 3", "peer 3", "rank=3", "peer rank #3", ...
bool names_rank(const std::string& text, int rank) {
  std::string lower = text;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  std::string number = std::to_string(rank);
  for (const char* word : {"rank", "peer"}) {
    for (size_t at = lower.find(word); at != std::string::npos; at = lower.find(word, at + 1)) {
      size_t digits = at + 4;
      for (int skipped = 0; skipped < 3 && digits < lower.size() && std::strchr(" :=#", lower[digits]); ++skipped)
        ++digits;
      size_t after = digits + number.size();
      if (lower.compare(digits, number.size(), number) == 0 && (after == lower.size() || !std::isdigit(lower[after])))
        return true;
    }
  }
  return false;
}

void check_error(const std::string& what, hcomm_result_t status, const std::string& text, int victim) {
  if (status != HCOMM_ERR_REMOTE)
    TCHECK_FAIL("%s: %s after rank %d died, expected HCOMM_ERR_REMOTE", what.c_str(),
                describe_error(status, text).c_str(), victim);
  if (!names_rank(text, victim))
    TCHECK_FAIL("%s: the error text does not name the dead peer (rank %d): \"%s\"", what.c_str(), victim, text.c_str());
}

[[noreturn]] void die(RankTransport& s) {
  s.barrier_polling("peer-death: waiting for the survivors to post");
  s.shared().event_ns.store(to_ns(Clock::now()));
  ::raise(SIGKILL);
  ::_exit(1);  // unreachable: SIGKILL cannot be caught
}

// The last rank dies with SIGKILL while every other rank has a receive posted
// from it and a send to it in flight; each survivor must see HCOMM_ERR_REMOTE
// on them within kDetectLimit, with a text that names the rank. With
// `hello`, a message each way first, so that the death comes in the middle
// of a transfer; without, the victim dies as soon as its endpoints are
// ready and the survivors' first messages go to a dead peer (UCX 1.13 aborts
// a survivor whose endpoint is still in its wire-up then).
void run_death(RankContext& ctx, bool hello_first) {
  RankTransport& s = ctx.transport;
  int victim = ctx.nranks - 1;
  s.start();
  if (hello_first) {
    TransferSet hello(s);
    std::vector<uint64_t> out(ctx.nranks, 1), in(ctx.nranks, 0);
    for (int peer = 0; peer < ctx.nranks; ++peer) {
      if (peer == ctx.rank || (ctx.rank != victim && peer != victim)) continue;
      hello.recv(peer, &in[peer], sizeof in[peer], kTag + 1, sizeof in[peer]);
      hello.send(peer, &out[peer], sizeof out[peer], kTag + 1);
    }
    hello.complete();
  }
  if (ctx.rank == victim) die(s);

  TransferSet set(s);
  ReceiveBuffer from_victim(kReceiveBytes);
  SendBuffer to_victim(Payload(ctx.rank, victim, 0, kSendBytes));
  set.recv(victim, from_victim.data(), kReceiveBytes, kTag, kReceiveBytes);
  set.send(victim, to_victim.data(), kSendBytes, kTag);
  set.barrier();

  s.phase(format("peer-death: waiting for the error on rank %d's requests", victim));
  Deadline observe = Deadline::after(kObserveFor).min(s.deadline());
  set.settle(observe);
  Clock::time_point killed = from_ns(s.shared().event_ns.load());

  double detected = 0;
  for (const Transfer& t : set.transfers()) {
    if (!t.done)
      TCHECK_FAIL("%s: still pending %.1f s after rank %d died (limit %.0f s)", t.describe().c_str(),
                  seconds_since(killed), victim, kDetectLimit);
    if (t.kind == Transfer::Kind::kSend && !t.failed()) continue;  // it left before the death
    if (t.kind == Transfer::Kind::kRecv && !t.failed())
      TCHECK_FAIL("%s completed, but rank %d never sent anything", t.describe().c_str(), victim);
    check_error(t.describe(), t.status, t.error, victim);
    detected = std::max(detected, seconds_between(killed, t.ended));
  }
  if (set.progress_status() != HCOMM_SUCCESS)
    check_error("progress", set.progress_status(), set.progress_error(), victim);
  if (detected > kDetectLimit)
    TCHECK_FAIL("HCOMM_ERR_REMOTE came %.2f s after rank %d died (limit %.0f s)", detected, victim, kDetectLimit);
  if (ctx.rank == 0) {
    const Transfer& first = set.transfers().front();
    ctx.note(format("HCOMM_ERR_REMOTE after %.0f ms: \"%s\"", detected * 1e3, first.error.c_str()));
  }

  // Only the survivors remain: a survivor closing now would look like a second death to one still watching.
  s.phase("peer-death: waiting for the other survivors");
  s.shared().survivors.wait(s.deadline());
  s.close();
  s.finalize();
}

}  // namespace

void run_peer_death(RankContext& ctx) { run_death(ctx, true); }
void run_quiet_death(RankContext& ctx) { run_death(ctx, false); }

}  // namespace hcomm::tcheck
