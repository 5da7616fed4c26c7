// The conformance harness finds what it is there to find. A small allgather
// through mapped windows, written here, runs clean in every view; each
// variant that breaks one rule of algorithm.h (a LOAD without its WAIT, a
// SIGNAL raised before the window is ready, a window staged again while
// peers may still read it, a peer's buffer read after the peer may have
// returned, chunks read before they are written, mapped steps in a plain
// view, a block put in the wrong place, a RECV published where peers do not
// look for it or before it holds the data) must make a case fail
// with a message that says so. So must a barrier that lets ranks leave
// early, a step marked UNREAD whose output is read, a real plugin's
// allreduce whose final division is dropped, and real plugins' scans with
// their operands swapped.
#include <gtest/gtest.h>

#include <algorithm>
#include <utility>

#include "algorithm_plugins.hpp"
#include "algorithm_run.hpp"
#include "algorithm_values.hpp"

namespace hcomm::algotest {
namespace {

enum class Variant {
  kSound,
  kPipelined,         // chunk-wise SIGNAL, WAIT and LOAD: sound
  kNoWait,            // LOADs do not wait for the peer's SIGNAL
  kEarlySignal,       // SIGNALs go out before the window holds the data
  kPeerSendNoDone,    // LOADs read the peer's SEND; the peer does not wait until they are done
  kPeerSendUnready,   // as kPeerSendNoDone, and no SIGNAL says the peers may read SEND
  kPipelinedShifted,  // chunk i of a LOAD reads bytes of the peer's chunk i + 1
  kIgnoresView,       // builds mapped steps without HCOMM_VIEW_MAPPED
  kWrongBlock,        // puts rank q's block where rank q + 1's goes
  kTwoRounds,         // stages the window twice, the second time once its readers are done: sound
  kReusedTooSoon,     // stages the window again while peers may still read it
  kUnreadResults,     // marks its own block and the loaded ones HCOMM_STEP_UNREAD: sound
  kUnreadWindow,      // marks the staged window HCOMM_STEP_UNREAD, which peers read
  kUnreadSignal,      // marks a SIGNAL, which writes nothing, HCOMM_STEP_UNREAD
  kPublished,         // publishes its block of RECV in the window (HCOMM_STEP_PUBLISH); peers load RECV: sound
  kPublishedAskew,    // publishes it at the next rank's block, where peers do not look for it
  kPublishedUnready,  // publishes it before its block is in RECV
};
Variant g_variant = Variant::kSound;

void add_dep(hcomm_step_t& s, int32_t dep, bool whole) {
  if (whole) s.whole_deps |= 1u << s.ndeps;
  s.deps[s.ndeps++] = dep;
}

// Every rank copies its input into its window and to its own block, tells
// every peer (flag 0), and loads every peer's window into that peer's block.
// Published: the window holds the own block at its RECV offset instead,
// peers load it from the owner's RECV, and each waits for every peer's
// "done" before it returns.
// In two rounds the window is staged again once every reader said it is
// done with it (flag 1); the second round's signals pair with the second
// WAIT on flag 0.
hcomm_result_t window_allgather(const hcomm_coll_args_t* a, const hcomm_comm_view_t* comm,
                                hcomm_schedule_builder_t* b) {
  const Variant v = g_variant;
  if (!(comm->flags & HCOMM_VIEW_MAPPED) && v != Variant::kIgnoresView) return HCOMM_ERR_UNSUPPORTED;
  const uint64_t bytes = a->count * a->dtype_size;
  const bool published =
      v == Variant::kPublished || v == Variant::kPublishedAskew || v == Variant::kPublishedUnready;
  const uint64_t window_used = published ? comm->nranks * bytes : bytes + a->dtype_size;
  const bool fits = window_used <= comm->window_bytes || v == Variant::kIgnoresView;
  if (a->in_place || !fits) return HCOMM_ERR_UNSUPPORTED;
  if (published && !(comm->flags & HCOMM_VIEW_PEER_BUFFERS)) return HCOMM_ERR_UNSUPPORTED;
  if (bytes == 0) return HCOMM_SUCCESS;
  const bool pipelined = v == Variant::kPipelined || v == Variant::kPipelinedShifted;
  const uint32_t nchunks =
      pipelined ? std::clamp<uint32_t>(b->chunks_for(b, bytes, a->dtype_size), 1, static_cast<uint32_t>(a->count)) : 1;
  const int rounds = v == Variant::kTwoRounds || v == Variant::kReusedTooSoon ? 2 : 1;
  const int n = comm->nranks, me = comm->rank;
  auto add = [&](hcomm_step_t s) { return b->add(b, &s); };
  const uint32_t unread_results = v == Variant::kUnreadResults ? uint32_t{HCOMM_STEP_UNREAD} : 0u;
  const uint64_t own = static_cast<uint64_t>(me) * bytes;
  const int32_t placed = add({.kind = HCOMM_STEP_COPY,
                              .flags = unread_results,
                              .src = {HCOMM_BUF_SEND, 0},
                              .dst = {HCOMM_BUF_RECV, own},
                              .bytes = bytes,
                              .nchunks = 1});
  int32_t released = -1;  // the last WAIT for a reader's "done" of the round before
  for (int round = 0; round < rounds; ++round) {
    hcomm_step_t stage = {.kind = HCOMM_STEP_COPY,
                          .flags = v == Variant::kUnreadWindow ? uint32_t{HCOMM_STEP_UNREAD} : 0u,
                          .src = {HCOMM_BUF_SEND, 0},
                          .dst = {HCOMM_BUF_WINDOW, 0},
                          .bytes = bytes,
                          .nchunks = nchunks};
    if (released >= 0 && v != Variant::kReusedTooSoon) add_dep(stage, released, true);
    if (published) {
      stage.flags = HCOMM_STEP_PUBLISH;
      stage.src = {HCOMM_BUF_RECV, own};
      stage.dst = {HCOMM_BUF_WINDOW, v == Variant::kPublishedAskew ? (me + 1) % n * bytes : own};
      if (v != Variant::kPublishedUnready) add_dep(stage, placed, true);
    }
    const int32_t staged = add(stage);
    const bool peer_send = v == Variant::kPeerSendNoDone || v == Variant::kPeerSendUnready;
    for (int q = 0; q < n; ++q) {
      if (q == me) continue;
      hcomm_step_t signal = {.kind = HCOMM_STEP_SIGNAL,
                             .flags = v == Variant::kUnreadSignal ? uint32_t{HCOMM_STEP_UNREAD}
                                      : v == Variant::kPeerSendNoDone ? uint32_t{HCOMM_STEP_SEND_READY}
                                                                      : 0u,
                             .peer = q,
                             .nchunks = nchunks};
      if (v != Variant::kEarlySignal) add_dep(signal, staged, !pipelined);
      add(signal);
    }
    std::vector<int32_t> loads(static_cast<size_t>(n), -1);
    for (int q = 0; q < n; ++q) {
      if (q == me) continue;
      const int32_t wait = add({.kind = HCOMM_STEP_WAIT, .peer = q, .nchunks = nchunks});
      const int block = v == Variant::kWrongBlock ? (q + 1) % n : q;
      hcomm_step_t load = {.kind = HCOMM_STEP_LOAD,
                           .flags = unread_results,
                           .peer = q,
                           .src = {peer_send ? HCOMM_BUF_SEND : HCOMM_BUF_WINDOW,
                                   v == Variant::kPipelinedShifted ? a->dtype_size : 0},
                           .dst = {HCOMM_BUF_RECV, static_cast<uint64_t>(block) * bytes},
                           .bytes = bytes,
                           .nchunks = nchunks};
      if (published) load.src = {HCOMM_BUF_RECV, static_cast<uint64_t>(q) * bytes};
      if (v != Variant::kNoWait) add_dep(load, wait, !pipelined);
      loads[static_cast<size_t>(q)] = add(load);
    }
    // Peers read a RECV in place until they say they are done.
    if (round + 1 == rounds && !published) break;
    for (int q = 0; q < n; ++q) {
      if (q == me) continue;
      hcomm_step_t done = {.kind = HCOMM_STEP_SIGNAL, .peer = q, .match = 1, .nchunks = 1};
      add_dep(done, loads[static_cast<size_t>(q)], true);
      add(done);
    }
    for (int q = 0; q < n; ++q) {
      if (q == me) continue;
      hcomm_step_t wait = {.kind = HCOMM_STEP_WAIT, .peer = q, .match = 1, .nchunks = 1};
      if (released >= 0) add_dep(wait, released, true);
      released = add(wait);
    }
  }
  return HCOMM_SUCCESS;
}

// Ranks other than 0 tell rank 0 they are here and leave.
hcomm_result_t half_barrier(const hcomm_coll_args_t*, const hcomm_comm_view_t* comm, hcomm_schedule_builder_t* b) {
  for (int q = 1; q < comm->nranks; ++q) {
    const hcomm_step_t s = {.kind = comm->rank == 0 ? HCOMM_STEP_RECV : HCOMM_STEP_SEND,
                            .peer = comm->rank == 0 ? q : 0,
                            .dst = {HCOMM_BUF_RECV, 0},
                            .nchunks = 1};
    if (comm->rank == 0 || comm->rank == q) b->add(b, &s);
  }
  return HCOMM_SUCCESS;
}

double no_cost(const hcomm_coll_args_t*, const hcomm_comm_view_t*) { return 1.0; }

hcomm_algorithm_desc_t test_algorithm(hcomm_coll_t coll, decltype(hcomm_algorithm_desc_t::build) build) {
  return {.size = sizeof(hcomm_algorithm_desc_t),
          .name = "harness_test",
          .colls = 1u << coll,
          .mem_kinds = HCOMM_MEM_HOST,
          .min_bytes = 0,
          .max_bytes = UINT64_MAX,
          .min_ranks = 1,
          .max_ranks = 64,
          .cost = no_cost,
          .build = build};
}

Case allgather_case(int nranks, uint64_t count, const char* chunking, const View& view) {
  const Chunking* c = &kChunkings[0];
  for (const Chunking& k : kChunkings)
    if (std::string(k.name) == chunking) c = &k;
  return {.coll = HCOMM_COLL_ALLGATHER,
          .nranks = nranks,
          .count = count,
          .root = 0,
          .in_place = false,
          .chunking = c,
          .workload = {HCOMM_INT64, HCOMM_SUM},
          .view = &view,
          .seed = 7};
}

Verdict run_window_allgather(Variant variant, const Case& c) {
  g_variant = variant;
  const hcomm_algorithm_desc_t algo = test_algorithm(HCOMM_COLL_ALLGATHER, window_allgather);
  SeenSchedules seen;
  const Verdict v = run_case(algo, c, seen);
  g_variant = Variant::kSound;
  return v;
}

std::vector<std::string> problems_of(Variant variant, const Case& c) {
  return run_window_allgather(variant, c).problems;
}

// Whether some problem contains `text`.
::testing::AssertionResult reports(const std::vector<std::string>& problems, const std::string& text) {
  for (const std::string& p : problems)
    if (p.find(text) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "no problem mentions \"" << text << "\":" << joined(problems);
}

// A function, not a reference bound at start-up: kViews is another file's
// global, which may not be constructed yet then.
const View& mapped() { return kViews[1]; }

TEST(AlgorithmHarness, SoundMappedSchedulesPassInEveryView) {
  for (Variant variant : {Variant::kSound, Variant::kPipelined, Variant::kTwoRounds, Variant::kPublished}) {
    int passed = 0, declined = 0;
    for (int n : {1, 2, 3, 5})
      for (uint64_t count : {0, 1, 7, 37})
        for (const Chunking& chunking : kChunkings)
          for (const View& view : kViews) {
            const Case c = allgather_case(n, count, chunking.name, view);
            const Verdict v = run_window_allgather(variant, c);
            EXPECT_NE(v.kind, Verdict::kFailed) << c.describe() << joined(v.problems);
            passed += v.kind == Verdict::kPassed;
            declined += v.kind == Verdict::kDeclined;
          }
    EXPECT_GT(passed, 0);
    EXPECT_GT(declined, 0) << "the plain view and the tiny window decline";
  }
}

TEST(AlgorithmHarness, FindsAWindowReusedBeforeItsReadersAreDone) {
  EXPECT_TRUE(problems_of(Variant::kTwoRounds, allgather_case(4, 7, "whole", mapped())).empty());
  EXPECT_TRUE(problems_of(Variant::kTwoRounds, allgather_case(5, 37, "fixed5", mapped())).empty());
  EXPECT_TRUE(reports(problems_of(Variant::kReusedTooSoon, allgather_case(4, 7, "whole", mapped())),
                      "writing its WINDOW [0, +56) and rank 1"));
}

// A RECV published in the window is read in place or there: the simulator
// runs both (and a mix), the checker orders both.
TEST(AlgorithmHarness, FindsAPublishedRecvOutOfPlaceOrNotReady) {
  for (int n : {2, 3, 5})
    for (uint64_t count : {1, 7, 37})
      EXPECT_EQ(joined(problems_of(Variant::kPublished, allgather_case(n, count, "whole", mapped()))), "") << n;
  EXPECT_TRUE(reports(problems_of(Variant::kPublishedAskew, allgather_case(3, 7, "whole", mapped())),
                      "RECV published in windows"));
  EXPECT_TRUE(reports(problems_of(Variant::kPublishedUnready, allgather_case(3, 7, "whole", mapped())),
                      "rank 0 step 0 (COPY) writing its RECV [0, +56) and rank 1 step 5 (LOAD peer 0) reading "
                      "rank 0's RECV [0, +56) are not ordered"));
}

TEST(AlgorithmHarness, FindsAnUnreadResultThatIsRead) {
  EXPECT_TRUE(problems_of(Variant::kUnreadResults, allgather_case(3, 7, "whole", mapped())).empty());
  EXPECT_TRUE(problems_of(Variant::kUnreadResults, allgather_case(5, 37, "fixed5", mapped())).empty());
  EXPECT_TRUE(reports(problems_of(Variant::kUnreadWindow, allgather_case(3, 7, "whole", mapped())),
                      "reading rank 0's WINDOW [0, +56) reads what UNREAD rank 0 step 1 (COPY)"));
  EXPECT_TRUE(reports(problems_of(Variant::kUnreadSignal, allgather_case(3, 7, "whole", mapped())),
                      "UNREAD on a step that writes nothing"));
}

TEST(AlgorithmHarness, FindsALoadWithoutItsWait) {
  const auto problems = problems_of(Variant::kNoWait, allgather_case(3, 7, "whole", mapped()));
  EXPECT_TRUE(reports(problems, "(LOAD peer 0) reading rank 0's WINDOW [0, +56) before any step of rank 0"));
  EXPECT_TRUE(reports(problems, "are not ordered"));
}

TEST(AlgorithmHarness, FindsASignalRaisedBeforeTheWindowIsReady) {
  const auto problems = problems_of(Variant::kEarlySignal, allgather_case(3, 7, "whole", mapped()));
  EXPECT_TRUE(reports(problems, "rank 0 step 1 (COPY) writing its WINDOW [0, +56)"));
  EXPECT_TRUE(reports(problems, "are not ordered"));
}

TEST(AlgorithmHarness, FindsAPeerBufferReadAfterItsOwnerMayReturn) {
  const auto problems = problems_of(Variant::kPeerSendNoDone, allgather_case(3, 7, "whole", mapped()));
  EXPECT_TRUE(reports(problems, "rank 0 may return from the call while rank 1"));
  EXPECT_TRUE(reports(problems, "reading rank 0's SEND [0, +56)"));
  // Without HCOMM_VIEW_PEER_BUFFERS a peer's SEND may not be named at all.
  EXPECT_TRUE(reports(problems_of(Variant::kPeerSendNoDone, allgather_case(3, 7, "whole", kViews[3])),
                      "in a view without HCOMM_VIEW_PEER_BUFFERS"));
  // A SEND its owner did not expose (HCOMM_STEP_SEND_READY) is not described to peers.
  EXPECT_TRUE(reports(problems_of(Variant::kPeerSendUnready, allgather_case(3, 7, "whole", mapped())),
                      "rank 1 step 5 (LOAD peer 0): loads the SEND of rank 0, whose schedule raises no SIGNAL with "
                      "HCOMM_STEP_SEND_READY"));
}

TEST(AlgorithmHarness, FindsChunksReadBeforeTheyAreWritten) {
  EXPECT_TRUE(problems_of(Variant::kPipelined, allgather_case(3, 37, "24B", mapped())).empty());
  EXPECT_TRUE(
      reports(problems_of(Variant::kPipelinedShifted, allgather_case(3, 37, "24B", mapped())), "are not ordered"));
}

TEST(AlgorithmHarness, FindsMappedStepsInAPlainView) {
  const auto problems = problems_of(Variant::kIgnoresView, allgather_case(2, 7, "whole", kViews[0]));
  EXPECT_TRUE(reports(problems, "a mapped-memory step in a view without HCOMM_VIEW_MAPPED"));
  EXPECT_TRUE(reports(problems, "names a WINDOW in a view without HCOMM_VIEW_MAPPED"));
}

TEST(AlgorithmHarness, FindsBlocksInTheWrongPlace) {
  const auto problems = problems_of(Variant::kWrongBlock, allgather_case(3, 7, "whole", mapped()));
  EXPECT_TRUE(reports(problems, "rank 2 RECV element 0 (block 0): expected 1, got the untouched canary"));
}

TEST(AlgorithmHarness, FindsARankLeavingABarrierEarly) {
  const hcomm_algorithm_desc_t algo = test_algorithm(HCOMM_COLL_BARRIER, half_barrier);
  Case c = allgather_case(4, 0, "whole", kViews[0]);
  c.coll = HCOMM_COLL_BARRIER;
  SeenSchedules seen;
  const Verdict v = run_case(algo, c, seen);
  EXPECT_TRUE(reports(v.problems, "rank 1 left the barrier before rank 2 entered it"));
}

// A builder that hands every step to Change before the real builder `b`
// adds it.
template <void (*Change)(hcomm_step_t&)>
hcomm_schedule_builder_t altered(hcomm_schedule_builder_t* b) {
  hcomm_schedule_builder_t proxy = *b;
  proxy.ctx = b;
  proxy.add = [](hcomm_schedule_builder_t* self, const hcomm_step_t* step) {
    auto* real = static_cast<hcomm_schedule_builder_t*>(self->ctx);
    hcomm_step_t s = *step;
    Change(s);
    return real->add(real, &s);
  };
  proxy.need_scratch = [](hcomm_schedule_builder_t* self, uint64_t bytes) {
    auto* real = static_cast<hcomm_schedule_builder_t*>(self->ctx);
    real->need_scratch(real, bytes);
  };
  proxy.chunks_for = [](hcomm_schedule_builder_t* self, uint64_t bytes, size_t elem) {
    auto* real = static_cast<hcomm_schedule_builder_t*>(self->ctx);
    return real->chunks_for(real, bytes, elem);
  };
  return proxy;
}

// The ring allreduce with its FINAL flags dropped: AVG never divides.
const hcomm_algorithm_desc_t* g_ring = nullptr;

void drop_final(hcomm_step_t& s) { s.flags &= ~uint32_t{HCOMM_STEP_FINAL}; }

hcomm_result_t ring_without_final(const hcomm_coll_args_t* a, const hcomm_comm_view_t* comm,
                                  hcomm_schedule_builder_t* b) {
  hcomm_schedule_builder_t proxy = altered<drop_final>(b);
  return g_ring->build(a, comm, &proxy);
}

TEST(AlgorithmHarness, FindsAnAverageNeverDivided) {
  g_ring = AlgorithmPlugins::get().find("ring", HCOMM_COLL_ALLREDUCE);
  ASSERT_NE(g_ring, nullptr) << AlgorithmPlugins::get().load_error();
  const hcomm_algorithm_desc_t algo = test_algorithm(HCOMM_COLL_ALLREDUCE, ring_without_final);
  Case c = allgather_case(3, 7, "whole", kViews[0]);
  c.coll = HCOMM_COLL_ALLREDUCE;
  c.workload = {HCOMM_INT64, HCOMM_AVG};
  SeenSchedules seen;
  const Verdict v = run_case(algo, c, seen);
  EXPECT_TRUE(reports(v.problems, "rank 0 RECV element 0 (block 0): expected"));
  c.workload = {HCOMM_INT64, HCOMM_SUM};
  seen.clear();
  EXPECT_EQ(run_case(algo, c, seen).kind, Verdict::kPassed) << "a sum needs no division";
}

// A real plugin's scan with the operands of every REDUCE swapped: the
// higher ranks' data on the left. A sum cannot tell; the rank-order op can.
const hcomm_algorithm_desc_t* g_scan = nullptr;

void swap_operands(hcomm_step_t& s) {
  if (s.kind == HCOMM_STEP_REDUCE) std::swap(s.src, s.src2);
}

hcomm_result_t scan_swapped(const hcomm_coll_args_t* a, const hcomm_comm_view_t* comm, hcomm_schedule_builder_t* b) {
  hcomm_schedule_builder_t proxy = altered<swap_operands>(b);
  return g_scan->build(a, comm, &proxy);
}

TEST(AlgorithmHarness, FindsAScanOutOfRankOrder) {
  for (const char* name : {"ring", "recursive_doubling"})
    for (hcomm_coll_t coll : {HCOMM_COLL_SCAN, HCOMM_COLL_EXSCAN}) {
      SCOPED_TRACE(std::string(name) + (coll == HCOMM_COLL_SCAN ? " scan" : " exscan"));
      g_scan = AlgorithmPlugins::get().find(name, coll);
      ASSERT_NE(g_scan, nullptr) << AlgorithmPlugins::get().load_error();
      const hcomm_algorithm_desc_t algo = test_algorithm(coll, scan_swapped);
      Case c = allgather_case(5, 7, "whole", kViews[0]);
      c.coll = coll;
      c.workload = {HCOMM_INT64, kRankOrderOp};
      SeenSchedules seen;
      EXPECT_TRUE(reports(run_case(algo, c, seen).problems, "rank 4 RECV element 0 (block 0): expected"));
      seen.clear();
      EXPECT_EQ(run_case(*g_scan, c, seen).kind, Verdict::kPassed) << "as the plugin builds it";
      c.workload = {HCOMM_INT64, HCOMM_SUM};
      seen.clear();
      EXPECT_EQ(run_case(algo, c, seen).kind, Verdict::kPassed) << "a sum does not see the order";
    }
}

}  // namespace
}  // namespace hcomm::algotest
