#include "call.hpp"

#include "services.hpp"

#define HCOMM_BAD_ARG(...) HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT, __VA_ARGS__)

namespace hcomm::algo {

namespace {

Call check_call(const char* algorithm, hcomm_coll_t coll, const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm,
                const hcomm_schedule_builder_t* builder) {
  if (!args || !comm || !builder)
    HCOMM_BAD_ARG("%s: args, comm and builder must not be NULL (got %p, %p, %p)", algorithm,
                  static_cast<const void*>(args), static_cast<const void*>(comm), static_cast<const void*>(builder));
  if (args->size < sizeof(hcomm_coll_args_t) || comm->size < sizeof(hcomm_comm_view_t))
    HCOMM_BAD_ARG(
        "%s: args of %zu bytes and comm view of %zu bytes, expected at least %zu and %zu: rebuild the "
        "plugin against this core's headers",
        algorithm, args->size, comm->size, sizeof(hcomm_coll_args_t), sizeof(hcomm_comm_view_t));
  if (args->coll != coll)
    HCOMM_BAD_ARG("%s serves collective %d, asked for args->coll %d", algorithm, static_cast<int>(coll),
                  static_cast<int>(args->coll));
  if (comm->nranks < 1) HCOMM_BAD_ARG("%s: comm->nranks is %d, expected at least 1", algorithm, comm->nranks);
  if (comm->rank < 0 || comm->rank >= comm->nranks)
    HCOMM_BAD_ARG("%s: comm->rank %d is outside 0..%d", algorithm, comm->rank, comm->nranks - 1);
  // A barrier carries no data: its count and element size mean nothing.
  const bool carries_data = coll != HCOMM_COLL_BARRIER;
  if (carries_data && args->count > 0 && args->dtype_size == 0)
    HCOMM_BAD_ARG("%s: args->dtype_size is 0 for %zu elements", algorithm, args->count);
  if (carries_data && args->dtype_size && args->count > UINT64_MAX / args->dtype_size)
    HCOMM_BAD_ARG("%s: args->count %zu of %zu-byte elements overflows 64 bits", algorithm, args->count,
                  args->dtype_size);
  return Call{.algorithm = algorithm,
              .args = *args,
              .nranks = comm->nranks,
              .rank = comm->rank,
              .bytes = carries_data ? static_cast<uint64_t>(args->count) * args->dtype_size : 0};
}

}  // namespace

void check_root(const Call& call) {
  if (call.args.root < 0 || call.args.root >= call.nranks)
    HCOMM_BAD_ARG("%s: args->root %d is not a rank of this communicator (0..%d)", call.algorithm, call.args.root,
                  call.nranks - 1);
}

void check_recv_layout(const Call& call, bool displs) {
  if (!call.args.recv_counts)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT, "%s: args->recv_counts is NULL, expected one count per rank",
                       call.algorithm);
  if (displs && !call.args.recv_displs)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT, "%s: args->recv_displs is NULL, expected one displacement per rank",
                       call.algorithm);
}

void copy_input_to_output(const Call& call, ScheduleWriter& out) {
  if (call.args.in_place) return;
  out.add({.kind = HCOMM_STEP_COPY,
           .src = at(HCOMM_BUF_SEND, 0),
           .dst = at(HCOMM_BUF_RECV, 0),
           .bytes = call.bytes,
           .nchunks = 1});
}

hcomm_result_t run_builder(const char* algorithm, hcomm_coll_t coll, const hcomm_coll_args_t* args,
                           const hcomm_comm_view_t* comm, hcomm_schedule_builder_t* builder, BuildFn build) noexcept {
  bool rejected = false;
  hcomm_result_t result = hcomm::plugin::boundary(services(), [&] {
    Call call = check_call(algorithm, coll, args, comm, builder);
    ScheduleWriter out(builder);
    try {
      build(call, out);
    } catch (const StepRejected&) {
      rejected = true;
    }
  });
  return rejected ? HCOMM_ERR_INTERNAL : result;
}

}  // namespace hcomm::algo
