#include "cases.hpp"
#include "exchange.hpp"

namespace hcomm::tcheck {

namespace {

constexpr size_t kMiB = size_t{1} << 20;
constexpr size_t kSizes[] = {0, 1, 7, 4096, 65537, kMiB + 3, 16 * kMiB, 64 * kMiB};
// The largest size needs 2 x 64 MiB per peer and rank: only with 2 ranks.
constexpr size_t kTwoRanksOnly = 64 * kMiB;
constexpr uint64_t kTagBase = 0x5A5A000000000000ull;  // high bits set: tags are 64 bits wide

}  // namespace

void run_sizes(RankContext& ctx) {
  RankTransport& s = ctx.transport;
  s.start();
  uint64_t max_message = s.properties().max_message;
  std::string skipped;
  size_t largest = 0;
  for (size_t i = 0; i < std::size(kSizes); ++i) {
    size_t size = kSizes[i];
    if (size == kTwoRanksOnly && ctx.nranks != 2) continue;
    if (size > max_message) {
      skipped += format("%s%zu", skipped.empty() ? "" : ", ", size);
      continue;
    }
    s.phase(format("sizes: %zu bytes with every peer", size));
    exchange_with_all(s, size, kTagBase + i, i);
    largest = size;
  }
  if (ctx.rank == 0) ctx.note(format("0 B to %zu MiB, both ways with every peer at once", largest >> 20));
  if (ctx.rank == 0 && !skipped.empty())
    ctx.note(format("skipped sizes above max_message %llu: %s", static_cast<unsigned long long>(max_message),
                    skipped.c_str()));
  s.finish();
}

}  // namespace hcomm::tcheck
