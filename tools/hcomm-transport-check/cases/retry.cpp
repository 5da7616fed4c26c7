#include "../payload.hpp"
#include "../transfers.hpp"
#include "cases.hpp"
#include "exchange.hpp"

namespace hcomm::tcheck {

namespace {

constexpr size_t kBurst = 500;  // messages per pair and direction, all in flight at once
constexpr size_t kMaxSize = 64 * 1024;
constexpr uint64_t kTag = 0x42;  // one tag: the burst must also match in posting order

size_t burst_size(uint64_t seed, int sender, int receiver, size_t index) {
  return 1 + mix(mix(seed, static_cast<uint64_t>(sender * kMaxRanks + receiver)), index) % kMaxSize;
}

}  // namespace

// Posts far more than a transport keeps in flight comfortably; a plugin out of
// resources answers with a null request, which the TransferSet retries.
void run_retry(RankContext& ctx) {
  RankTransport& s = ctx.transport;
  s.start();
  std::vector<int> peers = peers_of(s);
  std::vector<std::vector<SendBuffer>> sends(peers.size());
  std::vector<std::vector<ReceiveBuffer>> receives(peers.size());
  for (size_t p = 0; p < peers.size(); ++p) {
    for (size_t i = 0; i < kBurst; ++i) {
      sends[p].emplace_back(Payload(ctx.rank, peers[p], i, burst_size(ctx.seed, ctx.rank, peers[p], i)));
      receives[p].emplace_back(burst_size(ctx.seed, peers[p], ctx.rank, i));
    }
  }
  TransferSet set(s);
  auto post_receives = [&](size_t from, size_t to) {
    for (size_t i = from; i < to; ++i)
      for (size_t p = 0; p < peers.size(); ++p)
        set.recv(peers[p], receives[p][i].data(), receives[p][i].capacity(), kTag, receives[p][i].capacity());
  };
  s.phase("retry: posting the burst");
  post_receives(0, kBurst / 2);
  for (size_t i = 0; i < kBurst; ++i)
    for (size_t p = 0; p < peers.size(); ++p) set.send(peers[p], sends[p][i].data(), sends[p][i].size(), kTag);
  post_receives(kBurst / 2, kBurst);
  s.phase("retry: completing the burst");
  set.complete();
  for (size_t p = 0; p < peers.size(); ++p) {
    for (size_t i = 0; i < kBurst; ++i) {
      std::string wrong = receives[p][i].check(Payload(peers[p], ctx.rank, i, receives[p][i].capacity()));
      if (!wrong.empty()) TCHECK_FAIL("burst message %zu from rank %d: %s", i, peers[p], wrong.c_str());
    }
  }
  if (ctx.rank == 0) ctx.note(format("%zu messages per pair in flight at once", kBurst));
  s.finish();
}

}  // namespace hcomm::tcheck
