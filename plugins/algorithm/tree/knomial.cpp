// The k-nomial algorithms as the core sees them, for each collective:
// "binomial" (radix 2) and "knomial", whose radix is the one among 2, 4 and
// 8 that the cost model prefers for the call. The cost depends only on the
// call's size and the communicator's link model, the same on every rank, so
// every rank builds over the same tree.
#include <iterator>
#include <string>

#include "knomial_collectives.hpp"
#include "tree.hpp"

namespace hcomm::algo {

namespace {

constexpr int kRadices[] = {2, 4, 8};
static_assert(std::size(kRadices) == 3, "kBuildByRadix has one build function per radix");

CostInput cost_input(const hcomm_coll_args_t& args, const hcomm_comm_view_t& comm) {
  return {.nranks = comm.nranks,
          .bytes = static_cast<double>(args.count) * static_cast<double>(args.dtype_size),
          .link = comm.link,
          .op = args.op};
}

// The index in kRadices of the cheapest radix; the smallest of equally cheap ones.
size_t preferred_radix(const KnomialCollective& c, const CostInput& in) {
  size_t best = 0;
  for (size_t i = 1; i < std::size(kRadices); ++i)
    if (c.cost(in, kRadices[i]) < c.cost(in, kRadices[best])) best = i;
  return best;
}

// run_builder takes a plain function: one per collective and radix.
template <const KnomialCollective& C, int Radix>
void build_with_radix(const Call& call, ScheduleWriter& out) {
  C.build(call, out, Radix);
}

template <const KnomialCollective& C>
constexpr BuildFn kBuildByRadix[] = {build_with_radix<C, kRadices[0]>, build_with_radix<C, kRadices[1]>,
                                     build_with_radix<C, kRadices[2]>};
template <const KnomialCollective& C>
double binomial_cost(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm) {
  return C.cost(cost_input(*args, *comm), 2);
}

template <const KnomialCollective& C>
hcomm_result_t binomial_build(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm,
                              hcomm_schedule_builder_t* builder) {
  static const std::string name = std::string("binomial ") + C.name;
  return run_builder(name.c_str(), C.coll, args, comm, builder, build_with_radix<C, 2>);
}

template <const KnomialCollective& C>
double knomial_cost(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm) {
  const CostInput in = cost_input(*args, *comm);
  return C.cost(in, kRadices[preferred_radix(C, in)]);
}

template <const KnomialCollective& C>
hcomm_result_t knomial_build(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm,
                             hcomm_schedule_builder_t* builder) {
  static const std::string name = std::string("knomial ") + C.name;
  // run_builder checks the arguments and reports what is wrong; until then
  // the radix is read only from arguments that can be read.
  const bool readable = args && comm && args->size >= sizeof *args && comm->size >= sizeof *comm && comm->nranks > 0;
  const BuildFn build = kBuildByRadix<C>[readable ? preferred_radix(C, cost_input(*args, *comm)) : 0];
  return run_builder(name.c_str(), C.coll, args, comm, builder, build);
}

template <const KnomialCollective& C>
void add_both(std::vector<hcomm_algorithm_desc_t>& out) {
  for (hcomm_algorithm_desc_t d : {any_size_algorithm("binomial", C.coll, binomial_cost<C>, binomial_build<C>),
                                   any_size_algorithm("knomial", C.coll, knomial_cost<C>, knomial_build<C>)}) {
    if (C.keeps_rank_order) d = keeping_rank_order(d);
    out.push_back(d);
  }
}

}  // namespace

const std::vector<hcomm_algorithm_desc_t>& knomial_algorithms() {
  static const std::vector<hcomm_algorithm_desc_t> all = [] {
    std::vector<hcomm_algorithm_desc_t> v;
    add_both<kKnomialBroadcast>(v);
    add_both<kKnomialReduce>(v);
    add_both<kKnomialGather>(v);
    add_both<kKnomialScatter>(v);
    add_both<kKnomialBarrier>(v);
    add_both<kKnomialOrderedAllreduce>(v);
    return v;
  }();
  return all;
}

}  // namespace hcomm::algo
