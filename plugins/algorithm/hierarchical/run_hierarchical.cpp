#include "common/services.hpp"
#include "hierarchical.hpp"

namespace hcomm::algo {

namespace {

// run_builder hands its BuildFn the call only: the view and the build of the
// call in progress wait here (one build per thread at a time).
struct Pending {
  const hcomm_comm_view_t* view;
  HierBuildFn build;
};
thread_local Pending t_pending;

void build_pending(const Call& call, ScheduleWriter& out) {
  const Pending p = t_pending;
  const Hosts hosts(*p.view, call.algorithm);
  if (hosts.count() <= 1)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_UNSUPPORTED, "%s: all %d ranks are on one host; the flat algorithms serve it",
                       call.algorithm, call.nranks);
  p.build(HierCall{.call = call, .hosts = hosts}, out);
}

}  // namespace

hcomm_result_t run_hierarchical(const char* algorithm, hcomm_coll_t coll, const hcomm_coll_args_t* args,
                                const hcomm_comm_view_t* comm, hcomm_schedule_builder_t* builder,
                                HierBuildFn build) noexcept {
  t_pending = Pending{.view = comm, .build = build};
  return run_builder(algorithm, coll, args, comm, builder, build_pending);
}

}  // namespace hcomm::algo
