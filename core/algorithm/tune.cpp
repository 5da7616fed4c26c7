#include "core/algorithm/tune.hpp"

#include "core/common/error.hpp"
#include "core/common/names.hpp"
#include "core/common/settings.hpp"

namespace hcomm::algorithm {

namespace {

// Named sets of rules, written in the rules' own grammar (tune.hpp lists them).
struct Profile {
  const char* name;
  const char* rules;
};
constexpr Profile kProfiles[] = {
    {"thresholds", "allreduce:0-128K:@ring#allreduce:128K-8M:@double_binary_tree#allreduce:8M-inf:@halving_doubling"},
};
constexpr const char* kProfilePrefix = "profile:";

[[noreturn]] void bad_rule(const std::string& rule, const char* why) {
  HCOMM_THROW(HCOMM_ERR_CONFIG,
              "HCOMM_TUNE rule '%s' does not parse: %s; expected <collective>:[<min>-<max>:]@<algorithm> or "
              "profile:<name> (%s), rules separated by '#', e.g. allreduce:0-64K:@ring",
              rule.c_str(), why, profile_names().c_str());
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

// Splits at '#' and hands each rule to `add`.
template <class F>
void for_each_rule(const std::string& text, F&& add) {
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('#', start);
    if (end == std::string::npos) end = text.size();
    std::string rule = text.substr(start, end - start);
    if (rule.empty()) bad_rule(rule, "empty rule (two '#' in a row?)");
    add(rule);
    start = end + 1;
  }
}

void append_profile(const std::string& rule, std::vector<TuneRule>& rules) {
  const std::string name = rule.substr(std::string(kProfilePrefix).size());
  for (const Profile& p : kProfiles) {
    if (name != p.name) continue;
    for_each_rule(p.rules, [&](const std::string& r) {
      rules.push_back(parse_rule(r));
      rules.back().profile = p.name;
    });
    return;
  }
  bad_rule(rule, "unknown profile");
}

}  // namespace

std::string TuneRule::text() const {
  std::string range = lo == 0 && hi == UINT64_MAX ? "" : bytes_text(lo) + "-" + bytes_text(hi) + ":";
  return std::string(coll_name(coll)) + ":" + range + "@" + algorithm;
}

std::string TuneRule::described() const {
  if (!file.empty()) return "rule '" + text() + "' of HCOMM_TUNE_FILE " + file;
  return "HCOMM_TUNE rule '" + text() + "'" + (profile.empty() ? "" : " (profile " + profile + ")");
}

std::string profile_names() {
  std::string out;
  for (const Profile& p : kProfiles) out += (out.empty() ? "" : ", ") + std::string(p.name);
  return out;
}

std::string bytes_text(uint64_t bytes) {
  if (bytes == UINT64_MAX) return "inf";
  for (auto [shift, suffix] : {std::pair{30, "G"}, {20, "M"}, {10, "K"}})
    if (bytes != 0 && bytes % (uint64_t{1} << shift) == 0) return std::to_string(bytes >> shift) + suffix;
  return std::to_string(bytes);
}

std::vector<TuneRule> parse_tune(const std::string& text) {
  std::vector<TuneRule> rules;
  for_each_rule(text, [&](const std::string& rule) {
    if (rule.starts_with(kProfilePrefix))
      append_profile(rule, rules);
    else
      rules.push_back(parse_rule(rule));
  });
  return rules;
}

}  // namespace hcomm::algorithm
