// Choice of the GID that RoCE traffic carries as source address. Pure: the
// device layer reads the table (ibv_query_gid_ex, which knows each entry's
// RoCE version), this picks the entry.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "wire.hpp"

namespace hcomm::verbs {

enum class GidType : uint8_t { kIb, kRoceV1, kRoceV2 };

struct GidEntry {
  int index = 0;
  GidType type = GidType::kIb;
  Gid gid{};
};

// ::ffff:a.b.c.d, the form RoCE gives the GIDs of IPv4 addresses.
bool ipv4_mapped(const Gid& gid);
// An all-zero GID is an empty slot of the table.
bool empty_gid(const Gid& gid);

// `wanted` >= 0: that index, which must be in the table; -1: the first RoCE
// v2 IPv4-mapped GID, else RoCE v2 of another kind (IPv6), else RoCE v1
// IPv4-mapped, else any non-empty entry. Nothing when the table is empty.
std::optional<GidEntry> choose_gid(const std::vector<GidEntry>& table, int wanted);

}  // namespace hcomm::verbs
