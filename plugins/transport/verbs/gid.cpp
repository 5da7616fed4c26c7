#include "gid.hpp"

#include <algorithm>

namespace hcomm::verbs {

bool ipv4_mapped(const Gid& gid) {
  return std::all_of(gid.begin(), gid.begin() + 10, [](uint8_t b) { return b == 0; }) && gid[10] == 0xff &&
         gid[11] == 0xff;
}

bool empty_gid(const Gid& gid) {
  return std::all_of(gid.begin(), gid.end(), [](uint8_t b) { return b == 0; });
}

std::optional<GidEntry> choose_gid(const std::vector<GidEntry>& table, int wanted) {
  if (wanted >= 0) {
    for (const GidEntry& e : table)
      if (e.index == wanted && !empty_gid(e.gid)) return e;
    return std::nullopt;
  }
  // Lower rank is better; the first entry of the best rank wins.
  auto rank = [](const GidEntry& e) {
    if (e.type == GidType::kRoceV2) return ipv4_mapped(e.gid) ? 0 : 1;
    if (e.type == GidType::kRoceV1 && ipv4_mapped(e.gid)) return 2;
    return 3;
  };
  std::optional<GidEntry> best;
  for (const GidEntry& e : table)
    if (!empty_gid(e.gid) && (!best || rank(e) < rank(*best))) best = e;
  return best;
}

}  // namespace hcomm::verbs
