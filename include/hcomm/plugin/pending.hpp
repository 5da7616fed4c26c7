// Which unidentified connection to drop (header only, optional): for a
// listener that anyone can reach (the rendezvous, a transport's), whose
// accepted connections stay pending until their handshake says who they are.
// Pending connections are bounded per source address and in all; a newcomer
// beyond a bound takes the place of the oldest pending one (a silent one
// before one that has said who it is), so that clients that connect and say
// nothing, hundreds of them, cannot lock the real ones out, whereas refusing
// the newcomer would.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace hcomm::plugin {

struct PendingLimits {
  size_t per_source;  // from one source address
  size_t total;
};
inline constexpr PendingLimits kPendingLimits{.per_source = 64, .total = 256};

// What the policy needs to know of one pending connection.
struct PendingState {
  bool open;        // false once it was dropped or identified
  bool silent;      // it has not yet said who it is (no hello)
  uint32_t source;  // its IPv4 source address
};

// The oldest open connection of [first, last), in the order of arrival, for
// which `chosen(state)` holds, a silent one first; `last` if none.
// `describe(*it)` gives a connection's PendingState.
template <class It, class Describe, class Chosen>
It oldest_pending(It first, It last, Describe describe, Chosen chosen) {
  auto oldest = [&](bool silent_only) {
    return std::find_if(first, last, [&](const auto& c) {
      const PendingState s = describe(c);
      return s.open && chosen(s) && (!silent_only || s.silent);
    });
  };
  It victim = oldest(true);
  return victim != last ? victim : oldest(false);
}

// The connection to drop so that one more from `source` fits `limits`: the
// oldest from that source when it has its share open, else the oldest of
// all when all slots are taken; `last` when there is room.
template <class It, class Describe>
It pending_to_drop(It first, It last, uint32_t source, PendingLimits limits, Describe describe) {
  size_t from_source = 0, open = 0;
  for (It it = first; it != last; ++it) {
    const PendingState s = describe(*it);
    open += s.open;
    from_source += s.open && s.source == source;
  }
  if (from_source >= limits.per_source)
    return oldest_pending(first, last, describe, [source](const PendingState& s) { return s.source == source; });
  if (open >= limits.total) return oldest_pending(first, last, describe, [](const PendingState&) { return true; });
  return last;
}

}  // namespace hcomm::plugin
