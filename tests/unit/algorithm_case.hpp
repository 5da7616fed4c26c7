// One collective call on every rank of a communicator, as the conformance
// harness describes it (collective, ranks, count, root, in place, chunking,
// element type and op, communicator view), the per-rank arguments the core
// would pass for it, and a schedule builder that records what a plugin adds.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/algorithm/composition.hpp"
#include "core/algorithm/selector.hpp"
#include "hcomm/plugin/algorithm.h"

namespace hcomm::algotest {

// Where a collective's in-place input lies (see algorithm.h).
enum class InPlace {
  kNone,             // no in-place form (barrier)
  kSendIsRecv,       // SEND is RECV: allreduce, broadcast, reduce, alltoall(v)
  kSendInRecvBlock,  // SEND is RECV's block of this rank: allgather(v), gather
  kRecvInSendBlock,  // RECV is SEND's block of this rank: reduce_scatter(_v), scatter
};

struct CollTraits {
  hcomm_coll_t coll;
  const char* name;
  bool rooted;
  bool reduces;
  bool variable;  // the v-collectives: per-rank count arrays, count 0
  InPlace in_place;
  bool rank_order = false;  // reduces in rank order (scan, exscan): tried with kRankOrderOp, never AVG
};

// The traits of one of the collectives with a schedule; nullptr for others.
const CollTraits* coll_traits(hcomm_coll_t coll);

// How the test builder answers chunks_for.
struct Chunking {
  const char* name;
  uint32_t (*rule)(uint64_t bytes, size_t elem_size);
};
extern const std::vector<Chunking> kChunkings;

// The communicator view an algorithm builds for.
struct View {
  const char* name;
  uint32_t flags;  // hcomm_view_flags_t
  uint64_t window_bytes;
  // Each rank's host (the view's node_of, hosts numbered by lowest rank),
  // for communicators of up to node_of.size() ranks (a prefix serves the
  // smaller ones); a larger communicator's view leaves nnodes and node_of unset.
  std::vector<int> node_of = {};
};
extern const std::vector<View> kViews;

struct Workload {
  hcomm_dtype_t dtype;
  hcomm_op_t op;
};
size_t dtype_size(hcomm_dtype_t dtype);  // of the types the harness runs: int64, float32, Record
// Whether `algo` lists `coll` in ordered_colls: it combines calls of a user
// op that does not commute in rank order.
bool keeps_rank_order(const hcomm_algorithm_desc_t& algo, hcomm_coll_t coll);
std::string workload_name(const Workload& w, bool reduces);

struct Case {
  hcomm_coll_t coll;
  int nranks;
  uint64_t count;  // v-collectives: the mean of the random counts
  int root;
  bool in_place;  // at the root for rooted collectives
  const Chunking* chunking;
  Workload workload;
  const View* view;
  uint32_t seed;  // counts and displacements of v-collectives, simulation order

  std::string describe() const;
};

// The arguments of every rank for one case, with the count arrays they point
// to. Rooted collectives other than broadcast are in place at the root only;
// a broadcast's non-roots read no SEND, so their flag is the opposite of the
// root's, which catches an algorithm that takes the root's flag for its own.
// v-collectives get random counts (zeros among them) and every rank its own
// displacements: blocks in a shuffled order with gaps between them.
class CallArgs {
 public:
  explicit CallArgs(const Case& c);
  CallArgs(const CallArgs&) = delete;
  CallArgs& operator=(const CallArgs&) = delete;

  const hcomm_coll_args_t& at(int rank) const { return args_[static_cast<size_t>(rank)]; }
  int nranks() const { return static_cast<int>(args_.size()); }

 private:
  struct Arrays {
    std::vector<size_t> send_counts, send_displs, recv_counts, recv_displs;
  };
  std::vector<Arrays> arrays_;
  std::vector<hcomm_coll_args_t> args_;
};

hcomm_comm_view_t comm_view(int nranks, int rank, const View& view);

// The steps and scratch one rank's build produced.
struct RankSchedule {
  std::vector<hcomm_step_t> steps;
  uint64_t scratch = 0;
};

// Whether any rank's schedule publishes its RECV (HCOMM_STEP_PUBLISH).
bool publishes_recv(const std::vector<RankSchedule>& ranks);

// A builder as the core's: records steps and scratch, answers chunk counts by
// rule; `reject` refuses every step, as a builder out of memory would. Parts
// (add_coll) are built as the core builds them, by the selector of their
// group among the loaded plugins' algorithms on `view`'s groups; without a
// view they are refused. finish() lays out the parts' scratch.
class TestBuilder {
 public:
  TestBuilder(RankSchedule& out, const Chunking& chunking, bool reject = false,
              const hcomm_comm_view_t* view = nullptr);
  hcomm_schedule_builder_t* c() { return &c_; }
  void finish();

 private:
  RankSchedule& out_;
  const Chunking& chunking_;
  bool reject_;
  const hcomm_comm_view_t* view_;
  algorithm::Composition composition_;
  hcomm_schedule_builder_t c_{};
};

// Every rank's build of one case.
struct Built {
  std::vector<RankSchedule> ranks;
  std::vector<hcomm_result_t> results;
  std::vector<std::string> errors;  // the plugin's text for each failed rank

  bool all(hcomm_result_t r) const;
};
Built build_all(const hcomm_algorithm_desc_t& algo, const CallArgs& args, const Case& c);

}  // namespace hcomm::algotest
