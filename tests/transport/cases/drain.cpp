#include "../payload.hpp"
#include "../transfers.hpp"
#include "cases.hpp"

namespace hcomm::tcheck {

namespace {

constexpr double kDetectLimit = 2.0;  // seconds from the close to the error on a receive nothing answers
constexpr size_t kSizes[] = {0, 1000};
constexpr uint64_t kTag = 0xD1A1;
constexpr auto kByeTime = std::chrono::milliseconds(200);

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
    std::vector<SendBuffer> sends;
    for (int peer = 0; peer < closer; ++peer)
      for (size_t i = 0; i < std::size(kSizes); ++i) sends.emplace_back(Payload(ctx.rank, peer, i, kSizes[i]));
    for (int peer = 0, at = 0; peer < closer; ++peer)
      for (size_t i = 0; i < std::size(kSizes); ++i, ++at) set.send(peer, sends[at].data(), kSizes[i], kTag);
    set.complete();
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
  std::vector<ReceiveBuffer> receives;
  for (size_t size : kSizes) receives.emplace_back(size + 64);
  for (size_t i = 0; i < std::size(kSizes); ++i) set.recv(closer, receives[i].data(), kSizes[i] + 64, kTag, kSizes[i]);
  set.complete();
  for (size_t i = 0; i < std::size(kSizes); ++i) {
    std::string wrong = receives[i].check(Payload(closer, ctx.rank, i, kSizes[i]));
    if (!wrong.empty())
      TCHECK_FAIL("message %zu (%zu bytes) from rank %d, received after it closed: %s", i, kSizes[i], closer,
                  wrong.c_str());
  }

  s.phase("drain: a receive nothing answers");
  ReceiveBuffer extra(64);
  Transfer& orphan = set.recv(closer, extra.data(), 64, kTag, 0);
  Clock::time_point posted = Clock::now();
  set.settle(Deadline::after(kDetectLimit + 1).min(s.deadline()));
  if (!orphan.done)
    TCHECK_FAIL("a receive from rank %d, which closed its endpoint, still pending after %.0f s", closer,
                kDetectLimit + 1);
  if (orphan.status != HCOMM_ERR_REMOTE)
    TCHECK_FAIL("a receive from rank %d, which closed its endpoint: %s, expected HCOMM_ERR_REMOTE", closer,
                describe_error(orphan.status, orphan.error).c_str());
  if (seconds_between(posted, orphan.ended) > kDetectLimit)
    TCHECK_FAIL("a receive from rank %d, which closed its endpoint, failed after %.2f s (limit %.0f s)", closer,
                seconds_between(posted, orphan.ended), kDetectLimit);
  if (ctx.rank == 0) ctx.note(format("after the close: \"%s\"", orphan.error.c_str()));
  s.barrier_polling("drain: received");
  s.close();
  s.finalize();
}

}  // namespace hcomm::tcheck
