#include "algorithm_case.hpp"

#include <algorithm>
#include <cstddef>
#include <map>
#include <memory>
#include <numeric>
#include <random>
#include <sstream>

#include "algorithm_plugins.hpp"
#include "algorithm_values.hpp"

namespace hcomm::algotest {

namespace {

const CollTraits kColls[] = {
    {HCOMM_COLL_ALLREDUCE, "allreduce", false, true, false, InPlace::kSendIsRecv},
    {HCOMM_COLL_BROADCAST, "broadcast", true, false, false, InPlace::kSendIsRecv},
    {HCOMM_COLL_REDUCE, "reduce", true, true, false, InPlace::kSendIsRecv},
    {HCOMM_COLL_ALLGATHER, "allgather", false, false, false, InPlace::kSendInRecvBlock},
    {HCOMM_COLL_REDUCE_SCATTER, "reduce_scatter", false, true, false, InPlace::kRecvInSendBlock},
    {HCOMM_COLL_ALLTOALL, "alltoall", false, false, false, InPlace::kSendIsRecv},
    {HCOMM_COLL_GATHER, "gather", true, false, false, InPlace::kSendInRecvBlock},
    {HCOMM_COLL_SCATTER, "scatter", true, false, false, InPlace::kRecvInSendBlock},
    {HCOMM_COLL_BARRIER, "barrier", false, false, false, InPlace::kNone},
    {HCOMM_COLL_ALLGATHERV, "allgatherv", false, false, true, InPlace::kSendInRecvBlock},
    {HCOMM_COLL_REDUCE_SCATTER_V, "reduce_scatter_v", false, true, true, InPlace::kRecvInSendBlock},
    {HCOMM_COLL_ALLTOALLV, "alltoallv", false, false, true, InPlace::kSendIsRecv},
    {HCOMM_COLL_SCAN, "scan", false, true, false, InPlace::kSendIsRecv, true},
    {HCOMM_COLL_EXSCAN, "exscan", false, true, false, InPlace::kSendIsRecv, true},
};

// A count for one block of a v-collective: a quarter of them 0, the others
// spread around `mean`.
size_t random_count(std::mt19937& rng, uint64_t mean) {
  if (mean == 0 || rng() % 4 == 0) return 0;
  return 1 + rng() % (2 * mean);
}

// Displacements for blocks of `counts`: the blocks in a shuffled order, each
// after a gap of 0 to 2 elements.
std::vector<size_t> scattered_displs(const std::vector<size_t>& counts, std::mt19937& rng) {
  std::vector<size_t> order(counts.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<size_t> displs(counts.size());
  size_t at = 0;
  for (size_t b : order) {
    at += rng() % 3;
    displs[b] = at;
    at += counts[b];
  }
  return displs;
}

const size_t* data_or_null(const std::vector<size_t>& v) { return v.empty() ? nullptr : v.data(); }

}  // namespace

const CollTraits* coll_traits(hcomm_coll_t coll) {
  for (const CollTraits& t : kColls)
    if (t.coll == coll) return &t;
  return nullptr;
}

const std::vector<Chunking> kChunkings = {
    {"whole", [](uint64_t, size_t) { return 1u; }},
    {"24B",
     [](uint64_t bytes, size_t elem) {
       const uint64_t per_chunk = std::max<uint64_t>(1, 24 / elem);
       return static_cast<uint32_t>((bytes / elem + per_chunk - 1) / per_chunk);
     }},
    {"element", [](uint64_t bytes, size_t elem) { return static_cast<uint32_t>(bytes / elem); }},
    // More chunks than small blocks have elements.
    {"fixed5", [](uint64_t, size_t) { return 5u; }},
};

// Without mapping; a host whose ranks map windows and buffers and carry
// signals' payloads; the same with a window too small for most messages and
// no payloads, so that an algorithm must fall back or decline; windows and
// payloads but no peer buffers; ranks on several hosts, uneven
// and interleaved (two ranks: one host).
const std::vector<View> kViews = {
    {"plain", 0, 0},
    {"mapped64K", HCOMM_VIEW_MAPPED | HCOMM_VIEW_PEER_BUFFERS | HCOMM_VIEW_SIGNAL_PAYLOAD, 64 * 1024},
    {"mapped256B", HCOMM_VIEW_MAPPED | HCOMM_VIEW_PEER_BUFFERS, 256},
    {"windows64K", HCOMM_VIEW_MAPPED | HCOMM_VIEW_SIGNAL_PAYLOAD, 64 * 1024},
    {"hosts", 0, 0, {0, 0, 1, 1, 0, 2, 1, 2, 0, 3, 3, 1, 2, 3, 0, 1, 2}},
};

size_t dtype_size(hcomm_dtype_t dtype) {
  if (dtype == kRecordDtype) return sizeof(Record);
  return dtype == HCOMM_FLOAT32 ? 4 : dtype == HCOMM_INT64 ? 8 : 1;
}

bool keeps_rank_order(const hcomm_algorithm_desc_t& algo, hcomm_coll_t coll) {
  return algo.size >= offsetof(hcomm_algorithm_desc_t, ordered_colls) + sizeof algo.ordered_colls &&
         (algo.ordered_colls & (1u << coll));
}

std::string workload_name(const Workload& w, bool reduces) {
  static const char* const kOps[] = {"sum", "prod", "min", "max", "avg"};
  if (w.dtype == kRecordDtype)
    return reduces ? (w.op == HCOMM_OP_USER_ORDERED ? "record_ordered" : "record_commutative") : "record";
  std::string name = w.dtype == HCOMM_FLOAT32 ? "float32" : w.dtype == HCOMM_INT64 ? "int64" : "uint8";
  if (!reduces) return name;
  return name + "_" + (w.op == kRankOrderOp ? "rank_order" : kOps[w.op]);
}

std::string Case::describe() const {
  const CollTraits& t = *coll_traits(coll);
  std::ostringstream s;
  s << t.name << " nranks " << nranks;
  if (coll != HCOMM_COLL_BARRIER) s << (t.variable ? " mean count " : " count ") << count;
  if (t.rooted) s << " root " << root;
  if (t.in_place != InPlace::kNone) s << (in_place ? " in place" : " not in place");
  s << " chunks " << chunking->name;
  if (coll != HCOMM_COLL_BARRIER) s << " " << workload_name(workload, t.reduces);
  s << " view " << view->name << " seed " << seed;
  return s.str();
}

CallArgs::CallArgs(const Case& c) : arrays_(static_cast<size_t>(c.nranks)) {
  const CollTraits& t = *coll_traits(c.coll);
  const size_t n = static_cast<size_t>(c.nranks);
  std::mt19937 rng(c.seed);
  if (c.coll == HCOMM_COLL_ALLTOALLV) {
    // sent[q][b]: what q sends to b. In place every rank sends with its
    // receive layout, so what q sends to b is what q receives from b.
    std::vector<std::vector<size_t>> sent(n, std::vector<size_t>(n));
    for (size_t q = 0; q < n; ++q)
      for (size_t b = 0; b < n; ++b) sent[q][b] = c.in_place && b < q ? sent[b][q] : random_count(rng, c.count);
    for (size_t q = 0; q < n; ++q) {
      Arrays& a = arrays_[q];
      for (size_t b = 0; b < n; ++b) a.recv_counts.push_back(sent[b][q]);
      a.recv_displs = scattered_displs(a.recv_counts, rng);
      if (c.in_place) continue;  // the core passes no send layout
      a.send_counts = sent[q];
      a.send_displs = scattered_displs(a.send_counts, rng);
    }
  } else if (t.variable) {
    std::vector<size_t> counts(n);
    for (size_t& count : counts) count = random_count(rng, c.count);
    for (Arrays& a : arrays_) {
      a.recv_counts = counts;
      if (c.coll == HCOMM_COLL_ALLGATHERV) a.recv_displs = scattered_displs(counts, rng);
    }
  }
  const bool barrier = c.coll == HCOMM_COLL_BARRIER;
  for (int r = 0; r < c.nranks; ++r) {
    // As the core decides it: a barrier has no buffers; a broadcast's
    // non-roots read no SEND, which resolves to RECV.
    bool in_place = c.in_place;
    if (barrier || (c.coll == HCOMM_COLL_BROADCAST && r != c.root))
      in_place = true;
    else if (t.rooted && r != c.root)
      in_place = false;
    const Arrays& a = arrays_[static_cast<size_t>(r)];
    const hcomm_dtype_t dtype = barrier ? HCOMM_UINT8 : c.workload.dtype;
    args_.push_back({.size = sizeof(hcomm_coll_args_t),
                     .coll = c.coll,
                     .count = t.variable ? 0 : c.count,
                     .dtype = dtype,
                     .dtype_size = dtype_size(dtype),
                     .op = t.reduces ? c.workload.op : HCOMM_SUM,
                     .root = c.root,
                     .in_place = in_place ? 1 : 0,
                     .mem_kind = HCOMM_MEM_HOST,
                     .send_counts = data_or_null(a.send_counts),
                     .send_displs = data_or_null(a.send_displs),
                     .recv_counts = data_or_null(a.recv_counts),
                     .recv_displs = data_or_null(a.recv_displs)});
  }
}

hcomm_comm_view_t comm_view(int nranks, int rank, const View& view) {
  const bool mapped = view.flags & HCOMM_VIEW_MAPPED;
  hcomm_comm_view_t comm = {
      .size = sizeof(hcomm_comm_view_t),
      .rank = rank,
      .nranks = nranks,
      .link = {.alpha_us = 5.0, .beta_us_per_byte = 1e-4, .gamma_us_per_byte = 2e-5},
      .flags = view.flags,
      .window_bytes = view.window_bytes,
      .mapped = mapped ? hcomm_link_model_t{.alpha_us = 0.5, .beta_us_per_byte = 5e-5, .gamma_us_per_byte = 2e-5}
                       : hcomm_link_model_t{}};
  if (view.node_of.size() < static_cast<size_t>(nranks) || nranks < 1) return comm;
  // Hosts as the first nranks entries of node_of say, with a faster link
  // inside each; `link` stays the slowest.
  comm.nnodes = *std::max_element(view.node_of.begin(), view.node_of.begin() + nranks) + 1;
  comm.node_of = view.node_of.data();
  comm.intra = {.alpha_us = 1.0, .beta_us_per_byte = 2e-5, .gamma_us_per_byte = 2e-5};
  comm.inter = comm.link;
  return comm;
}

namespace {

// The selector of a view, made once per distinct view: its score map and
// its groups' are the costly part of a build with parts. It keeps its own
// copy of the view's node_of.
const algorithm::Selector& selector_for(const hcomm_comm_view_t& view) {
  struct Entry {
    std::vector<int> node_of;
    std::unique_ptr<algorithm::Selector> selector;
  };
  static std::map<std::vector<int64_t>, Entry> cache;
  const int nodes = view.node_of ? view.nranks : 0;
  std::vector<int64_t> key = {view.rank, view.nranks, view.flags, static_cast<int64_t>(view.window_bytes),
                              view.nnodes, static_cast<int64_t>(view.chunk_bytes)};
  for (int r = 0; r < nodes; ++r) key.push_back(view.node_of[r]);
  Entry& e = cache[key];
  if (!e.selector) {
    e.node_of.assign(view.node_of, view.node_of + nodes);
    hcomm_comm_view_t copy = view;
    copy.node_of = view.node_of ? e.node_of.data() : nullptr;
    e.selector = std::make_unique<algorithm::Selector>(copy, std::vector<algorithm::TuneRule>{},
                                                       AlgorithmPlugins::get().algorithms());
  }
  return *e.selector;
}

}  // namespace

TestBuilder::TestBuilder(RankSchedule& out, const Chunking& chunking, bool reject, const hcomm_comm_view_t* view)
    : out_(out), chunking_(chunking), reject_(reject), view_(view) {
  c_.ctx = this;
  c_.add = [](hcomm_schedule_builder_t* b, const hcomm_step_t* step) {
    auto* self = static_cast<TestBuilder*>(b->ctx);
    if (self->reject_) return int32_t{-1};
    self->out_.steps.push_back(*step);
    return static_cast<int32_t>(self->out_.steps.size() - 1);
  };
  c_.need_scratch = [](hcomm_schedule_builder_t* b, uint64_t bytes) {
    auto* self = static_cast<TestBuilder*>(b->ctx);
    self->out_.scratch = std::max(self->out_.scratch, bytes);
  };
  c_.chunks_for = [](hcomm_schedule_builder_t* b, uint64_t bytes, size_t elem) {
    return static_cast<TestBuilder*>(b->ctx)->chunking_.rule(bytes, elem);
  };
  c_.add_coll = [](hcomm_schedule_builder_t* b, const hcomm_coll_part_t* part) {
    auto* self = static_cast<TestBuilder*>(b->ctx);
    if (self->reject_ || !self->view_ || !part) return int32_t{-1};
    try {
      return selector_for(*self->view_).add_part(*part, self->out_.steps, self->composition_, 0);
    } catch (const std::exception& e) {
      plugin_error_text() = e.what();
      return int32_t{-1};
    }
  };
}

void TestBuilder::finish() { out_.scratch = composition_.place_scratch(out_.steps, out_.scratch); }

bool Built::all(hcomm_result_t r) const {
  return std::all_of(results.begin(), results.end(), [&](hcomm_result_t x) { return x == r; });
}

Built build_all(const hcomm_algorithm_desc_t& algo, const CallArgs& args, const Case& c) {
  Built out;
  out.ranks.resize(static_cast<size_t>(c.nranks));
  for (int r = 0; r < c.nranks; ++r) {
    const hcomm_comm_view_t comm = comm_view(c.nranks, r, *c.view);
    TestBuilder builder(out.ranks[static_cast<size_t>(r)], *c.chunking, false, &comm);
    plugin_error_text().clear();
    out.results.push_back(algo.build(&args.at(r), &comm, builder.c()));
    builder.finish();
    out.errors.push_back(out.results.back() == HCOMM_SUCCESS ? "" : plugin_error_text());
  }
  return out;
}

bool publishes_recv(const std::vector<RankSchedule>& ranks) {
  for (const RankSchedule& r : ranks)
    for (const hcomm_step_t& s : r.steps)
      if (s.flags & HCOMM_STEP_PUBLISH) return true;
  return false;
}

}  // namespace hcomm::algotest
