#include "core/algorithm/selector.hpp"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <mutex>

#include "core/common/error.hpp"
#include "core/common/log.hpp"
#include "core/common/names.hpp"
#include "core/plugin/loader.hpp"
#include "core/plugin/services.hpp"

namespace hcomm::algorithm {

namespace {

// Parts nest at most this deep: an algorithm whose parts choose it again
// for their groups would otherwise never end.
constexpr int kMaxPartDepth = 4;

// The C builder callbacks append to a Schedule.
struct BuildContext {
  const Selector* selector;
  int depth;
  exec::Schedule* schedule;
  Composition composition;
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
  return hcomm_chunk_count(bytes, elem_size, static_cast<BuildContext*>(b->ctx)->selector->view().chunk_bytes);
}

int32_t add_coll(hcomm_schedule_builder_t* b, const hcomm_coll_part_t* part) {
  auto* ctx = static_cast<BuildContext*>(b->ctx);
  if (!part) {
    ctx->error = "add_coll: null part";
    return -1;
  }
  try {
    return ctx->selector->add_part(*part, ctx->schedule->steps, ctx->composition, ctx->depth);
  } catch (const Error& e) {
    ctx->error = e.what();
    return -1;
  }
}

bool offers(const hcomm_algorithm_desc_t& a, const std::string& name, hcomm_coll_t coll) {
  return name == a.name && (a.colls & (1u << coll));
}

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "none" : out;
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
                   std::vector<const hcomm_algorithm_desc_t*> algorithms)
    : view_(view), rules_(std::move(rules)), algorithms_(std::move(algorithms)), map_(view_, rules_, algorithms_) {
  check_rules();
}

void Selector::log_score_map() const {
  if (view_.rank != 0 || !log::enabled(HCOMM_LOG_INFO, log::ALGO)) return;
  HCOMM_INFO(ALGO, "algorithm map of this communicator (%d ranks): message sizes and the algorithm each uses",
             view_.nranks);
  for (const std::string& line : map_.lines()) HCOMM_INFO(ALGO, "  %s", line.c_str());
}

// A rule written out must name a loaded algorithm; a profile's or a tune
// file's may not be loaded here, and its sizes then go to the cost model
// (warned on use).
void Selector::check_rules() const {
  for (const TuneRule& r : rules_) {
    if (!r.written() || std::any_of(algorithms_.begin(), algorithms_.end(),
                                    [&](const auto* a) { return offers(*a, r.algorithm, r.coll); }))
      continue;
    std::vector<std::string> names;
    for (const auto* a : algorithms_)
      if (a->colls & (1u << r.coll)) names.emplace_back(a->name);
    HCOMM_THROW(HCOMM_ERR_CONFIG, "HCOMM_TUNE asks for algorithm '%s' for %s, which no loaded plugin offers (%s: %s)",
                r.algorithm.c_str(), coll_name(r.coll), coll_name(r.coll), join(names).c_str());
  }
}

void Selector::warn_once(const std::string& key, const std::string& text) const {
  if (view_.rank == 0 && logged_.insert(key).second) HCOMM_WARN(ALGO, "%s", text.c_str());
}

// A user op that does not commute (HCOMM_OP_USER_ORDERED) goes to the
// algorithms that keep rank order for the collective, which the score map
// (built for commutative ops) may not list: cheapest first, the forced one
// first among them. HCOMM_TUNE rules do not apply.
std::vector<const hcomm_algorithm_desc_t*> Selector::ordered_candidates(const hcomm_coll_args_t& args) const {
  const uint64_t bytes = message_bytes(args, view_.nranks);
  std::vector<std::pair<double, const hcomm_algorithm_desc_t*>> costed;
  for (const auto* a : algorithms_) {
    const bool ordered = a->size >= offsetof(hcomm_algorithm_desc_t, ordered_colls) + sizeof a->ordered_colls &&
                         (a->ordered_colls & a->colls & (1u << args.coll));
    if (!ordered || !(a->mem_kinds & args.mem_kind) || view_.nranks < a->min_ranks || view_.nranks > a->max_ranks ||
        bytes < a->min_bytes || bytes > a->max_bytes)
      continue;
    const double cost = a->cost ? a->cost(&args, &view_) : 0.0;
    if (cost < std::numeric_limits<double>::infinity()) costed.emplace_back(cost, a);  // NaN and infinity: not served
  }
  std::stable_sort(costed.begin(), costed.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<const hcomm_algorithm_desc_t*> out;
  for (const auto& [cost, a] : costed) out.push_back(a);
  const std::string& forced = forced_[args.coll];
  auto it = std::find_if(out.begin(), out.end(), [&](const auto* a) { return forced == a->name; });
  if (it != out.end()) std::rotate(out.begin(), it, it + 1);
  return out;
}

std::vector<const hcomm_algorithm_desc_t*> Selector::candidates(const hcomm_coll_args_t& args) const {
  if (args.op == HCOMM_OP_USER_ORDERED) return ordered_candidates(args);
  std::vector<const hcomm_algorithm_desc_t*> out =
      map_.find(args.coll, args.mem_kind, message_bytes(args, view_.nranks)).order;
  const std::string& forced = forced_[args.coll];
  auto it = std::find_if(out.begin(), out.end(), [&](const auto* a) { return forced == a->name; });
  if (it != out.end()) std::rotate(out.begin(), it, it + 1);
  return out;
}

void Selector::warn_unfollowed(const hcomm_coll_args_t& args) const {
  const uint64_t bytes = message_bytes(args, view_.nranks);
  if (args.op == HCOMM_OP_USER_ORDERED) {
    const std::string& forced = forced_[args.coll];
    const auto list = ordered_candidates(args);
    if (!forced.empty() && (list.empty() || forced != list.front()->name))
      warn_once("ordered:" + std::string(coll_name(args.coll)) + ":" + forced,
                format("algorithm %s, forced for %s, does not combine in rank order, which an op that does not "
                       "commute needs; such calls use %s",
                       forced.c_str(), coll_name(args.coll), list.empty() ? "none" : list.front()->name));
    return;
  }
  const ScoreRange& range = map_.find(args.coll, args.mem_kind, bytes);
  const std::string& forced = forced_[args.coll];
  const bool forced_serves =
      std::any_of(range.order.begin(), range.order.end(), [&](const auto* a) { return forced == a->name; });
  if (forced_serves || (forced.empty() && range.passed_rule < 0)) return;
  const std::string call = format("%s of %llu bytes on %d ranks (%s memory)", coll_name(args.coll),
                                  static_cast<unsigned long long>(bytes), view_.nranks, mem_kind_name(args.mem_kind));
  const char* choice = range.order.empty() ? "none" : range.order.front()->name;
  if (!forced.empty()) {
    warn_once("force:" + std::string(coll_name(args.coll)) + ":" + forced,
              format("algorithm %s, forced for %s, does not serve %s; such calls use the selector's choice (%s here)",
                     forced.c_str(), coll_name(args.coll), call.c_str(), choice));
  } else {
    const TuneRule& r = rules_[range.passed_rule];
    const bool loaded = std::any_of(algorithms_.begin(), algorithms_.end(),
                                    [&](const auto* a) { return offers(*a, r.algorithm, r.coll); });
    warn_once(format("rule:%d", range.passed_rule),
              format("%s is not followed for %s: %s %s; the cost model chooses %s", r.described().c_str(), call.c_str(),
                     r.algorithm.c_str(), loaded ? "does not serve it" : "is not loaded", choice));
  }
}

const hcomm_algorithm_desc_t* Selector::pick(const hcomm_coll_args_t& args) const {
  auto list = candidates(args);
  return list.empty() ? nullptr : list.front();
}

void Selector::force(hcomm_coll_t coll, const std::string& algorithm) {
  if (static_cast<unsigned>(coll) >= HCOMM_NUM_COLLS)
    HCOMM_THROW(HCOMM_ERR_INVALID_ARGUMENT, "collective %d is not an hcomm_coll_t (0 to %d)", static_cast<int>(coll),
                HCOMM_NUM_COLLS - 1);
  const std::vector<std::string> names = map_.algorithm_names(coll);
  if (!algorithm.empty() && std::find(names.begin(), names.end(), algorithm) == names.end())
    HCOMM_THROW(HCOMM_ERR_INVALID_ARGUMENT,
                "algorithm '%s' does not serve %s on this communicator of %d ranks; algorithms that do: %s",
                algorithm.c_str(), coll_name(coll), view_.nranks, join(names).c_str());
  forced_[coll] = algorithm;
  HCOMM_INFO(ALGO, "%s: %s", coll_name(coll),
             algorithm.empty() ? "no algorithm forced (HCOMM_TUNE and the cost model)"
                               : ("algorithm " + algorithm + " forced").c_str());
}

struct Selector::Group {
  Group(const hcomm_comm_view_t& whole, std::span<const int> ranks,
        const std::vector<const hcomm_algorithm_desc_t*>& algorithms)
      : view(whole, ranks), selector(view.view(), {}, algorithms) {}
  GroupView view;
  Selector selector;
};

Selector::Selector(Selector&&) noexcept = default;
Selector::~Selector() = default;

const Selector& Selector::group(std::span<const int> ranks) const {
  std::unique_ptr<Group>& g = groups_[std::vector<int>(ranks.begin(), ranks.end())];
  if (!g) g = std::make_unique<Group>(view_, ranks, algorithms_);
  return g->selector;
}

int32_t Selector::add_part(const hcomm_coll_part_t& part, std::vector<hcomm_step_t>& steps, Composition& composition,
                           int depth) const {
  try {
    check_part(part, view_, steps.size());
    if (depth + 1 > kMaxPartDepth)
      HCOMM_THROW(HCOMM_ERR_INTERNAL, "parts nest deeper than %d (an algorithm chosen again for its own parts?)",
                  kMaxPartDepth);
    const Selector& group = this->group({part.ranks, static_cast<size_t>(part.nranks)});
    const std::shared_ptr<exec::Schedule> built = group.build(*part.args, depth + 1);
    return composition.add(steps, part, *built);
  } catch (const Error& e) {
    throw Error(e.code(), format("part %u (%s over %d ranks): %s", part.id,
                                 part.size >= sizeof part && part.args ? coll_name(part.args->coll) : "?",
                                 part.nranks, e.what()));
  }
}

std::shared_ptr<exec::Schedule> Selector::build(const hcomm_coll_args_t& args, int depth) const {
  warn_unfollowed(args);
  auto list = candidates(args);
  for (const auto* a : list) {
    auto s = std::make_shared<exec::Schedule>();
    s->algorithm = a->name;
    s->args = args;
    BuildContext ctx{.selector = this, .depth = depth, .schedule = s.get(), .composition = {}, .error = ""};
    hcomm_schedule_builder_t b{
        .ctx = &ctx, .add = add_step, .need_scratch = need_scratch, .chunks_for = chunks_for, .add_coll = add_coll};
    hcomm_result_t rc = a->build(&args, &view_, &b);
    if (rc == HCOMM_ERR_UNSUPPORTED) {
      HCOMM_DEBUG(ALGO, "%s declined %s of %zu elements", a->name, coll_name(args.coll), args.count);
      continue;
    }
    if (rc != HCOMM_SUCCESS || !ctx.error.empty())
      HCOMM_THROW(rc == HCOMM_SUCCESS ? HCOMM_ERR_INTERNAL : rc, "algorithm %s failed to build %s: %s", a->name,
                  coll_name(args.coll), ctx.error.empty() ? last_error() : ctx.error.c_str());
    s->algorithm_scratch = ctx.composition.place_scratch(s->steps, s->algorithm_scratch);
    exec::finalize_schedule(*s, send_bytes(args, view_.nranks, view_.rank), recv_bytes(args, view_.nranks, view_.rank));
    if (logged_.insert(std::string(coll_name(args.coll)) + ":" + a->name).second)
      HCOMM_INFO(ALGO, "%s of %llu bytes: algorithm %s", coll_name(args.coll),
                 static_cast<unsigned long long>(message_bytes(args, view_.nranks)), a->name);
    return s;
  }
  if (args.op == HCOMM_OP_USER_ORDERED)
    HCOMM_THROW(HCOMM_ERR_UNSUPPORTED,
                "no loaded algorithm combines %s of %zu elements on %d ranks in rank order, which a user op that is "
                "not commutative needs (see hcomm-info; or make the op commutative if it is)",
                coll_name(args.coll), args.count, view_.nranks);
  HCOMM_THROW(HCOMM_ERR_UNSUPPORTED, "no loaded algorithm serves %s of %zu elements on %d ranks (see hcomm-info)",
              coll_name(args.coll), args.count, view_.nranks);
}

}  // namespace hcomm::algorithm
