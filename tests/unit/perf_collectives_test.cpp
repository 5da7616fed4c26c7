// hcomm-perf's registry of collectives, against a serial model of each
// collective: every rank's input as the row fills it, moved or reduced as
// hcomm.h defines the collective, must give every rank's expected result;
// the layouts must keep the in-place pointer relations of hcomm.h; bytes and
// bus factors follow nccl-tests.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

// The registry is one source file of hcomm-perf; compiled in here so that its
// table is tested without the tool.
#include "tools/hcomm-perf/collectives.cpp"
#include "tools/hcomm-perf/options.hpp"

namespace hcomm::perf {
namespace {

struct RankData {
  DataSpec spec;
  Layout layout;
  std::vector<unsigned char> input, expected;
};

// Every rank's layout and data for one call.
std::vector<RankData> fill_all(const Collective& c, hcomm_dtype_t dtype, hcomm_op_t op, int nranks, int root,
                               size_t count, bool in_place) {
  const size_t es = element_size(dtype);
  std::vector<RankData> ranks;
  for (int r = 0; r < nranks; ++r) {
    RankData d{.spec = {.dtype = dtype, .op = op, .nranks = nranks, .rank = r, .root = root}};
    d.layout = c.layout(d.spec, count, in_place);
    d.input.assign(d.layout.input * es, 0);
    d.expected.assign(d.layout.result * es, 0);
    c.fill(d.spec, d.input.data(), d.expected.data(), count);
    ranks.push_back(std::move(d));
  }
  return ranks;
}

double value(const RankData& d, size_t i) { return element_value(d.spec.dtype, d.input.data(), i); }

// The reduction of input element g over ranks 0..last (all of them by default).
double reduced(const std::vector<RankData>& ranks, hcomm_op_t op, size_t g, int last = -1) {
  const size_t end = last < 0 ? ranks.size() : static_cast<size_t>(last) + 1;
  double acc = value(ranks[0], g);
  for (size_t r = 1; r < end; ++r) {
    const double x = value(ranks[r], g);
    switch (op) {
      case HCOMM_PROD:
        acc *= x;
        break;
      case HCOMM_MIN:
        acc = std::min(acc, x);
        break;
      case HCOMM_MAX:
        acc = std::max(acc, x);
        break;
      default:
        acc += x;
        break;
    }
  }
  return op == HCOMM_AVG ? std::trunc(acc / static_cast<double>(ranks.size())) : acc;
}

// What rank `me` receives, element i of its result, as hcomm.h defines the collective.
using Model = std::function<double(const std::vector<RankData>&, int me, size_t count, size_t i)>;

// The model's result size on rank `me` and the in-place pointer relation
// (sendbuf - recvbuf, in elements) that hcomm.h states.
struct Semantics {
  std::string_view name;
  Model result;
  std::function<size_t(int n, int me, int root, size_t count)> result_elements;
  std::function<ptrdiff_t(int me, int root, size_t count)> send_minus_recv;  // in place, where this rank is
  std::function<bool(int me, int root)> in_place_here;
};

ptrdiff_t none(int, int, size_t) { return 0; }
ptrdiff_t blocks_of(size_t count, int blocks) { return static_cast<ptrdiff_t>(count) * blocks; }
bool everywhere(int, int) { return true; }
bool on_root(int me, int root) { return me == root; }
size_t n_blocks(int n, int, int, size_t count) { return count * static_cast<size_t>(n); }
size_t one_block(int, int, int, size_t count) { return count; }

const Semantics kSemantics[] = {
    {"allreduce", [](const auto& rs, int, size_t, size_t i) { return reduced(rs, rs[0].spec.op, i); }, one_block, none,
     everywhere},
    {"broadcast", [](const auto& rs, int, size_t, size_t i) { return value(rs[rs[0].spec.root], i); }, one_block, none,
     everywhere},
    {"reduce", [](const auto& rs, int, size_t, size_t i) { return reduced(rs, rs[0].spec.op, i); },
     [](int, int me, int root, size_t count) { return me == root ? count : 0; }, none, on_root},
    {"allgather", [](const auto& rs, int, size_t count, size_t i) { return value(rs[i / count], i % count); }, n_blocks,
     [](int me, int, size_t count) { return blocks_of(count, me); }, everywhere},
    {"allgatherv", [](const auto& rs, int, size_t count, size_t i) { return value(rs[i / count], i % count); },
     n_blocks, [](int me, int, size_t count) { return blocks_of(count, me); }, everywhere},
    {"reduce_scatter",
     [](const auto& rs, int me, size_t count, size_t i) { return reduced(rs, rs[0].spec.op, count * me + i); },
     one_block, [](int me, int, size_t count) { return -blocks_of(count, me); }, everywhere},
    {"reduce_scatter_v",
     [](const auto& rs, int me, size_t count, size_t i) { return reduced(rs, rs[0].spec.op, count * me + i); },
     one_block, [](int me, int, size_t count) { return -blocks_of(count, me); }, everywhere},
    {"alltoall",
     [](const auto& rs, int me, size_t count, size_t i) { return value(rs[i / count], count * me + i % count); },
     n_blocks, none, everywhere},
    {"alltoallv",
     [](const auto& rs, int me, size_t count, size_t i) { return value(rs[i / count], count * me + i % count); },
     n_blocks, none, everywhere},
    {"gather", [](const auto& rs, int, size_t count, size_t i) { return value(rs[i / count], i % count); },
     [](int n, int me, int root, size_t count) { return me == root ? count * static_cast<size_t>(n) : 0; },
     [](int, int root, size_t count) { return blocks_of(count, root); }, on_root},
    {"scatter",
     [](const auto& rs, int me, size_t count, size_t i) { return value(rs[rs[0].spec.root], count * me + i); },
     one_block, [](int, int root, size_t count) { return -blocks_of(count, root); }, on_root},
    {"scan", [](const auto& rs, int me, size_t, size_t i) { return reduced(rs, rs[0].spec.op, i, me); }, one_block,
     none, everywhere},
    {"exscan", [](const auto& rs, int me, size_t, size_t i) { return reduced(rs, rs[0].spec.op, i, me - 1); },
     [](int, int me, int, size_t count) { return me == 0 ? 0 : count; }, none, everywhere},
};

TEST(PerfCollectives, EveryCollectiveHasARowAndAModel) {
  std::vector<std::string_view> names = collective_names();
  EXPECT_EQ(names.size(), std::size(kSemantics) + 1);  // and barrier
  for (const Semantics& s : kSemantics) EXPECT_NE(std::find(names.begin(), names.end(), s.name), names.end());
  EXPECT_FALSE(find_collective("barrier").uses_data());
  EXPECT_THROW(find_collective("allgatherw"), std::invalid_argument);
}

TEST(PerfCollectives, FilledDataAndLayoutsMatchTheModel) {
  for (const Semantics& s : kSemantics) {
    const Collective& c = find_collective(s.name);
    const bool reduces = c.uses_op;
    for (int n : {1, 2, 3, 5, 8})
      for (int root : {0, n - 1})
        for (size_t count : {size_t{0}, size_t{1}, size_t{7}, size_t{33}})
          for (hcomm_dtype_t dtype : {HCOMM_INT8, HCOMM_FLOAT16, HCOMM_UINT32, HCOMM_FLOAT64})
            for (int o = 0; o < (reduces ? HCOMM_NUM_OPS : 1); ++o)
              for (bool in_place : {false, true}) {
                const auto op = static_cast<hcomm_op_t>(o);
                if (c.rank_order && op == HCOMM_AVG) continue;
                SCOPED_TRACE(std::string(s.name) + " n " + std::to_string(n) + " root " + std::to_string(root) +
                             " count " + std::to_string(count) + " " + std::string(dtype_info(dtype).name) + " " +
                             std::string(op_name(op)) + (in_place ? " in place" : ""));
                const std::vector<RankData> ranks = fill_all(c, dtype, op, n, root, count, in_place);
                for (int me = 0; me < n; ++me) {
                  const Layout& l = ranks[static_cast<size_t>(me)].layout;
                  ASSERT_EQ(l.result, s.result_elements(n, me, root, count)) << "rank " << me;
                  ASSERT_EQ(l.in_place, in_place && s.in_place_here(me, root)) << "rank " << me;
                  ASSERT_LE(l.recv_offset + l.result, l.buffer) << "rank " << me;
                  if (l.in_place) {
                    ASSERT_LE(l.send_offset + l.input, l.buffer) << "rank " << me;
                    ASSERT_EQ(static_cast<ptrdiff_t>(l.send_offset) - static_cast<ptrdiff_t>(l.recv_offset),
                              s.send_minus_recv(me, root, count))
                        << "rank " << me;
                  }
                  for (size_t i = 0; i < l.result; ++i)
                    ASSERT_EQ(element_value(dtype, ranks[static_cast<size_t>(me)].expected.data(), i),
                              s.result(ranks, me, count, i))
                        << "rank " << me << " element " << i;
                }
              }
  }
}

TEST(PerfCollectives, BlocksOfOtherRanksDifferInEveryElement) {
  const DataSpec spec{.dtype = HCOMM_INT8, .op = HCOMM_SUM, .nranks = 8, .rank = 3, .root = 0};
  const size_t count = 300;
  std::vector<unsigned char> input(count * 8), expected(count * 8);
  fill_alltoall(spec, input.data(), expected.data(), count);
  for (int a = 0; a < 8; ++a)
    for (int b = a + 1; b < 8; ++b)
      EXPECT_EQ(compare_elements(expected.data() + count * a, expected.data() + count * b, count, 1).wrong, count)
          << "blocks from ranks " << a << " and " << b;
}

TEST(PerfCollectives, BandwidthAsNcclTestsCountsIt) {
  struct Want {
    std::string_view name;
    size_t bytes;  // count 10 of 4-byte elements on 4 ranks
    double factor;
  } wants[] = {{"allreduce", 40, 1.5},          {"broadcast", 40, 1.0},    {"reduce", 40, 1.0},
               {"allgather", 160, 0.75},        {"allgatherv", 160, 0.75}, {"reduce_scatter", 160, 0.75},
               {"reduce_scatter_v", 160, 0.75}, {"alltoall", 160, 0.75},   {"alltoallv", 160, 0.75},
               {"gather", 160, 0.75},           {"scatter", 160, 0.75},    {"scan", 40, 1.0},
               {"exscan", 40, 1.0},             {"barrier", 0, 0.0}};
  for (const Want& w : wants) {
    const Collective& c = find_collective(w.name);
    EXPECT_EQ(c.bytes_moved(10, 4, 4), w.bytes) << w.name;
    EXPECT_DOUBLE_EQ(c.bus_factor(4), w.factor) << w.name;
  }
}

}  // namespace
}  // namespace hcomm::perf
