#include "core/algorithm/selector.hpp"

#include <algorithm>
#include <mutex>

#include "core/common/error.hpp"
#include "core/common/log.hpp"
#include "core/plugin/loader.hpp"
#include "core/plugin/services.hpp"

namespace hcomm::algorithm {

namespace {

// The C builder callbacks append to a Schedule.
struct BuildContext {
  exec::Schedule* schedule;
  uint64_t chunk_bytes;
  std::string error;
};

int32_t add_step(hcomm_schedule_builder_t* b, const hcomm_step_t* step) {
  auto* ctx = static_cast<BuildContext*>(b->ctx);
  if (!step) {
    ctx->error = "add: null step";
    return -1;
  }
  ctx->schedule->steps.push_back(*step);
  return static_cast<int32_t>(ctx->schedule->steps.size() - 1);
}

void need_scratch(hcomm_schedule_builder_t* b, uint64_t bytes) {
  auto* ctx = static_cast<BuildContext*>(b->ctx);
  ctx->schedule->algorithm_scratch = std::max(ctx->schedule->algorithm_scratch, bytes);
}

uint32_t chunks_for(hcomm_schedule_builder_t* b, uint64_t bytes, size_t elem_size) {
  auto* ctx = static_cast<BuildContext*>(b->ctx);
  uint64_t elems = elem_size ? bytes / elem_size : bytes;
  uint64_t n = (bytes + ctx->chunk_bytes - 1) / ctx->chunk_bytes;
  n = std::min<uint64_t>({n, elems, exec::kMaxChunks});
  return static_cast<uint32_t>(std::max<uint64_t>(n, 1));
}

}  // namespace

const std::vector<const hcomm_algorithm_desc_t*>& registry() {
  static std::once_flag once;
  static std::vector<const hcomm_algorithm_desc_t*> list;
  std::call_once(once, [] {
    for (const plugin::PluginInfo& p : plugin::discovered()) {
      if (!p.loaded() || p.header->kind != HCOMM_PLUGIN_ALGORITHM) continue;
      auto* iface = static_cast<const hcomm_algorithm_v1_t*>(p.header->iface);
      if (!HCOMM_IFACE_HAS(iface, algorithms)) {
        HCOMM_WARN(ALGO, "plugin %s: algorithm interface too small (%zu bytes); skipped", p.path.c_str(), iface->size);
        continue;
      }
      if (HCOMM_IFACE_HAS(iface, init) && iface->init(plugin::services()) != HCOMM_SUCCESS) {
        HCOMM_WARN(ALGO, "plugin %s: init failed: %s; skipped", p.path.c_str(), last_error());
        continue;
      }
      for (size_t i = 0; i < iface->num_algorithms; ++i) list.push_back(&iface->algorithms[i]);
    }
  });
  return list;
}

Selector::Selector(const hcomm_comm_view_t& view, std::vector<TuneRule> rules,
                   std::vector<const hcomm_algorithm_desc_t*> algorithms, uint64_t chunk_bytes)
    : view_(view), rules_(std::move(rules)), algorithms_(std::move(algorithms)), chunk_bytes_(chunk_bytes) {
  for (const TuneRule& r : rules_) {
    bool known = std::any_of(algorithms_.begin(), algorithms_.end(), [&](const hcomm_algorithm_desc_t* a) {
      return r.algorithm == a->name && (a->colls & (1u << r.coll));
    });
    if (!known) {
      std::string names;
      for (const auto* a : algorithms_)
        if (a->colls & (1u << r.coll)) names += (names.empty() ? "" : ", ") + std::string(a->name);
      HCOMM_THROW(HCOMM_ERR_CONFIG, "HCOMM_TUNE asks for algorithm '%s' for %s, which no loaded plugin offers (%s: %s)",
                  r.algorithm.c_str(), coll_name(r.coll), coll_name(r.coll), names.empty() ? "none" : names.c_str());
    }
  }
}

bool Selector::serves(const hcomm_algorithm_desc_t& a, const hcomm_coll_args_t& args) const {
  uint64_t bytes = message_bytes(args, view_.nranks);
  return (a.colls & (1u << args.coll)) && (a.mem_kinds & args.mem_kind) && bytes >= a.min_bytes &&
         bytes <= a.max_bytes && view_.nranks >= a.min_ranks && view_.nranks <= a.max_ranks;
}

std::vector<const hcomm_algorithm_desc_t*> Selector::candidates(const hcomm_coll_args_t& args) const {
  std::vector<std::pair<double, const hcomm_algorithm_desc_t*>> scored;
  for (const auto* a : algorithms_)
    if (serves(*a, args)) scored.emplace_back(a->cost ? a->cost(&args, &view_) : 0.0, a);
  std::stable_sort(scored.begin(), scored.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<const hcomm_algorithm_desc_t*> out;
  uint64_t bytes = message_bytes(args, view_.nranks);
  for (const TuneRule& r : rules_) {
    if (!r.covers(args.coll, bytes)) continue;
    auto it = std::find_if(scored.begin(), scored.end(), [&](const auto& s) { return r.algorithm == s.second->name; });
    if (it != scored.end()) {
      out.push_back(it->second);
    } else if (logged_.insert("tune:" + r.algorithm).second) {
      HCOMM_WARN(ALGO, "HCOMM_TUNE asks for %s for %s of %llu bytes on %d ranks, which it does not serve; using the "
                 "cost model", r.algorithm.c_str(), coll_name(args.coll), static_cast<unsigned long long>(bytes),
                 view_.nranks);
    }
    break;
  }
  for (const auto& s : scored)
    if (out.empty() || s.second != out[0]) out.push_back(s.second);
  return out;
}

std::shared_ptr<exec::Schedule> Selector::build(const hcomm_coll_args_t& args) const {
  auto list = candidates(args);
  for (const auto* a : list) {
    auto s = std::make_shared<exec::Schedule>();
    s->algorithm = a->name;
    s->args = args;
    BuildContext ctx{s.get(), chunk_bytes_, ""};
    hcomm_schedule_builder_t b{.ctx = &ctx, .add = add_step, .need_scratch = need_scratch, .chunks_for = chunks_for};
    hcomm_result_t rc = a->build(&args, &view_, &b);
    if (rc == HCOMM_ERR_UNSUPPORTED) {
      HCOMM_DEBUG(ALGO, "%s declined %s of %zu elements", a->name, coll_name(args.coll), args.count);
      continue;
    }
    if (rc != HCOMM_SUCCESS || !ctx.error.empty())
      HCOMM_THROW(rc == HCOMM_SUCCESS ? HCOMM_ERR_INTERNAL : rc, "algorithm %s failed to build %s: %s", a->name,
                  coll_name(args.coll), ctx.error.empty() ? last_error() : ctx.error.c_str());
    exec::finalize_schedule(*s, send_bytes(args, view_.nranks, view_.rank), recv_bytes(args, view_.nranks, view_.rank));
    if (logged_.insert(std::string(coll_name(args.coll)) + ":" + a->name).second)
      HCOMM_INFO(ALGO, "%s of %llu bytes: algorithm %s", coll_name(args.coll),
                 static_cast<unsigned long long>(message_bytes(args, view_.nranks)), a->name);
    return s;
  }
  HCOMM_THROW(HCOMM_ERR_UNSUPPORTED, "no loaded algorithm serves %s of %zu elements on %d ranks (see hcomm-info)",
              coll_name(args.coll), args.count, view_.nranks);
}

}  // namespace hcomm::algorithm
