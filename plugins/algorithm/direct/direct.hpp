// The direct algorithms: every rank reads its peers' data where the host
// maps it (HCOMM_VIEW_MAPPED), with no messages: "one_shot" (each rank
// reads every other rank's part itself: allreduce, reduce, broadcast,
// allgather(v), reduce_scatter(_v), barrier) and
// "two_shot" (each rank reduces a 1/n slice, then gathers the others'
// slices). Both decline without mapped memory.
#pragma once

#include <climits>
#include <cstdint>

#include "common/call.hpp"
#include "hcomm/plugin/algorithm.h"

namespace hcomm::algo {

extern const hcomm_algorithm_desc_t kOneShot;
extern const hcomm_algorithm_desc_t kTwoShotAllreduce;

// A direct algorithm of collectives `colls` (a mask of 1 << hcomm_coll_t):
// host memory that the ranks map, 2 ranks or more.
constexpr hcomm_algorithm_desc_t direct_algorithm(const char* name, uint32_t colls,
                                                  decltype(hcomm_algorithm_desc_t::cost) cost,
                                                  decltype(hcomm_algorithm_desc_t::build) build) {
  return {.size = sizeof(hcomm_algorithm_desc_t),
          .name = name,
          .colls = colls,
          .mem_kinds = HCOMM_MEM_HOST,
          .min_bytes = 0,
          .max_bytes = UINT64_MAX,
          .min_ranks = 2,
          .max_ranks = INT_MAX,
          .cost = cost,
          .build = build};
}

// The flags each algorithm raises (match ids; a flag is raised once per
// round, and signals pair by order).
enum DirectSignal : uint32_t {
  // This rank's input is in its window (or its SEND is exposed), or in this
  // signal's payload, whose lines take the flags up to kSliceReduced.
  kInputReady = 0,
  kSliceReduced = HCOMM_SIGNAL_MAX_LINES,  // this rank's reduced slice is in its window
  kDoneReading,                            // this rank read what it needed from the others
};

// How the rounds of a message through the windows split the work.
enum class RoundKind {
  kReduceAll,    // each rank reduces the whole piece (one_shot)
  kReduceSlice,  // each rank reduces its slice and gathers the others' (two_shot)
};

// The pieces a message of `bytes` travels in through windows of
// `window_bytes`: all at once when it fits, else in halves of the window used
// in turn. 0 pieces when not even one element fits.
struct Pieces {
  uint64_t elements;  // per piece
  uint64_t count;     // pieces
  uint64_t slot_bytes;
  static Pieces of(uint64_t elements, size_t elem_size, uint64_t window_bytes);
};

// What a direct builder sees: the call, the communicator's view (its mapped
// memory) and the core's builder (for scratch).
struct DirectCall {
  const Call& call;
  const hcomm_comm_view_t& view;
  hcomm_schedule_builder_t& builder;
};
using DirectBuildFn = void (*)(const DirectCall& direct, ScheduleWriter& out);

// run_builder for a direct algorithm: declines (HCOMM_ERR_UNSUPPORTED) when
// the ranks do not map each other's memory, else runs `build`.
hcomm_result_t run_direct(const char* algorithm, hcomm_coll_t coll, const hcomm_coll_args_t* args,
                          const hcomm_comm_view_t* comm, hcomm_schedule_builder_t* builder,
                          DirectBuildFn build) noexcept;

// Whether a message goes through peers' buffers instead of the windows:
// where ranks may copy from each other's buffers, from kPeerBuffersFrom on.
// Loading a peer's input where it lies (mapped, or one copy by address)
// beats copying it into a window for the peer to read from there from about
// 8 KiB on.
constexpr uint64_t kPeerBuffersFrom = 8 << 10;
inline bool reads_peer_buffers(const hcomm_comm_view_t& view, uint64_t bytes) {
  return (view.flags & HCOMM_VIEW_PEER_BUFFERS) && (bytes >= kPeerBuffersFrom || bytes > view.window_bytes);
}

// A rooted collective (broadcast, reduce, gather, scatter) on more ranks
// than cores, which one_shot leaves to the message algorithms: its ranks
// need not wait for each other, so some run ahead, and their waits for the
// others hold the CPUs the others need.
constexpr bool rooted_oversubscribed(const hcomm_comm_view_t& view, hcomm_coll_t coll) {
  const bool rooted = coll == HCOMM_COLL_BROADCAST || coll == HCOMM_COLL_REDUCE || coll == HCOMM_COLL_GATHER ||
                      coll == HCOMM_COLL_SCATTER;
  return rooted && (view.flags & HCOMM_VIEW_OVERSUBSCRIBED);
}

// one_shot's reduce, broadcast, gather, scatter and alltoall of
// kPeerCollectivesFrom bytes per rank or more, read from the peers' buffers
// (rooted.cpp), where serves_from_peers; their cost, and their schedule.
// Gather, scatter and alltoall it serves no other way.
constexpr uint64_t kPeerCollectivesFrom = 256 << 10;
constexpr bool only_from_peers(hcomm_coll_t coll) {
  return coll == HCOMM_COLL_GATHER || coll == HCOMM_COLL_SCATTER || coll == HCOMM_COLL_ALLTOALL;
}
bool serves_from_peers(const hcomm_comm_view_t& view, hcomm_coll_t coll, uint64_t bytes);
double from_peers_cost(const hcomm_coll_args_t& args, const hcomm_comm_view_t& view);
void build_from_peers(const DirectCall& direct, ScheduleWriter& out);

// An allreduce through the windows, piece by piece.
void build_rounds(const DirectCall& direct, RoundKind kind, ScheduleWriter& out);

// Every rank's data at `src` (a window offset, or SEND) combined in rank
// order into `dst` (x0 op x1, then op x2, ...), so that every rank that does
// it gets the same bits. A peer's data is read after its kInputReady signal;
// this rank's own data and the first write into dst wait for step
// `own_ready`. `unread`: nothing reads the result in this call (the last
// step is marked HCOMM_STEP_UNREAD). Returns the last step.
int32_t reduce_from_all(const Call& call, ScheduleWriter& out, hcomm_bufref_t src, hcomm_bufref_t dst, uint64_t bytes,
                        int32_t own_ready, bool unread);

// This rank's reads of its peers' buffers are done once step `read` is:
// kDoneReading to every peer, then every peer's (its own buffers are read
// until then, and belong to the caller after). Returns the last wait.
int32_t finish_peer_reads(const Call& call, ScheduleWriter& out, int32_t read);

}  // namespace hcomm::algo
