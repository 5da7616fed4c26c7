// Recursive doubling scan and exscan (MPICH's MPIR_Scan_intra_recursive_doubling):
// ceil(log2 n) rounds without a fold (patterns.hpp's PrefixDoubling). A rank
// keeps `partial`, the reduction of the ranks it has heard from with its
// own input, and its result; in round k partners exchange their partials.
// The partial that came from the lower partner joins on the left of both
// the partial and the result, one from the higher partner on the right of
// the partial only.
//
// Operand order: the executor's REDUCE computes dst = src op src2 (and
// RECV_REDUCE dst = src op what arrived, which is why the received partial,
// a left operand here, lands in SCRATCH and a REDUCE combines it). Every
// reduction below names as src the value of the lower ranks, so a rank's
// result is ((r_0 op r_1) op ...) op r_rank grouped in ranges of
// consecutive ranks, as an op that does not commute needs.
#include <algorithm>
#include <initializer_list>
#include <vector>

#include "common/call.hpp"
#include "common/patterns.hpp"
#include "common/schedule_writer.hpp"
#include "recursive.hpp"

namespace hcomm::algo {

namespace {

// A value of this rank and the step that wrote it (-1: it was there when the
// call began).
struct Value {
  int32_t step = -1;
  hcomm_bufref_t at{};
};

// The schedule of one rank; exclusive is exscan.
class ScanWriter {
 public:
  ScanWriter(const Call& call, bool exclusive, ScheduleWriter& out)
      : call_(call),
        exclusive_(exclusive),
        out_(out),
        pattern_(call.nranks, call.rank),
        nchunks_(out.chunks(call.bytes, call.args.dtype_size)),
        received_(at(HCOMM_BUF_SCRATCH, 0)),
        partial_store_(at(HCOMM_BUF_SCRATCH, call.bytes)) {}

  void build() {
    partial_ = {-1, at(HCOMM_BUF_SEND, 0)};
    // A scan's result is the partial until a higher partner joins the partial.
    result_is_partial_ = !exclusive_;
    for (int round = 0; round < pattern_.rounds(); ++round)
      if (const int partner = pattern_.partner(round); partner >= 0) exchange(round, partner);
    if (!exclusive_ && result_is_partial_ && partial_.at.buffer == HCOMM_BUF_SEND && !call_.args.in_place)
      add(step(HCOMM_STEP_COPY, -1, 0, partial_.at, {}, at(HCOMM_BUF_RECV, 0)), {});  // rank 0: its own input
    else if (!exclusive_ && !result_is_partial_ && result_.at.buffer == HCOMM_BUF_SEND && !call_.args.in_place)
      add(step(HCOMM_STEP_COPY, -1, 0, result_.at, {}, at(HCOMM_BUF_RECV, 0)), {result_.step});
    out_.need_scratch(scratch_);
  }

 private:
  hcomm_step_t step(hcomm_step_kind_t kind, int peer, uint32_t match, hcomm_bufref_t src, hcomm_bufref_t src2,
                    hcomm_bufref_t dst) const {
    return {.kind = kind,
            .peer = peer,
            .match = match,
            .src = src,
            .src2 = src2,
            .dst = dst,
            .bytes = call_.bytes,
            .nchunks = nchunks_};
  }

  // Adds s after `deps` (chunk-wise: every step has the same bytes and chunks)
  // and after whatever still reads the caller's buffer it writes; records
  // what it reads of SEND and RECV.
  int32_t add(hcomm_step_t s, std::initializer_list<int32_t> deps) {
    for (int32_t d : deps) wait_for_step(s, d, true);
    const bool writes = s.kind == HCOMM_STEP_RECV || s.kind == HCOMM_STEP_REDUCE || s.kind == HCOMM_STEP_COPY;
    const bool writes_recv = writes && s.dst.buffer == HCOMM_BUF_RECV;
    if (writes_recv) {
      // In place SEND is RECV: its readers read what this step overwrites.
      for (int32_t r : readers_[HCOMM_BUF_RECV]) wait_for_step(s, r, true);
      if (call_.args.in_place)
        for (int32_t r : readers_[HCOMM_BUF_SEND]) wait_for_step(s, r, true);
    }
    const int32_t index = out_.add(s);
    if (writes_recv) {
      // Later writers of RECV follow this one, hence its readers too.
      readers_[HCOMM_BUF_RECV].clear();
      if (call_.args.in_place) readers_[HCOMM_BUF_SEND].clear();
    }
    auto read = [&](const hcomm_bufref_t& r) {
      if (r.buffer == HCOMM_BUF_SEND || r.buffer == HCOMM_BUF_RECV) readers_[r.buffer].push_back(index);
    };
    if (s.kind == HCOMM_STEP_SEND || s.kind == HCOMM_STEP_REDUCE || s.kind == HCOMM_STEP_COPY) read(s.src);
    if (s.kind == HCOMM_STEP_REDUCE) read(s.src2);
    return index;
  }

  // dst = left op right into SCRATCH's partial; it overwrites the partial
  // being sent, when it is there.
  Value combine_partial(const Value& left, const Value& right, int32_t sent) {
    scratch_ = 2 * call_.bytes;
    const int32_t s =
        add(step(HCOMM_STEP_REDUCE, -1, 0, left.at, right.at, partial_store_), {left.step, right.step, sent});
    return {s, partial_store_};
  }

  void exchange(int round, int partner) {
    const uint32_t match = static_cast<uint32_t>(round);
    const bool lower = partner < call_.rank;  // the partner's ranks come before this rank's
    // A rank needs its partial only to send it on: the partner's comes when
    // this rank meets another partner later, or when it is the higher one.
    const bool keep = pattern_.meets_after(call_.rank, round);
    const bool send = !lower || pattern_.meets_after(partner, round);
    const bool receive = lower || keep;
    int32_t sent = -1;
    if (send) sent = add(step(HCOMM_STEP_SEND, partner, match, partial_.at, {}, {}), {partial_.step});
    if (!receive) return;
    // Where the partner's partial lands: SCRATCH, after the steps that read
    // the last one there; an exscan's first result goes straight to RECV
    // where RECV holds nothing still needed.
    const bool direct =
        exclusive_ && lower && !has_result_ && !(call_.args.in_place && partial_.at.buffer == HCOMM_BUF_SEND);
    hcomm_step_t recv = step(HCOMM_STEP_RECV, partner, match, {}, {}, direct ? at(HCOMM_BUF_RECV, 0) : received_);
    if (!direct) {
      scratch_ = std::max(scratch_, call_.bytes);
      for (int32_t r : received_readers_) wait_for_step(recv, r, true);
      received_readers_.clear();
    }
    const Value theirs = {add(recv, {}), recv.dst};
    if (!lower) {
      if (keep) {
        const Value joined = combine_partial(partial_, theirs, partial_.at.buffer == HCOMM_BUF_SCRATCH ? sent : -1);
        received_readers_.push_back(joined.step);
        if (result_is_partial_) result_ = partial_;
        result_is_partial_ = false;
        partial_ = joined;
      }
      return;
    }
    if (result_is_partial_) {  // scan: one reduction gives both
      const int32_t s = add(step(HCOMM_STEP_REDUCE, -1, 0, theirs.at, partial_.at, at(HCOMM_BUF_RECV, 0)),
                            {theirs.step, partial_.step});
      received_readers_.push_back(s);
      partial_ = result_ = {s, at(HCOMM_BUF_RECV, 0)};
      return;
    }
    Value result = theirs;
    if (has_result_ || !exclusive_) {
      const int32_t s = add(step(HCOMM_STEP_REDUCE, -1, 0, theirs.at, result_.at, at(HCOMM_BUF_RECV, 0)),
                            {theirs.step, result_.step});
      received_readers_.push_back(s);
      result = {s, at(HCOMM_BUF_RECV, 0)};
    }
    if (keep) {
      const Value joined = combine_partial(theirs, partial_, partial_.at.buffer == HCOMM_BUF_SCRATCH ? sent : -1);
      if (!direct) received_readers_.push_back(joined.step);
      partial_ = joined;
    }
    if (result.at.buffer == HCOMM_BUF_SCRATCH) {  // an exscan's first result, kept from SEND's bytes in place
      const int32_t s = add(step(HCOMM_STEP_COPY, -1, 0, theirs.at, {}, at(HCOMM_BUF_RECV, 0)), {theirs.step});
      received_readers_.push_back(s);
      result = {s, at(HCOMM_BUF_RECV, 0)};
    }
    result_ = result;
    has_result_ = true;
  }

  const Call& call_;
  bool exclusive_;
  ScheduleWriter& out_;
  PrefixDoubling pattern_;
  uint32_t nchunks_;
  hcomm_bufref_t received_;       // the partner's partial: SCRATCH [0, B)
  hcomm_bufref_t partial_store_;  // this rank's partial once combined: SCRATCH [B, 2B)
  uint64_t scratch_ = 0;
  Value partial_, result_;
  bool result_is_partial_ = false;
  bool has_result_ = false;                // exscan: a lower partner's partial arrived
  std::vector<int32_t> readers_[2];        // steps that read SEND, RECV since RECV was last written
  std::vector<int32_t> received_readers_;  // steps that read the partner's partial in SCRATCH
};

void build_scan(const Call& call, ScheduleWriter& out) {
  if (call.bytes == 0) return;
  ScanWriter(call, false, out).build();
}

void build_exscan(const Call& call, ScheduleWriter& out) {
  if (call.bytes == 0) return;
  ScanWriter(call, true, out).build();
}

// ceil(log2 n) rounds of the whole message, each sent, received and reduced
// twice (partial and result) on the slowest link; a lone rank's scan copies
// unless in place.
double scan_cost(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm) {
  const double bytes = static_cast<double>(args->count) * static_cast<double>(args->dtype_size);
  const hcomm_link_model_t& l = comm->link;
  if (comm->nranks <= 1) return args->in_place || args->coll == HCOMM_COLL_EXSCAN ? 0.0 : bytes * l.gamma_us_per_byte;
  return ceil_log2(comm->nranks) * (l.alpha_us + bytes * (l.beta_us_per_byte + 2 * l.gamma_us_per_byte));
}

hcomm_result_t scan_build(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm,
                          hcomm_schedule_builder_t* builder) {
  return run_builder("recursive_doubling scan", HCOMM_COLL_SCAN, args, comm, builder, build_scan);
}

hcomm_result_t exscan_build(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm,
                            hcomm_schedule_builder_t* builder) {
  return run_builder("recursive_doubling exscan", HCOMM_COLL_EXSCAN, args, comm, builder, build_exscan);
}

}  // namespace

// Lower ranks' data always the left operand: an op that does not commute too.
constinit const hcomm_algorithm_desc_t kRecursiveDoublingScan =
    keeping_rank_order(any_size_algorithm("recursive_doubling", HCOMM_COLL_SCAN, scan_cost, scan_build));
constinit const hcomm_algorithm_desc_t kRecursiveDoublingExscan =
    keeping_rank_order(any_size_algorithm("recursive_doubling", HCOMM_COLL_EXSCAN, scan_cost, exscan_build));

}  // namespace hcomm::algo
