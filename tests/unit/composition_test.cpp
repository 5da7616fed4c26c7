// Schedules made of parts (core/algorithm/composition.hpp): a group's view,
// the checks of a part, how a part's steps are renamed into the whole
// schedule (peers, matches, buffers, dependencies, flags, scratch), and the
// selector's builds of parts, nested parts and an algorithm that chooses
// itself for its own parts.
#include "core/algorithm/composition.hpp"

#include <gtest/gtest.h>

#include <climits>
#include <string>
#include <vector>

#include "core/algorithm/selector.hpp"
#include "core/common/error.hpp"

namespace hcomm {
namespace {

using algorithm::check_part;
using algorithm::Composition;
using algorithm::GroupView;
using algorithm::Selector;

const std::vector<int> kNodeOf = {0, 0, 1, 1, 2};

hcomm_comm_view_t whole_view(int rank) {
  return {.size = sizeof(hcomm_comm_view_t),
          .rank = rank,
          .nranks = 5,
          .link = {.alpha_us = 5, .beta_us_per_byte = 1e-3},
          .flags = HCOMM_VIEW_MAPPED | HCOMM_VIEW_PEER_BUFFERS | HCOMM_VIEW_OVERSUBSCRIBED,
          .window_bytes = 1 << 20,
          .mapped = {.alpha_us = 0.1},
          .nnodes = 3,
          .node_of = kNodeOf.data(),
          .intra = {.alpha_us = 1, .beta_us_per_byte = 1e-4},
          .inter = {.alpha_us = 5, .beta_us_per_byte = 1e-3},
          .chunk_bytes = 4096};
}

template <class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), HCOMM_ERR_INVALID_ARGUMENT);
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

TEST(GroupView, RanksInGroupOrderAndHostsRenumbered) {
  const hcomm_comm_view_t whole = whole_view(1);
  const std::vector<int> ranks = {3, 1, 4, 2};
  const GroupView g(whole, ranks);
  const hcomm_comm_view_t& v = g.view();
  EXPECT_EQ(v.rank, 1);
  EXPECT_EQ(v.nranks, 4);
  EXPECT_EQ(v.nnodes, 3);
  // Hosts by their lowest group rank: rank 3's host first.
  EXPECT_EQ(std::vector<int>(v.node_of, v.node_of + 4), (std::vector<int>{0, 1, 2, 0}));
  EXPECT_EQ(v.flags, uint32_t{HCOMM_VIEW_OVERSUBSCRIBED});  // no mapped memory for a part
  EXPECT_EQ(v.window_bytes, 0u);
  EXPECT_EQ(v.link.alpha_us, whole.inter.alpha_us);
  EXPECT_EQ(v.chunk_bytes, whole.chunk_bytes);
}

TEST(GroupView, OneHostsGroupUsesTheIntraHostLink) {
  const std::vector<int> ranks = {2, 3};
  const GroupView g(whole_view(3), ranks);
  EXPECT_EQ(g.view().rank, 1);
  EXPECT_EQ(g.view().nnodes, 1);
  EXPECT_EQ(g.view().link.alpha_us, 1);
  EXPECT_EQ(g.view().inter.alpha_us, 1);
}

TEST(GroupView, BadGroupsAreNamed) {
  const hcomm_comm_view_t whole = whole_view(0);
  EXPECT_NE(error_of([&] { GroupView(whole, std::vector<int>{0, 5}); }).find("rank 5, outside"), std::string::npos);
  EXPECT_NE(error_of([&] { GroupView(whole, std::vector<int>{0, 2, 2}); }).find("rank 2 appears twice"),
            std::string::npos);
  EXPECT_NE(error_of([&] { GroupView(whole, std::vector<int>{1, 2}); }).find("does not hold this rank (0)"),
            std::string::npos);
}

hcomm_coll_args_t allreduce_args(size_t count) {
  return {.size = sizeof(hcomm_coll_args_t),
          .coll = HCOMM_COLL_ALLREDUCE,
          .count = count,
          .dtype = HCOMM_FLOAT32,
          .dtype_size = 4,
          .op = HCOMM_SUM,
          .mem_kind = HCOMM_MEM_HOST};
}

// A part of `args` over `ranks`, its SEND and RECV the schedule's own, id 0,
// no flags and no dependencies; tests change what they need.
hcomm_coll_part_t part_over(const std::vector<int>& ranks, const hcomm_coll_args_t* args) {
  return {.size = sizeof(hcomm_coll_part_t),
          .args = args,
          .ranks = ranks.data(),
          .nranks = static_cast<int>(ranks.size()),
          .send = {HCOMM_BUF_SEND, 0},
          .recv = {HCOMM_BUF_RECV, 0}};
}

TEST(CheckPart, BadPartsAreNamed) {
  const hcomm_comm_view_t whole = whole_view(0);
  const hcomm_coll_args_t args = allreduce_args(10);
  const std::vector<int> ranks = {0, 1};
  const int32_t deps[HCOMM_STEP_MAX_DEPS + 1] = {};
  hcomm_coll_part_t good = part_over(ranks, &args);
  good.deps = deps;
  good.ndeps = 1;
  EXPECT_NO_THROW(check_part(good, whole, 1));
  const struct {
    const char* named;
    void (*spoil)(hcomm_coll_part_t&);
  } bad[] = {
      {"size", [](hcomm_coll_part_t& p) { p.size = 8; }},
      {"args is NULL", [](hcomm_coll_part_t& p) { p.args = nullptr; }},
      {"a group of 0 ranks", [](hcomm_coll_part_t& p) { p.nranks = 0; }},
      {"id 255", [](hcomm_coll_part_t& p) { p.id = HCOMM_MAX_PARTS; }},
      {"buffer 3", [](hcomm_coll_part_t& p) { p.recv.buffer = HCOMM_BUF_WINDOW; }},
      {"9 dependencies", [](hcomm_coll_part_t& p) { p.ndeps = HCOMM_STEP_MAX_DEPS + 1; }},
      {"dependency 0 is not one of the 0 steps", [](hcomm_coll_part_t&) {}},
  };
  for (const auto& b : bad) {
    hcomm_coll_part_t p = good;
    b.spoil(p);
    const size_t steps = std::string(b.named).starts_with("dependency") ? 0 : 1;
    EXPECT_NE(error_of([&] { check_part(p, whole, steps); }).find(b.named), std::string::npos) << b.named;
  }
}

// A part's schedule as a group of ranks {4, 2} built it: a send to group
// rank 1, a receive-reduce from it into scratch that finishes its elements,
// and a copy of the result that nothing reads later.
exec::Schedule two_rank_part() {
  exec::Schedule s;
  s.algorithm = "made_up";
  s.algorithm_scratch = 100;
  s.steps.push_back({.kind = HCOMM_STEP_SEND,
                     .peer = 1,
                     .match = 5,
                     .src = {HCOMM_BUF_SEND, 8},
                     .bytes = 32,
                     .nchunks = 2});
  s.steps.push_back({.kind = HCOMM_STEP_RECV_REDUCE,
                     .flags = HCOMM_STEP_FINAL,
                     .peer = 1,
                     .match = 6,
                     .src = {HCOMM_BUF_SEND, 8},
                     .dst = {HCOMM_BUF_SCRATCH, 16},
                     .bytes = 32,
                     .nchunks = 2,
                     .ndeps = 1,
                     .deps = {0}});
  s.steps.push_back({.kind = HCOMM_STEP_COPY,
                     .flags = HCOMM_STEP_UNREAD,
                     .src = {HCOMM_BUF_SCRATCH, 16},
                     .dst = {HCOMM_BUF_RECV, 0},
                     .bytes = 32,
                     .nchunks = 2,
                     .ndeps = 1,
                     .deps = {1}});
  return s;
}

TEST(Composition, APartsStepsAreRenamedIntoTheWhole) {
  const std::vector<int> ranks = {4, 2};
  const hcomm_coll_args_t args = allreduce_args(8);
  const int32_t before = 0;
  hcomm_coll_part_t part = part_over(ranks, &args);
  part.send = {HCOMM_BUF_RECV, 100};
  part.recv = {HCOMM_BUF_SCRATCH, 0};
  part.id = 3;
  part.deps = &before;
  part.ndeps = 1;
  std::vector<hcomm_step_t> steps(1, hcomm_step_t{.kind = HCOMM_STEP_COPY, .nchunks = 1});
  Composition composition;
  const int32_t end = composition.add(steps, part, two_rank_part());
  // The whole's step, the part's start (waiting for it), its three steps.
  ASSERT_EQ(steps.size(), 5u);
  EXPECT_EQ(end, 4);
  EXPECT_EQ(steps[1].ndeps, 1u);
  EXPECT_EQ(steps[1].deps[0], 0);
  EXPECT_EQ(steps[1].whole_deps, 1u);
  const hcomm_step_t &send = steps[2], &reduce = steps[3], &copy = steps[4];
  EXPECT_EQ(send.peer, 2);
  EXPECT_EQ(send.match, (4u << 16) | 5);
  EXPECT_EQ(send.src.buffer, uint32_t{HCOMM_BUF_RECV});
  EXPECT_EQ(send.src.offset, 108u);
  EXPECT_EQ(send.deps[0], 1);  // behind the start, as a whole
  EXPECT_EQ(send.whole_deps, 1u);
  EXPECT_EQ(reduce.deps[0], 2);
  EXPECT_EQ(reduce.flags & HCOMM_STEP_FINAL, 0u);  // not the finishing part: AVG sums here
  EXPECT_EQ(copy.flags & HCOMM_STEP_UNREAD, 0u);   // not the last part: later steps read it
  EXPECT_EQ(copy.dst.buffer, uint32_t{HCOMM_BUF_SCRATCH});

  // The part's scratch lies past the algorithm's own 10 bytes, 64-aligned;
  // its RECV, the algorithm's scratch at 0, is not moved.
  EXPECT_EQ(composition.place_scratch(steps, 10), 64u + 128u);
  EXPECT_EQ(reduce.dst.offset, 64u + 16u);
  EXPECT_EQ(copy.src.offset, 64u + 16u);
  EXPECT_EQ(copy.dst.offset, 0u);
}

TEST(Composition, FinishingAndLastPartsKeepTheirFlags) {
  const std::vector<int> ranks = {0, 1};
  const hcomm_coll_args_t args = allreduce_args(8);
  hcomm_coll_part_t part = part_over(ranks, &args);
  part.flags = HCOMM_PART_FINISHES | HCOMM_PART_LAST;
  std::vector<hcomm_step_t> steps;
  Composition composition;
  EXPECT_EQ(composition.add(steps, part, two_rank_part()), 2);
  EXPECT_EQ(steps[1].flags, uint32_t{HCOMM_STEP_FINAL});
  EXPECT_EQ(steps[2].flags, uint32_t{HCOMM_STEP_UNREAD});
  EXPECT_EQ(steps[0].ndeps, 0u);  // no dependencies: no start
  EXPECT_EQ(steps[0].match, (1u << 16) | 5);
}

TEST(Composition, AnEmptyPartEndsAtOnce) {
  const std::vector<int> ranks = {0};
  const hcomm_coll_args_t args = allreduce_args(0);
  const hcomm_coll_part_t part = part_over(ranks, &args);
  std::vector<hcomm_step_t> steps;
  Composition composition;
  exec::Schedule empty;
  EXPECT_EQ(composition.add(steps, part, empty), 0);
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].bytes, 0u);
}

TEST(Composition, MappedStepsAndWideMatchesAreRefused) {
  const std::vector<int> ranks = {0, 1};
  const hcomm_coll_args_t args = allreduce_args(8);
  const hcomm_coll_part_t part = part_over(ranks, &args);
  for (const auto& [spoil, named] : std::vector<std::pair<void (*)(hcomm_step_t&), std::string>>{
           {[](hcomm_step_t& s) { s.kind = HCOMM_STEP_LOAD; }, "mapped-memory step"},
           {[](hcomm_step_t& s) { s.match = 1u << 16; }, "not below 2^16"},
           {[](hcomm_step_t& s) { s.peer = 2; }, "peer 2 in a group of 2"}}) {
    exec::Schedule built = two_rank_part();
    spoil(built.steps[0]);
    std::vector<hcomm_step_t> steps;
    Composition composition;
    try {
      composition.add(steps, part, built);
      ADD_FAILURE() << named << ": no error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(named), std::string::npos) << e.what();
    }
  }
}

// Fake algorithms for the selector: a flat allreduce of one send and one
// receive per peer, and compositions of it.
hcomm_result_t flat_build(const hcomm_coll_args_t* a, const hcomm_comm_view_t* c, hcomm_schedule_builder_t* b) {
  const uint64_t bytes = a->count * a->dtype_size;
  for (int p = 0; p < c->nranks; ++p) {
    if (p == c->rank) continue;
    const hcomm_step_t send = {.kind = HCOMM_STEP_SEND, .peer = p, .src = {HCOMM_BUF_SEND, 0}, .bytes = bytes,
                               .nchunks = 1};
    const hcomm_step_t recv = {.kind = HCOMM_STEP_RECV_REDUCE, .flags = HCOMM_STEP_FINAL, .peer = p,
                               .src = {HCOMM_BUF_RECV, 0}, .dst = {HCOMM_BUF_RECV, 0}, .bytes = bytes,
                               .nchunks = 1};
    if (b->add(b, &send) < 0 || b->add(b, &recv) < 0) return HCOMM_ERR_INTERNAL;
  }
  b->need_scratch(b, 24);
  return HCOMM_SUCCESS;
}

// A part over this rank's half of the ranks; on groups smaller than kFewest
// it declines, as a hierarchical algorithm does on one host.
template <int kFewest>
hcomm_result_t halves_build(const hcomm_coll_args_t* a, const hcomm_comm_view_t* c, hcomm_schedule_builder_t* b) {
  if (c->nranks < kFewest) return HCOMM_ERR_UNSUPPORTED;
  std::vector<int> mine;
  const bool low = c->rank < c->nranks / 2;
  for (int r = 0; r < c->nranks; ++r)
    if ((r < c->nranks / 2) == low) mine.push_back(r);
  hcomm_coll_part_t part = part_over(mine, a);
  part.id = 7;
  b->need_scratch(b, 8);
  return b->add_coll(b, &part) < 0 ? HCOMM_ERR_INTERNAL : HCOMM_SUCCESS;
}

// One part over every rank: chosen again for it, without end.
hcomm_result_t itself_build(const hcomm_coll_args_t* a, const hcomm_comm_view_t* c, hcomm_schedule_builder_t* b) {
  std::vector<int> all;
  for (int r = 0; r < c->nranks; ++r) all.push_back(r);
  const hcomm_coll_part_t part = part_over(all, a);
  return b->add_coll(b, &part) < 0 ? HCOMM_ERR_INTERNAL : HCOMM_SUCCESS;
}

double cost_1(const hcomm_coll_args_t*, const hcomm_comm_view_t*) { return 1; }
double cost_2(const hcomm_coll_args_t*, const hcomm_comm_view_t*) { return 2; }

constexpr hcomm_algorithm_desc_t algorithm(const char* name, decltype(hcomm_algorithm_desc_t::cost) cost,
                                           decltype(hcomm_algorithm_desc_t::build) build) {
  return {.size = sizeof(hcomm_algorithm_desc_t),
          .name = name,
          .colls = 1u << HCOMM_COLL_ALLREDUCE,
          .mem_kinds = HCOMM_MEM_HOST,
          .min_bytes = 0,
          .max_bytes = UINT64_MAX,
          .min_ranks = 1,
          .max_ranks = INT_MAX,
          .cost = cost,
          .build = build};
}
constexpr hcomm_algorithm_desc_t kFlat = algorithm("flat", cost_2, flat_build);
constexpr hcomm_algorithm_desc_t kHalvesOf4 = algorithm("halves", cost_1, halves_build<4>);
constexpr hcomm_algorithm_desc_t kHalvesOf2 = algorithm("halves", cost_1, halves_build<2>);
constexpr hcomm_algorithm_desc_t kItself = algorithm("itself", cost_1, itself_build);

hcomm_comm_view_t flat_view(int rank, int nranks) {
  hcomm_comm_view_t view = whole_view(rank);
  view.nranks = nranks;
  view.nnodes = 1;
  view.node_of = nullptr;
  view.flags = 0;
  return view;
}

// Rank 1 of 4 under halves: its part over {0, 1}, where halves declines and
// flat builds: messages to rank 0 in the part's match range, the part's
// reduction not finishing, its scratch past the algorithm's own.
TEST(SelectorParts, APartIsBuiltByItsGroupsSelector) {
  const Selector selector(flat_view(1, 4), {}, {&kFlat, &kHalvesOf4});
  const auto s = selector.build(allreduce_args(6));
  EXPECT_EQ(s->algorithm, "halves");
  int messages = 0;
  for (const hcomm_step_t& step : s->steps) {
    if (step.kind == HCOMM_STEP_COPY) continue;
    ++messages;
    EXPECT_EQ(step.peer, 0);
    EXPECT_EQ(step.match, 8u << 16);
    EXPECT_EQ(step.flags, 0u);
  }
  EXPECT_EQ(messages, 2);
  EXPECT_EQ(s->algorithm_scratch, 64u + 64u);
}

// Rank 3 of 4 under halves of any group of 2 or more: {2, 3}, then {3},
// where flat sends nothing; each level's scratch past the level above's.
TEST(SelectorParts, PartsNest) {
  const Selector selector(flat_view(3, 4), {}, {&kFlat, &kHalvesOf2});
  const auto s = selector.build(allreduce_args(6));
  for (const hcomm_step_t& step : s->steps) EXPECT_EQ(step.kind, uint32_t{HCOMM_STEP_COPY});
  EXPECT_EQ(s->algorithm_scratch, 64u + 64u + 64u);
}

TEST(SelectorParts, AnAlgorithmChosenForItsOwnPartsStopsWithAnError) {
  const Selector selector(flat_view(0, 2), {}, {&kFlat, &kItself});
  try {
    selector.build(allreduce_args(6));
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("parts nest deeper than 4"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace hcomm
