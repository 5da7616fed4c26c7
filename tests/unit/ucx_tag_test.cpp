// The UCX transport's tag layout (plugins/transport/ucx/tag.hpp): header
// only, without UCX, so it runs on every machine. Exactness below 2^b, the
// sender's rank, the communicator key and the control space.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <unordered_set>
#include <vector>

#include "plugins/transport/ucx/tag.hpp"

namespace hcomm::ucx {
namespace {

constexpr uint8_t kKeyA[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
constexpr uint8_t kKeyB[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 17};

// Collective tags as the executor makes them: [0][seq:23][match:24][chunk:16].
std::vector<uint64_t> collective_tags(uint32_t seqs) {
  std::vector<uint64_t> tags;
  for (uint64_t seq = 0; seq < seqs; ++seq)
    for (uint64_t match : {0ull, 1ull, 2ull, 77ull, (1ull << 24) - 1})
      for (uint64_t chunk : {0ull, 1ull, 3ull, 65535ull}) tags.push_back(seq << 40 | match << 16 | chunk);
  return tags;
}

// Point-to-point tags: [1][user tag:31][number:16][chunk:16].
std::vector<uint64_t> p2p_tags(uint32_t users) {
  std::vector<uint64_t> tags;
  for (uint64_t user = 0; user < users; ++user)
    for (uint64_t number : {0ull, 1ull, 9ull, 65535ull})
      for (uint64_t chunk : {0ull, 2ull, 65535ull}) tags.push_back(1ull << 63 | user << 32 | number << 16 | chunk);
  return tags;
}

// Distinct tags give distinct UCX tags for one sender.
void expect_distinct(const TagCodec& codec, int source, const std::vector<uint64_t>& tags) {
  std::unordered_set<uint64_t> seen;
  for (uint64_t tag : tags) {
    uint64_t ucx = codec.data(source, tag);
    EXPECT_TRUE(seen.insert(ucx).second) << "tag 0x" << std::hex << tag << " collides (UCX tag 0x" << ucx << ")";
  }
}

TEST(UcxTag, PayloadBitsShrinkWithTheRanks) {
  const std::pair<int, int> expected[] = {{1, 63}, {2, 62}, {3, 61},    {5, 60},    {7, 60},
                                          {8, 60}, {9, 59}, {1024, 53}, {1025, 52}, {1 << 20, 43}};
  for (auto [nranks, bits] : expected) EXPECT_EQ(TagCodec(kKeyA, nranks).payload_bits(), bits) << nranks << " ranks";
}

TEST(UcxTag, SourceRoundTrips) {
  for (int nranks : {1, 2, 3, 5, 7, 1000, (1 << 20) + 1}) {
    TagCodec codec(kKeyA, nranks);
    for (int source : {0, 1, nranks / 2, nranks - 1}) {
      if (source >= nranks) continue;
      for (uint64_t tag : {0ull, 1ull, 0x5A5Aull, ~0ull, 1ull << 63}) {
        EXPECT_EQ(codec.source(codec.data(source, tag)), source) << nranks << " ranks, tag " << tag;
        EXPECT_EQ(codec.data(source, tag) & TagCodec::kControlBit, 0u);
      }
      EXPECT_EQ(codec.source(codec.control(source, 1)), source);
    }
  }
}

TEST(UcxTag, ExactBelowTwoToTheB) {
  TagCodec codec(kKeyA, 5);  // b = 60
  std::vector<uint64_t> tags;
  for (uint64_t t = 0; t < 100000; ++t) tags.push_back(t);
  std::mt19937_64 random(7);
  for (int i = 0; i < 100000; ++i) tags.push_back(random() >> 4);  // below 2^60
  tags.push_back((1ull << 60) - 1);
  std::sort(tags.begin(), tags.end());
  tags.erase(std::unique(tags.begin(), tags.end()), tags.end());
  expect_distinct(codec, 3, tags);
}

// A permutation that lost a bit would merge tags that differ only there.
TEST(UcxTag, EveryPayloadBitCounts) {
  for (int nranks : {1, 2, 5, 1000}) {
    TagCodec codec(kKeyA, nranks);
    for (uint64_t tag : {0ull, 1ull, 0x123456789ull}) {
      std::vector<uint64_t> tags{tag};
      for (int bit = 0; bit < codec.payload_bits(); ++bit) tags.push_back(tag ^ (uint64_t{1} << bit));
      expect_distinct(codec, nranks - 1, tags);
    }
  }
}

TEST(UcxTag, CoreTagsStayDistinct) {
  for (int nranks : {2, 3, 7}) {
    TagCodec codec(kKeyA, nranks);
    std::vector<uint64_t> tags = collective_tags(3000);
    std::vector<uint64_t> p2p = p2p_tags(2000);
    tags.insert(tags.end(), p2p.begin(), p2p.end());
    // Collective sequence numbers whose top bits the payload cannot hold are folded.
    for (uint64_t seq = (1u << 23) - 500; seq < (1u << 23); ++seq) tags.push_back(seq << 40 | 5u << 16 | 1u);
    expect_distinct(codec, nranks - 1, tags);
  }
}

TEST(UcxTag, SendersNeverShareATag) {
  TagCodec codec(kKeyA, 7);
  std::unordered_set<uint64_t> seen;
  for (int source = 0; source < 7; ++source)
    for (uint64_t tag : {0ull, 1ull, 42ull, ~0ull})
      EXPECT_TRUE(seen.insert(codec.data(source, tag)).second) << "rank " << source << ", tag " << tag;
}

TEST(UcxTag, AnotherKeyGivesOtherTags) {
  TagCodec a(kKeyA, 4);
  TagCodec b(kKeyB, 4);
  std::unordered_set<uint64_t> real;
  for (uint64_t tag = 0; tag < 20000; ++tag) real.insert(a.data(1, tag));
  for (uint64_t tag = 0; tag < 20000; ++tag) EXPECT_FALSE(real.contains(b.data(1, tag))) << "tag " << tag;
  EXPECT_NE(a.control(1, 1), b.control(1, 1));
}

TEST(UcxTag, ControlMaskMatchesEveryRankAndNoData) {
  TagCodec codec(kKeyA, 5);
  const uint64_t mask = codec.any_source_mask();
  const uint64_t goodbye = codec.control(0, 1) & mask;
  for (int source = 0; source < 5; ++source) {
    EXPECT_EQ(codec.control(source, 1) & mask, goodbye) << "rank " << source;
    EXPECT_NE(codec.control(source, 2) & mask, goodbye) << "rank " << source;
    for (uint64_t tag : {0ull, 1ull, ~0ull}) EXPECT_NE(codec.data(source, tag) & mask, goodbye);
  }
}

}  // namespace
}  // namespace hcomm::ucx
