// Every collective of every algorithm that the plugins register, checked
// against the serial reference over communicator sizes 1 to 9, 11, 16 and 17,
// counts 0, 1, 7, 37 (1100 on a few sizes), every root on small
// communicators, in place and not, four chunkings, int64 and float32 data
// (int64 sum, max, avg and prod, float32 sum for reductions; scan and exscan
// take the rank-order op in avg's place, which checks their operand order;
// 12-byte records with a commutative user op, and, where the algorithm keeps
// rank order for the collective, with one that does not commute) and four views
// of the communicator (plain, mapped with a large and a tiny window, windows
// without peer buffers). One test per (plugin, algorithm, collective); an
// algorithm may decline a case, but not all of them.
#include <gtest/gtest.h>

#include <cmath>

#include "algorithm_plugins.hpp"
#include "algorithm_run.hpp"
#include "algorithm_values.hpp"

namespace hcomm::algotest {
namespace {

const int kRankCounts[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 16, 17};
const uint64_t kCounts[] = {0, 1, 7, 37};
// Communicator sizes that also run a larger count: over 8 KiB of int64, where
// the direct algorithms read peers' buffers and publish in windows.
const int kLargeCountRanks[] = {3, 8};
constexpr uint64_t kLargeCount = 1100;
constexpr int kMaxFailedCases = 5;

// Workloads take turns from one case to the next.
const Workload kReductions[] = {{HCOMM_INT64, HCOMM_SUM},
                                {HCOMM_INT64, HCOMM_MAX},
                                {HCOMM_INT64, HCOMM_AVG},
                                {HCOMM_INT64, HCOMM_PROD},
                                {HCOMM_FLOAT32, HCOMM_SUM}};
const Workload kRankOrderReductions[] = {{HCOMM_INT64, HCOMM_SUM},
                                         {HCOMM_INT64, HCOMM_MAX},
                                         {HCOMM_INT64, kRankOrderOp},
                                         {HCOMM_INT64, HCOMM_PROD},
                                         {HCOMM_FLOAT32, HCOMM_SUM}};
const Workload kMoves[] = {{HCOMM_INT64, HCOMM_SUM}, {HCOMM_FLOAT32, HCOMM_SUM}, {kRecordDtype, HCOMM_SUM}};

// The reductions an algorithm runs for its collective: the built-in ones
// (the rank-order op's in avg's place for scan and exscan) and records
// (opaque 12-byte elements, cut only whole) with a commutative user op;
// with one that does not commute where it keeps rank order.
std::vector<Workload> reductions(const AlgorithmEntry& entry) {
  const bool rank_order = coll_traits(entry.coll)->rank_order;
  std::vector<Workload> out = rank_order
                                  ? std::vector<Workload>(std::begin(kRankOrderReductions), std::end(kRankOrderReductions))
                                  : std::vector<Workload>(std::begin(kReductions), std::end(kReductions));
  out.push_back({kRecordDtype, HCOMM_OP_USER_COMMUTATIVE});
  if (keeps_rank_order(*entry.desc, entry.coll)) out.push_back({kRecordDtype, HCOMM_OP_USER_ORDERED});
  return out;
}

std::vector<int> roots(const CollTraits& t, int n) {
  if (!t.rooted) return {0};
  std::vector<int> out;
  for (int r = 0; r < n; ++r)
    if (n <= 5 || r <= 1 || r == n / 2 || r == n - 1) out.push_back(r);
  return out;
}

std::vector<uint64_t> counts(const CollTraits& t, int n) {
  if (t.coll == HCOMM_COLL_BARRIER) return {0};
  std::vector<uint64_t> out(std::begin(kCounts), std::end(kCounts));
  for (int large : kLargeCountRanks)
    if (n == large) out.push_back(kLargeCount);
  return out;
}

// Every case of `entry` but its view.
std::vector<Case> cases(const AlgorithmEntry& entry) {
  const CollTraits& t = *coll_traits(entry.coll);
  const std::vector<bool> in_place = t.in_place == InPlace::kNone ? std::vector<bool>{false} : std::vector{false, true};
  const std::vector<Workload> reducing = reductions(entry);
  std::vector<Case> out;
  for (int n : kRankCounts) {
    if (n < entry.desc->min_ranks || n > entry.desc->max_ranks) continue;
    for (uint64_t count : counts(t, n))
      for (int root : roots(t, n))
        for (bool inplace : in_place)
          for (const Chunking& chunking : kChunkings) {
            const uint32_t index = static_cast<uint32_t>(out.size());
            const Workload w = t.reduces ? reducing[index % reducing.size()] : kMoves[index % std::size(kMoves)];
            out.push_back({.coll = entry.coll,
                           .nranks = n,
                           .count = count,
                           .root = root,
                           .in_place = inplace,
                           .chunking = &chunking,
                           .workload = w,
                           .view = nullptr,
                           .seed = index + 1});
          }
  }
  return out;
}

class AlgorithmConformance : public ::testing::TestWithParam<AlgorithmEntry> {};

TEST_P(AlgorithmConformance, MatchesTheSerialReference) {
  const AlgorithmEntry& entry = GetParam();
  int passed = 0, declined = 0, failed = 0;
  for (Case c : cases(entry)) {
    SeenSchedules seen;
    for (const View& view : kViews) {
      c.view = &view;
      const Verdict v = run_case(*entry.desc, c, seen);
      passed += v.kind == Verdict::kPassed;
      declined += v.kind == Verdict::kDeclined;
      if (v.kind != Verdict::kFailed) continue;
      ADD_FAILURE() << entry.id << ": " << c.describe() << joined(v.problems);
      if (++failed == kMaxFailedCases) GTEST_FAIL() << "stopped after " << failed << " failing cases";
    }
  }
  EXPECT_GT(passed, 0) << entry.id << " declined every case (" << declined << ")";
  RecordProperty("cases_passed", passed);
  RecordProperty("cases_declined", declined);
}

// Costs are times: not negative, and not falling as the message grows
// (v-collectives: their random counts do not grow with the mean) over the
// sizes an algorithm serves. Infinity says that it does not serve the call
// (as in a view it cannot use; one_shot serves small and large allgathers,
// and leaves those between to the message algorithms); a call it builds
// gets a finite cost (the conformance cases check).
TEST_P(AlgorithmConformance, CostGrowsWithTheMessage) {
  const AlgorithmEntry& entry = GetParam();
  const CollTraits& t = *coll_traits(entry.coll);
  for (int n : {2, 5, 16})
    for (const View& view : kViews) {
      if (n < entry.desc->min_ranks || n > entry.desc->max_ranks) continue;
      double previous = 0;
      for (uint64_t count : {0, 1, 100, 10000, 1000000}) {
        const Case c = {.coll = entry.coll,
                        .nranks = n,
                        .count = count,
                        .root = 0,
                        .in_place = false,
                        .chunking = &kChunkings[0],
                        .workload = {HCOMM_INT64, HCOMM_SUM},
                        .view = &view,
                        .seed = 1};
        const CallArgs args(c);
        const hcomm_comm_view_t comm = comm_view(n, 0, view);
        const double cost = entry.desc->cost(&args.at(0), &comm);
        EXPECT_TRUE(cost >= 0) << c.describe() << ": cost " << cost;
        if (!t.variable && std::isfinite(cost)) {
          EXPECT_GE(cost, previous) << c.describe() << ": cheaper than a smaller message";
          previous = cost;
        }
      }
    }
}

std::string entry_name(const ::testing::TestParamInfo<AlgorithmEntry>& info) { return info.param.id; }

INSTANTIATE_TEST_SUITE_P(Algorithms, AlgorithmConformance, ::testing::ValuesIn(algorithm_entries()), entry_name);

}  // namespace
}  // namespace hcomm::algotest
