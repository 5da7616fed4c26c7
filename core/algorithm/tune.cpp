#include "core/algorithm/tune.hpp"

#include "core/common/error.hpp"
#include "core/common/settings.hpp"

namespace hcomm::algorithm {

namespace {

constexpr const char* kCollNames[HCOMM_NUM_COLLS] = {"allreduce", "broadcast", "reduce",  "allgather", "reduce_scatter",
                                                     "alltoall",  "gather",    "scatter", "barrier",   "sendrecv",
                                                     "allgatherv", "reduce_scatter_v", "alltoallv"};

[[noreturn]] void bad_rule(const std::string& rule, const char* why) {
  HCOMM_THROW(HCOMM_ERR_CONFIG,
              "HCOMM_TUNE rule '%s' does not parse: %s; expected <collective>:[<min>-<max>:]@<algorithm>, rules "
              "separated by '#', e.g. allreduce:0-64K:@ring",
              rule.c_str(), why);
}

uint64_t parse_bound(const std::string& rule, const std::string& text) {
  if (text == "inf") return UINT64_MAX;
  uint64_t v = 0;
  if (!settings::parse_size(text, &v)) bad_rule(rule, "a size bound is not a byte count (K/M/G suffixes, or inf)");
  return v;
}

TuneRule parse_rule(const std::string& rule) {
  size_t at = rule.find(":@");
  if (at == std::string::npos) bad_rule(rule, "no ':@<algorithm>'");
  TuneRule r{};
  r.algorithm = rule.substr(at + 2);
  if (r.algorithm.empty()) bad_rule(rule, "empty algorithm name");
  std::string head = rule.substr(0, at);
  size_t colon = head.find(':');
  if (!coll_from_name(head.substr(0, colon), &r.coll)) bad_rule(rule, "unknown collective");
  if (colon != std::string::npos) {
    std::string range = head.substr(colon + 1);
    size_t dash = range.find('-');
    if (dash == std::string::npos) bad_rule(rule, "a size range needs '<min>-<max>'");
    r.lo = parse_bound(rule, range.substr(0, dash));
    r.hi = parse_bound(rule, range.substr(dash + 1));
    if (r.lo == UINT64_MAX || r.lo >= r.hi) bad_rule(rule, "the range is empty (min must be below max)");
  }
  return r;
}

}  // namespace

const char* coll_name(hcomm_coll_t coll) {
  return static_cast<unsigned>(coll) < HCOMM_NUM_COLLS ? kCollNames[coll] : "unknown";
}

bool coll_from_name(const std::string& name, hcomm_coll_t* out) {
  for (int c = 0; c < HCOMM_NUM_COLLS; ++c)
    if (name == kCollNames[c]) return *out = static_cast<hcomm_coll_t>(c), true;
  return false;
}

std::vector<TuneRule> parse_tune(const std::string& text) {
  std::vector<TuneRule> rules;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('#', start);
    if (end == std::string::npos) end = text.size();
    std::string rule = text.substr(start, end - start);
    if (rule.empty()) bad_rule(rule, "empty rule (two '#' in a row?)");
    rules.push_back(parse_rule(rule));
    start = end + 1;
  }
  return rules;
}

}  // namespace hcomm::algorithm
