// Pairwise exchange: n-1 rounds, round k sends to rank + k and receives from
// rank - k, one peer each way at a time, each transfer chunked. Every rank
// takes in one flow at a time, which suits large messages on many ranks.
#include "direct.hpp"
#include "exchange.hpp"

namespace hcomm::algo {

namespace {

void build_pairwise(const Call& call, ScheduleWriter& out) { build_direct_alltoall(call, out, Pacing::kRounds); }

// n-1 rounds one after another, each a message's latency.
double pairwise_cost(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm) {
  return direct_alltoall_cost(*args, *comm, (comm->nranks - 1) * comm->link.alpha_us);
}

hcomm_result_t alltoall_build(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm,
                              hcomm_schedule_builder_t* builder) {
  return run_builder("pairwise alltoall", HCOMM_COLL_ALLTOALL, args, comm, builder, build_pairwise);
}

hcomm_result_t alltoallv_build(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm,
                               hcomm_schedule_builder_t* builder) {
  return run_builder("pairwise alltoallv", HCOMM_COLL_ALLTOALLV, args, comm, builder, build_pairwise);
}

}  // namespace

constinit const hcomm_algorithm_desc_t kPairwiseAlltoall =
    any_size_algorithm("pairwise", HCOMM_COLL_ALLTOALL, pairwise_cost, alltoall_build);
constinit const hcomm_algorithm_desc_t kPairwiseAlltoallv =
    any_size_algorithm("pairwise", HCOMM_COLL_ALLTOALLV, pairwise_cost, alltoallv_build);

}  // namespace hcomm::algo
