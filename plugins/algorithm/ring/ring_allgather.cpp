// Ring allgather and allgatherv: n - 1 steps around the ring, each block
// forwarded chunk by chunk as it arrives, so that every link is busy at once.
#include "cost.hpp"
#include "hcomm/plugin/layout.hpp"
#include "ring.hpp"
#include "schedule.hpp"

namespace hcomm::algo {

namespace {

// A pass with first = rank: step 0 sends this rank's own block from SEND
// (which is RECV's block rank when in place), and every received block lands
// in its place in RECV, from where it is forwarded. Not in place, the own
// block is copied to RECV beside the pass. Each block has its own chunk
// count, so a small block of allgatherv is not cut finer than it needs.
void build_allgather(const Call& call, ScheduleWriter& out) {
  const int n = call.nranks;
  const size_t es = call.args.dtype_size;
  const plugin::BlockLayout blocks = plugin::BlockLayout::recv(call.args, n);
  copy_unless_in_place(call, out, at(HCOMM_BUF_SEND, 0), at(HCOMM_BUF_RECV, blocks.offset(call.rank)),
                       blocks.bytes(call.rank));
  const RingPass pass = {
      .steps = static_cast<uint32_t>(n - 1),
      .first = call.rank,
      .bytes = [&](int block) { return blocks.bytes(block); },
      .chunks = [&](int block) { return out.chunks(blocks.bytes(block), es); },
      .input = [&](int) { return at(HCOMM_BUF_SEND, 0); },
      .receive = [&](uint32_t, int block, hcomm_step_t& recv) { recv.dst = at(HCOMM_BUF_RECV, blocks.offset(block)); },
  };
  add_ring_pass(pass, Ring(n, call.rank), out);
}

void build_allgatherv(const Call& call, ScheduleWriter& out) {
  check_recv_layout(call, true);
  build_allgather(call, out);
}

// B is the whole output: (n-1)(alpha + beta B/n) for equal blocks.
double allgather_cost(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm) {
  const plugin::BlockLayout blocks = plugin::BlockLayout::recv(*args, comm->nranks);
  if (comm->nranks <= 1) return lone_rank_cost(*args, blocks.total_bytes(), comm->link);
  return ring_pass_cost(blocks, comm->nranks, comm->link.alpha_us, comm->link.beta_us_per_byte);
}

hcomm_result_t allgather_build(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm,
                               hcomm_schedule_builder_t* builder) {
  return run_builder("ring allgather", HCOMM_COLL_ALLGATHER, args, comm, builder, build_allgather);
}

hcomm_result_t allgatherv_build(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm,
                                hcomm_schedule_builder_t* builder) {
  return run_builder("ring allgatherv", HCOMM_COLL_ALLGATHERV, args, comm, builder, build_allgatherv);
}

}  // namespace

constinit const hcomm_algorithm_desc_t kRingAllgather =
    any_size_algorithm("ring", HCOMM_COLL_ALLGATHER, allgather_cost, allgather_build, kMaxRingPassRanks);
constinit const hcomm_algorithm_desc_t kRingAllgatherv =
    any_size_algorithm("ring", HCOMM_COLL_ALLGATHERV, allgather_cost, allgatherv_build, kMaxRingPassRanks);

}  // namespace hcomm::algo
