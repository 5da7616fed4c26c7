#include <signal.h>
#include <unistd.h>

#include <thread>

#include "../payload.hpp"
#include "../transfers.hpp"
#include "cases.hpp"

namespace hcomm::tcheck {

namespace {

constexpr double kDetectLimit = 2.0;  // seconds from the close to the error on a receive nothing answers
constexpr size_t kSizes[] = {0, 1000};
constexpr uint64_t kTag = 0xD1A1;
constexpr auto kByeTime = std::chrono::milliseconds(200);
// How long survivors only progress before testing: past any liveness check.
constexpr auto kDeathNoticed = std::chrono::milliseconds(500);

// Message i of kSizes to every rank below `me`, until the sends complete.
void send_to_lower_ranks(TransferSet& set, int me) {
  std::vector<SendBuffer> sends;
  for (int peer = 0; peer < me; ++peer)
    for (size_t i = 0; i < std::size(kSizes); ++i) sends.emplace_back(Payload(me, peer, i, kSizes[i]));
  for (int peer = 0, at = 0; peer < me; ++peer)
    for (size_t i = 0; i < std::size(kSizes); ++i, ++at) set.send(peer, sends[at].data(), kSizes[i], kTag);
  set.complete();
}

// Receives for message i of kSizes from `from`, with room to spare.
std::vector<ReceiveBuffer> post_receives(TransferSet& set, int from) {
  std::vector<ReceiveBuffer> receives;
  for (size_t size : kSizes) receives.emplace_back(size + 64);
  for (size_t i = 0; i < std::size(kSizes); ++i) set.recv(from, receives[i].data(), kSizes[i] + 64, kTag, kSizes[i]);
  return receives;
}

void check_received(const std::vector<ReceiveBuffer>& receives, int from, int me, const char* when) {
  for (size_t i = 0; i < std::size(kSizes); ++i) {
    std::string wrong = receives[i].check(Payload(from, me, i, kSizes[i]));
    if (!wrong.empty())
      TCHECK_FAIL("message %zu (%zu bytes) from rank %d, %s: %s", i, kSizes[i], from, when, wrong.c_str());
  }
}

// A receive from `from` that nothing answers must fail with
// HCOMM_ERR_REMOTE within kDetectLimit; `why` says what `from` did.
void expect_orphan_fails(RankContext& ctx, TransferSet& set, int from, const char* why) {
  RankTransport& s = ctx.transport;
  ReceiveBuffer extra(64);
  Transfer& orphan = set.recv(from, extra.data(), 64, kTag, 0);
  Clock::time_point posted = Clock::now();
  set.settle(Deadline::after(kDetectLimit + 1).min(s.deadline()));
  if (!orphan.done)
    TCHECK_FAIL("a receive from rank %d, which %s, still pending after %.0f s", from, why, kDetectLimit + 1);
  if (orphan.status != HCOMM_ERR_REMOTE)
    TCHECK_FAIL("a receive from rank %d, which %s: %s, expected HCOMM_ERR_REMOTE", from, why,
                describe_error(orphan.status, orphan.error).c_str());
  if (seconds_between(posted, orphan.ended) > kDetectLimit)
    TCHECK_FAIL("a receive from rank %d, which %s, failed after %.2f s (limit %.0f s)", from, why,
                seconds_between(posted, orphan.ended), kDetectLimit);
  if (ctx.rank == 0) ctx.note(format("after it %s: \"%s\"", why, orphan.error.c_str()));
}

}  // namespace

// The last rank sends small messages to every peer, sees the sends complete
// and closes its endpoints; only then do the peers post their receives. Each
// must still get every message, byte for byte (a communicator's last
// messages race with its destruction), and a receive beyond them must fail
// with HCOMM_ERR_REMOTE, not hang.
void run_drain(RankContext& ctx) {
  RankTransport& s = ctx.transport;
  const int closer = ctx.nranks - 1;
  s.start();
  TransferSet set(s);
  if (ctx.rank == closer) {
    s.phase("drain: sending, then closing the endpoints");
    send_to_lower_ranks(set, ctx.rank);
    set.barrier();
    s.close_endpoints();
    s.barrier_polling("drain: endpoints closed");
    s.barrier_polling("drain: waiting for the peers to receive");
    s.close();
    s.finalize();
    return;
  }
  set.barrier();
  s.barrier_polling("drain: waiting for the close");
  set.poll_for(kByeTime);

  s.phase("drain: receiving what the closed rank sent");
  std::vector<ReceiveBuffer> receives = post_receives(set, closer);
  set.complete();
  check_received(receives, closer, ctx.rank, "received after it closed");

  s.phase("drain: a receive nothing answers");
  expect_orphan_fails(ctx, set, closer, "closed its endpoint");
  s.barrier_polling("drain: received");
  s.close();
  s.finalize();
}

namespace {

// The peers post their receives; the last rank sends to each, sees the sends
// complete and is killed (a rank that finished its part and vanished). Every
// receive must still succeed, byte for byte, and a further receive fail with
// HCOMM_ERR_REMOTE.
//   sent-then-died: the peers only progress until its death is known
//   everywhere, and only then test; progress must not report the death as
//   an error while nothing waits on the dead rank.
//   sent-then-reset: no rank reads between its sends and its death, and the
//   peers have sent it a message it never read: a socket closed with unread
//   data answers with a reset, which then reaches the peers behind the dead
//   rank's messages (what arrived before an error is delivered).
void sent_then_killed(RankContext& ctx, const std::string& name, bool reset) {
  RankTransport& s = ctx.transport;
  SharedBarrier& quiet = s.shared().barrier;  // waits that progress nothing
  const int victim = ctx.nranks - 1;
  s.start();
  TransferSet set(s);
  std::vector<ReceiveBuffer> receives;
  if (ctx.rank != victim) receives = post_receives(set, victim);
  s.barrier_polling(name + ": receives posted");
  if (ctx.rank == victim) {
    s.phase(name + ": sending, then dying");
    send_to_lower_ranks(set, ctx.rank);
    if (reset) {
      quiet.wait(s.deadline());  // its sends are complete
      quiet.wait(s.deadline());  // the peers' messages to it are on their way
    }
    ::raise(SIGKILL);
    ::_exit(1);
  }
  TransferSet unread(s);
  SendBuffer message(Payload(ctx.rank, victim, 0, kSizes[1]));
  if (reset) {
    quiet.wait(s.deadline());
    s.phase(name + ": sending to the rank that will not read it");
    unread.send(victim, message.data(), kSizes[1], kTag);
    quiet.wait(s.deadline());
    std::this_thread::sleep_for(kDeathNoticed);
  } else {
    s.phase(name + ": progressing while the sender dies");
    for (const Clock::time_point end = Clock::now() + kDeathNoticed; Clock::now() < end;) s.progress();
  }
  s.phase(name + ": testing the receives");
  set.complete();
  check_received(receives, victim, ctx.rank, "sent before it died");
  s.phase(name + ": a receive nothing answers");
  expect_orphan_fails(ctx, set, victim, "died");
  unread.settle(Deadline::after(kDetectLimit).min(s.deadline()));
  s.phase(name + ": waiting for the other survivors");
  s.shared().survivors.wait(s.deadline());
  s.close();
  s.finalize();
}

}  // namespace

void run_sent_then_died(RankContext& ctx) { sent_then_killed(ctx, "sent-then-died", false); }
void run_sent_then_reset(RankContext& ctx) { sent_then_killed(ctx, "sent-then-reset", true); }

}  // namespace hcomm::tcheck
