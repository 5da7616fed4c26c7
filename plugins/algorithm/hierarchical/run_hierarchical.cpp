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

constexpr uint32_t kPartsAbiMinor = 13;

void build_pending(const Call& call, ScheduleWriter& out) {
  const Pending p = t_pending;
  const Hosts hosts(*p.view, call.algorithm);
  if (hosts.count() <= 1)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_UNSUPPORTED, "%s: all %d ranks are on one host; the flat algorithms serve it",
                       call.algorithm, call.nranks);
  if (hosts.max_local() <= 1)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_UNSUPPORTED, "%s: each of the %d hosts has one rank; the flat algorithms serve it",
                       call.algorithm, hosts.count());
  if (services().core_abi_minor() < kPartsAbiMinor)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_UNSUPPORTED, "%s: this HComm (plugin ABI 1.%u) cannot compose parts (ABI 1.%u)",
                       call.algorithm, services().core_abi_minor(), kPartsAbiMinor);
  p.build(HierCall{.call = call, .hosts = hosts}, out);
}

}  // namespace

hcomm_result_t run_hierarchical(const char* algorithm, hcomm_coll_t coll, const hcomm_coll_args_t* args,
                                const hcomm_comm_view_t* comm, hcomm_schedule_builder_t* builder,
                                HierBuildFn build) noexcept {
  t_pending = Pending{.view = comm, .build = build};
  return run_builder(algorithm, coll, args, comm, builder, build_pending);
}

int32_t join(std::vector<int32_t> steps, ScheduleWriter& out) {
  std::erase(steps, -1);
  while (steps.size() > 1) {
    std::vector<int32_t> joined;
    for (size_t first = 0; first < steps.size(); first += HCOMM_STEP_MAX_DEPS) {
      hcomm_step_t copy = {.kind = HCOMM_STEP_COPY,
                           .src = at(HCOMM_BUF_RECV, 0),
                           .dst = at(HCOMM_BUF_RECV, 0),
                           .bytes = 0,
                           .nchunks = 1};
      for (size_t k = first; k < steps.size() && k < first + HCOMM_STEP_MAX_DEPS; ++k) wait_whole(copy, steps[k]);
      joined.push_back(out.add(copy));
    }
    steps = std::move(joined);
  }
  return steps.empty() ? -1 : steps[0];
}

int32_t Part::add(const Call& whole, ScheduleWriter& out) const {
  const auto data = [](const std::vector<size_t>* v) { return v ? v->data() : nullptr; };
  const hcomm_coll_args_t args = {.size = sizeof(hcomm_coll_args_t),
                                  .coll = coll,
                                  .count = count,
                                  .dtype = whole.args.dtype,
                                  .dtype_size = whole.args.dtype_size,
                                  .op = whole.args.op,
                                  .root = root,
                                  .in_place = in_place ? 1 : 0,
                                  .mem_kind = whole.args.mem_kind,
                                  .send_counts = data(send_counts),
                                  .send_displs = data(send_displs),
                                  .recv_counts = data(recv_counts),
                                  .recv_displs = data(recv_displs)};
  std::vector<int32_t> waits = deps;
  std::erase(waits, -1);
  if (waits.size() > HCOMM_STEP_MAX_DEPS) waits = {join(waits, out)};
  const hcomm_coll_part_t part = {.size = sizeof(hcomm_coll_part_t),
                                  .args = &args,
                                  .ranks = ranks.data(),
                                  .nranks = static_cast<int>(ranks.size()),
                                  .send = send,
                                  .recv = recv,
                                  .id = id,
                                  .flags = flags,
                                  .deps = waits.data(),
                                  .ndeps = static_cast<uint32_t>(waits.size())};
  return out.add_part(part);
}

}  // namespace hcomm::algo
