#include "direct.hpp"
#include "common/services.hpp"

namespace hcomm::algo {

namespace {

// run_builder hands its BuildFn the call only: the view and the builder of
// the build in progress wait here (one build per thread at a time).
struct Pending {
  const hcomm_comm_view_t* view;
  hcomm_schedule_builder_t* builder;
  DirectBuildFn build;
};
thread_local Pending t_pending;

void build_pending(const Call& call, ScheduleWriter& out) {
  const Pending p = t_pending;
  if (!(p.view->flags & HCOMM_VIEW_MAPPED))
    HCOMM_PLUGIN_THROW(HCOMM_ERR_UNSUPPORTED, "%s: the ranks do not map each other's memory", call.algorithm);
  p.build(DirectCall{.call = call, .view = *p.view, .builder = *p.builder}, out);
}

}  // namespace

hcomm_result_t run_direct(const char* algorithm, hcomm_coll_t coll, const hcomm_coll_args_t* args,
                          const hcomm_comm_view_t* comm, hcomm_schedule_builder_t* builder,
                          DirectBuildFn build) noexcept {
  t_pending = Pending{.view = comm, .builder = builder, .build = build};
  return run_builder(algorithm, coll, args, comm, builder, build_pending);
}

}  // namespace hcomm::algo
