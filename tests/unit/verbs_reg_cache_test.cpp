// The verbs registration cache with a fake register function: hits inside a
// registration, overlaps, growth over unused neighbours, reference counts,
// the budget for unused registrations (least recently used out first), and
// invalidation of memory given back.
#if HCOMM_HAVE_VERBS
#include <gtest/gtest.h>

#include <map>
#include <stdexcept>
#include <utility>

#include "plugins/transport/verbs/reg_cache.hpp"

namespace hcomm::verbs {
namespace {

constexpr size_t kPage = 4096;
constexpr uintptr_t kBase = 0x10000000;

// Records live registrations; keys count up from 1.
struct FakeDevice {
  std::map<uint32_t, std::pair<uintptr_t, size_t>> live;  // by lkey
  uint32_t next = 1;
  int registrations = 0;
  bool refuse = false;

  RegCache cache(size_t keep_bytes) {
    return RegCache(
        [this](uintptr_t start, size_t bytes) {
          if (refuse) throw std::runtime_error("refused");
          ++registrations;
          uint32_t k = next++;
          live[k] = {start, bytes};
          return MemoryKey{.handle = nullptr, .lkey = k, .rkey = k + 1000};
        },
        [this](const MemoryKey& key) {
          EXPECT_EQ(live.erase(key.lkey), 1u) << "deregistered twice or never registered: " << key.lkey;
        },
        keep_bytes, kPage);
  }
};

const void* at(uintptr_t offset) { return reinterpret_cast<const void*>(kBase + offset); }

TEST(VerbsRegCache, MissRegistersWholePagesAndHitReuses) {
  FakeDevice dev;
  {
    RegCache cache = dev.cache(1 << 20);
    const RegCache::Entry* a = cache.acquire(at(100), 5000);
    EXPECT_EQ(a->start, kBase);
    EXPECT_EQ(a->end, kBase + 2 * kPage);
    EXPECT_EQ(a->key.rkey, a->key.lkey + 1000);
    const RegCache::Entry* b = cache.acquire(at(2 * kPage - 8), 8);  // inside: a hit
    EXPECT_EQ(a, b);
    EXPECT_EQ(a->refs, 2);
    EXPECT_EQ(dev.registrations, 1);
    cache.release(a);
    cache.release(b);
    EXPECT_EQ(dev.live.size(), 1u);  // unused but within the budget: kept
    const RegCache::Entry* c = cache.acquire(at(0), kPage);
    EXPECT_EQ(c, a);
    EXPECT_EQ(dev.registrations, 1);
    RegCache::Stats s = cache.stats();
    EXPECT_EQ(s.hits, 2u);
    EXPECT_EQ(s.misses, 1u);
    cache.release(c);
  }
  EXPECT_TRUE(dev.live.empty());  // the cache deregisters everything on the way out
}

TEST(VerbsRegCache, OverlapGrowsOverUnusedButNotOverUsed) {
  FakeDevice dev;
  RegCache cache = dev.cache(1 << 20);
  const RegCache::Entry* a = cache.acquire(at(0), kPage);
  cache.release(a);
  const RegCache::Entry* b = cache.acquire(at(3 * kPage), kPage);
  cache.release(b);
  // Spans past both: one registration replaces them.
  const RegCache::Entry* c = cache.acquire(at(kPage / 2), 3 * kPage);
  EXPECT_EQ(c->start, kBase);
  EXPECT_EQ(c->end, kBase + 4 * kPage);
  EXPECT_EQ(dev.live.size(), 1u);
  EXPECT_EQ(cache.stats().entries, 1u);
  // A transfer reaching beyond a registration in use gets its own, overlapping one.
  const RegCache::Entry* d = cache.acquire(at(3 * kPage), 2 * kPage);
  EXPECT_NE(c, d);
  EXPECT_EQ(d->start, kBase + 3 * kPage);
  EXPECT_EQ(d->end, kBase + 5 * kPage);
  EXPECT_EQ(dev.live.size(), 2u);
  // The smallest covering registration serves a transfer both cover.
  const RegCache::Entry* e = cache.acquire(at(3 * kPage + 10), 10);
  EXPECT_EQ(e, d);
  cache.release(c);
  cache.release(d);
  cache.release(e);
}

TEST(VerbsRegCache, UnusedBeyondBudgetGoLeastRecentlyUsedFirst) {
  FakeDevice dev;
  RegCache cache = dev.cache(2 * kPage);
  const RegCache::Entry* a = cache.acquire(at(0), kPage);
  const RegCache::Entry* b = cache.acquire(at(10 * kPage), kPage);
  const RegCache::Entry* c = cache.acquire(at(20 * kPage), kPage);
  uint32_t ka = a->key.lkey, kb = b->key.lkey, kc = c->key.lkey;
  cache.release(a);
  cache.release(b);
  EXPECT_EQ(dev.live.size(), 3u);
  cache.release(c);  // three unused pages, two fit: a (least recent) goes
  EXPECT_EQ(dev.live.count(ka), 0u);
  EXPECT_EQ(dev.live.count(kb), 1u);
  EXPECT_EQ(dev.live.count(kc), 1u);
  const RegCache::Entry* b2 = cache.acquire(at(10 * kPage), 1);  // b becomes most recent
  cache.release(b2);
  const RegCache::Entry* d = cache.acquire(at(30 * kPage), kPage);
  cache.release(d);  // c is now the least recent
  EXPECT_EQ(dev.live.count(kc), 0u);
  EXPECT_EQ(dev.live.count(kb), 1u);
  EXPECT_EQ(cache.stats().unused_bytes, 2 * kPage);
  EXPECT_EQ(cache.stats().evictions, 2u);
}

TEST(VerbsRegCache, NoBudgetDeregistersWhenTheLastUseEnds) {
  FakeDevice dev;
  RegCache cache = dev.cache(0);
  const RegCache::Entry* a = cache.acquire(at(0), 3 * kPage + 1);
  const RegCache::Entry* b = cache.acquire(at(kPage), kPage);
  EXPECT_EQ(a, b);
  cache.release(a);
  EXPECT_EQ(dev.live.size(), 1u);  // still in use once
  cache.release(b);
  EXPECT_TRUE(dev.live.empty());
  const RegCache::Entry* c = cache.acquire(at(0), 1);
  EXPECT_EQ(dev.registrations, 2);
  cache.release(c);
}

TEST(VerbsRegCache, InvalidateDropsUnusedNowAndUsedAtRelease) {
  FakeDevice dev;
  RegCache cache = dev.cache(1 << 20);
  const RegCache::Entry* used = cache.acquire(at(0), kPage);
  const RegCache::Entry* unused = cache.acquire(at(8 * kPage), kPage);
  cache.release(unused);
  const RegCache::Entry* far = cache.acquire(at(64 * kPage), kPage);
  cache.release(far);
  EXPECT_EQ(cache.invalidate(at(kPage / 2), 9 * kPage), 2u);
  EXPECT_EQ(dev.live.size(), 2u);  // the used one waits for its release
  // A stale registration is never found again: the same range registers anew.
  const RegCache::Entry* again = cache.acquire(at(0), 16);
  EXPECT_NE(again, used);
  EXPECT_EQ(dev.live.size(), 3u);
  cache.release(used);
  EXPECT_EQ(dev.live.size(), 2u);
  cache.release(again);
  EXPECT_EQ(cache.invalidate(at(0), 1 << 30), 2u);
  EXPECT_TRUE(dev.live.empty());
}

TEST(VerbsRegCache, FailedRegistrationChangesNothing) {
  FakeDevice dev;
  RegCache cache = dev.cache(1 << 20);
  const RegCache::Entry* a = cache.acquire(at(0), kPage);
  cache.release(a);
  dev.refuse = true;
  EXPECT_THROW(cache.acquire(at(0), 2 * kPage), std::runtime_error);  // would have grown over a
  EXPECT_EQ(dev.live.size(), 1u);
  dev.refuse = false;
  EXPECT_EQ(cache.acquire(at(10), 10), a);  // a is still there
  cache.release(a);
}

}  // namespace
}  // namespace hcomm::verbs
#endif
