#include "core/algorithm/score_map.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>
#include <utility>

#include "core/algorithm/layout.hpp"
#include "core/common/error.hpp"
#include "core/common/names.hpp"

namespace hcomm::algorithm {

namespace {

constexpr int kLargestPower = 30;  // 1 GiB: the last power of two that starts a range
constexpr uint32_t kKindBits[] = {HCOMM_MEM_HOST, HCOMM_MEM_CUDA};
constexpr const char* kKindNames[] = {"host", "cuda"};

bool variable_size(hcomm_coll_t coll) {
  return coll == HCOMM_COLL_ALLGATHERV || coll == HCOMM_COLL_REDUCE_SCATTER_V || coll == HCOMM_COLL_ALLTOALLV;
}

// The arguments the cost functions see for a call of a given message size:
// bytes (uint8), every rank's block of the same size, rounded down to whole
// blocks; the v-collectives' counts and displacements as the ABI lays them out.
class SampleCall {
 public:
  SampleCall(hcomm_coll_t coll, uint32_t mem_kind, int nranks) : counts_(nranks), displs_(nranks) {
    args_ = {.size = sizeof(hcomm_coll_args_t),
             .coll = coll,
             .dtype = HCOMM_UINT8,
             .dtype_size = 1,
             .op = HCOMM_SUM,
             .root = 0,
             .mem_kind = mem_kind};
    if (variable_size(coll)) args_.recv_counts = counts_.data(), args_.recv_displs = displs_.data();
    if (coll == HCOMM_COLL_ALLTOALLV) args_.send_counts = counts_.data(), args_.send_displs = displs_.data();
  }

  const hcomm_coll_args_t& at(uint64_t bytes) {
    // How many blocks message_bytes counts: 1, one per rank, or none (barrier).
    set_block(1);
    const uint64_t blocks = message_bytes(args_, static_cast<int>(counts_.size()));
    set_block(blocks ? bytes / blocks : 0);
    return args_;
  }

 private:
  void set_block(size_t elements) {
    args_.count = variable_size(args_.coll) ? 0 : elements;
    for (size_t r = 0; r < counts_.size(); ++r) counts_[r] = elements, displs_[r] = r * elements;
  }

  hcomm_coll_args_t args_;
  std::vector<size_t> counts_, displs_;
};

// NaN counts as infinity: the algorithm does not serve the call.
double cost_of(const hcomm_algorithm_desc_t& a, const hcomm_coll_args_t& args, const hcomm_comm_view_t& view) {
  const double cost = a.cost ? a.cost(&args, &view) : 0.0;
  return std::isnan(cost) ? std::numeric_limits<double>::infinity() : cost;
}

const char* winner(const ScoreRange& r) { return r.order.empty() ? "none" : r.order.front()->name; }

bool any_served(const std::vector<ScoreRange>& ranges) {
  return std::any_of(ranges.begin(), ranges.end(), [](const ScoreRange& r) { return !r.order.empty(); });
}

// "0-4K recursive_doubling, 4K-inf ring": neighbours with the same winner merged.
std::string ranges_text(const std::vector<ScoreRange>& ranges) {
  std::string out;
  size_t first = 0;
  for (size_t i = 0; i < ranges.size(); ++i) {
    const bool last = i + 1 == ranges.size();
    if (!last && std::strcmp(winner(ranges[i + 1]), winner(ranges[first])) == 0) continue;
    out += (out.empty() ? "" : ", ") + bytes_text(ranges[first].lo) + "-" +
           bytes_text(last ? UINT64_MAX : ranges[i + 1].lo) + " " + winner(ranges[first]);
    first = i + 1;
  }
  return out;
}

}  // namespace

const char* mem_kind_name(uint32_t mem_kind) {
  for (size_t k = 0; k < std::size(kKindBits); ++k)
    if (kKindBits[k] == mem_kind) return kKindNames[k];
  return "unknown";
}

ScoreMap::ScoreMap(const hcomm_comm_view_t& view, const std::vector<TuneRule>& rules,
                   const std::vector<const hcomm_algorithm_desc_t*>& algorithms) {
  for (int c = 0; c < HCOMM_NUM_COLLS; ++c) {
    const auto coll = static_cast<hcomm_coll_t>(c);
    for (int k = 0; k < kMemKinds; ++k) {
      std::vector<const hcomm_algorithm_desc_t*> serving;
      std::vector<uint64_t> starts = {0};
      for (int p = 0; p <= kLargestPower; ++p) starts.push_back(uint64_t{1} << p);
      for (const auto* a : algorithms) {
        if (!(a->colls & (1u << c)) || !(a->mem_kinds & kKindBits[k]) || view.nranks < a->min_ranks ||
            view.nranks > a->max_ranks)
          continue;
        serving.push_back(a);
        starts.push_back(a->min_bytes);
        if (a->max_bytes != UINT64_MAX) starts.push_back(a->max_bytes + 1);
      }
      for (const TuneRule& r : rules) {
        if (r.coll != coll || !(r.mem_kinds & kKindBits[k])) continue;
        starts.push_back(r.lo);
        if (r.hi != UINT64_MAX) starts.push_back(r.hi);
      }
      std::sort(starts.begin(), starts.end());
      starts.erase(std::unique(starts.begin(), starts.end()), starts.end());

      SampleCall sample(coll, kKindBits[k], view.nranks);
      std::vector<ScoreRange>& out = ranges_[c][k];
      for (uint64_t lo : starts) {
        const hcomm_coll_args_t& args = sample.at(lo);
        std::vector<std::pair<double, const hcomm_algorithm_desc_t*>> scored;
        for (const auto* a : serving)
          if (lo >= a->min_bytes && lo <= a->max_bytes)
            if (double cost = cost_of(*a, args, view); !std::isinf(cost)) scored.emplace_back(cost, a);
        std::stable_sort(scored.begin(), scored.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
        ScoreRange range{.lo = lo};
        for (const auto& s : scored) range.order.push_back(s.second);
        auto rule = std::find_if(rules.begin(), rules.end(),
                                 [&](const TuneRule& r) { return r.covers(coll, kKindBits[k], lo); });
        if (rule != rules.end()) {
          auto chosen = std::find_if(range.order.begin(), range.order.end(),
                                     [&](const hcomm_algorithm_desc_t* a) { return rule->algorithm == a->name; });
          if (chosen != range.order.end())
            std::rotate(range.order.begin(), chosen, chosen + 1);
          else
            range.passed_rule = static_cast<int>(rule - rules.begin());
        }
        if (!out.empty() && out.back().order == range.order && out.back().passed_rule == range.passed_rule) continue;
        out.push_back(std::move(range));
      }
    }
  }
}

const ScoreRange& ScoreMap::find(hcomm_coll_t coll, uint32_t mem_kind, uint64_t bytes) const {
  HCOMM_ENFORCE(static_cast<unsigned>(coll) < HCOMM_NUM_COLLS, "score map: collective %d out of range",
                static_cast<int>(coll));
  const int k = static_cast<int>(std::find(std::begin(kKindBits), std::end(kKindBits), mem_kind) - kKindBits);
  HCOMM_ENFORCE(k < kMemKinds, "score map: memory kind %u is neither host (%u) nor cuda (%u)", mem_kind, HCOMM_MEM_HOST,
                HCOMM_MEM_CUDA);
  const std::vector<ScoreRange>& ranges = ranges_[coll][k];
  auto after =
      std::upper_bound(ranges.begin(), ranges.end(), bytes, [](uint64_t b, const ScoreRange& r) { return b < r.lo; });
  return *std::prev(after);
}

std::vector<std::string> ScoreMap::algorithm_names(hcomm_coll_t coll) const {
  std::vector<std::string> names;
  for (const auto& ranges : ranges_[coll])
    for (const ScoreRange& r : ranges)
      for (const auto* a : r.order)
        if (std::find(names.begin(), names.end(), a->name) == names.end()) names.emplace_back(a->name);
  return names;
}

std::vector<std::string> ScoreMap::lines() const {
  std::vector<std::string> out;
  for (int c = 0; c < HCOMM_NUM_COLLS; ++c) {
    const std::string host = ranges_text(ranges_[c][0]);
    for (int k = 0; k < kMemKinds; ++k) {
      if (!any_served(ranges_[c][k])) continue;
      const std::string text = k == 0 ? host : ranges_text(ranges_[c][k]);
      if (k > 0 && any_served(ranges_[c][0]) && text == host) continue;
      out.push_back(std::string(coll_name(static_cast<hcomm_coll_t>(c))) + " " + kKindNames[k] + ": " + text);
    }
  }
  return out;
}

}  // namespace hcomm::algorithm
