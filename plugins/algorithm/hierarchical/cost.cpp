#include "cost.hpp"

#include <algorithm>
#include <limits>

#include "common/patterns.hpp"
#include "hcomm/plugin/util.hpp"
#include "hosts.hpp"

namespace hcomm::algo {

std::optional<HostShape> host_shape(const hcomm_comm_view_t& view) {
  if (view.nnodes <= 1 || !view.node_of) return std::nullopt;
  try {
    const Hosts hosts(view, "hierarchical cost");
    if (hosts.count() <= 1 || hosts.max_local() <= 1) return std::nullopt;
    return HostShape{.hosts = hosts.count(), .min_local = hosts.min_local(), .max_local = hosts.max_local()};
  } catch (const hcomm::plugin::Error&) {
    return std::nullopt;  // the build names the bad entry
  }
}

double declined_cost() { return std::numeric_limits<double>::infinity(); }

double ring_level(int members, double messages, double bytes, double alpha, double per_byte) {
  return (members - 1) * (messages * alpha + bytes * per_byte);
}

double tree_level(int members, double bytes, uint32_t chunks, double alpha, double per_byte) {
  return ceil_log2(members) * (chunks * alpha + bytes * per_byte);
}

}  // namespace hcomm::algo
