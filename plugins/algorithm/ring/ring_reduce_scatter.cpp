// Ring reduce-scatter and reduce_scatter_v: n - 1 steps of receive-reduce
// around the ring, each partial sum forwarded chunk by chunk as it is
// reduced, so that every link and every rank's reductions work at once.
#include "cost.hpp"
#include "hcomm/plugin/layout.hpp"
#include "ring.hpp"
#include "schedule.hpp"

namespace hcomm::algo {

namespace {

// A pass with first = rank - 1, so that the block received last is this
// rank's own: block b starts at rank b + 1, which sends its input from SEND,
// and gathers one rank's input per hop until it reaches rank b. Partial sums
// are kept in SCRATCH (SEND is the caller's), one slot per block that passes
// through, in the order they arrive; the last reduction writes RECV. In
// place, RECV is SEND's block rank, which only that last reduction reads.
void build_reduce_scatter(const Call& call, ScheduleWriter& out) {
  const int n = call.nranks;
  const size_t es = call.args.dtype_size;
  const plugin::BlockLayout blocks = plugin::BlockLayout::send(call.args, n);
  if (n == 1) {
    copy_unless_in_place(call, out, at(HCOMM_BUF_SEND, blocks.offset(0)), at(HCOMM_BUF_RECV, 0), blocks.bytes(0));
    return;
  }
  const uint32_t steps = static_cast<uint32_t>(n - 1);
  uint64_t slot = 0;  // where the next partial sum goes in SCRATCH
  const RingPass pass = {
      .steps = steps,
      .first = wrap(int64_t{call.rank} - 1, n),
      .bytes = [&](int block) { return blocks.bytes(block); },
      .chunks = [&](int block) { return out.chunks(blocks.bytes(block), es); },
      .input = [&](int block) { return at(HCOMM_BUF_SEND, blocks.offset(block)); },
      .receive =
          [&](uint32_t t, int block, hcomm_step_t& recv) {
            recv.kind = HCOMM_STEP_RECV_REDUCE;
            recv.src = at(HCOMM_BUF_SEND, blocks.offset(block));
            if (t + 1 == steps) {
              recv.dst = at(HCOMM_BUF_RECV, 0);
              recv.flags = HCOMM_STEP_FINAL;
              return;
            }
            recv.dst = at(HCOMM_BUF_SCRATCH, slot);
            slot += recv.bytes;
          },
  };
  add_ring_pass(pass, Ring(n, call.rank), out);
  if (slot > 0) out.need_scratch(slot);
}

void build_reduce_scatter_v(const Call& call, ScheduleWriter& out) {
  check_recv_layout(call, false);
  build_reduce_scatter(call, out);
}

// B is the whole input: (n-1)(alpha + (beta + gamma) B/n) for equal blocks.
double reduce_scatter_cost(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm) {
  const plugin::BlockLayout blocks = plugin::BlockLayout::send(*args, comm->nranks);
  const hcomm_link_model_t& link = comm->link;
  if (comm->nranks <= 1) return lone_rank_cost(*args, blocks.total_bytes(), link);
  return ring_pass_cost(blocks, comm->nranks, link.alpha_us, link.beta_us_per_byte + link.gamma_us_per_byte);
}

hcomm_result_t reduce_scatter_build(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm,
                                    hcomm_schedule_builder_t* builder) {
  return run_builder("ring reduce_scatter", HCOMM_COLL_REDUCE_SCATTER, args, comm, builder, build_reduce_scatter);
}

hcomm_result_t reduce_scatter_v_build(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm,
                                      hcomm_schedule_builder_t* builder) {
  return run_builder("ring reduce_scatter_v", HCOMM_COLL_REDUCE_SCATTER_V, args, comm, builder, build_reduce_scatter_v);
}

}  // namespace

constinit const hcomm_algorithm_desc_t kRingReduceScatter =
    any_size_algorithm("ring", HCOMM_COLL_REDUCE_SCATTER, reduce_scatter_cost, reduce_scatter_build, kMaxRingPassRanks);
constinit const hcomm_algorithm_desc_t kRingReduceScatterV =
    any_size_algorithm("ring", HCOMM_COLL_REDUCE_SCATTER_V, reduce_scatter_cost, reduce_scatter_v_build, kMaxRingPassRanks);

}  // namespace hcomm::algo
