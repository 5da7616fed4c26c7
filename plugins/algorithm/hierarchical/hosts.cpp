#include "hosts.hpp"

#include <algorithm>
#include <map>

#include "hcomm/plugin/util.hpp"

namespace hcomm::algo {

Hosts::Hosts(const hcomm_comm_view_t& view, const char* algorithm)
    : host_of_(static_cast<size_t>(view.nranks)), local_of_(static_cast<size_t>(view.nranks)) {
  std::map<int, int> host_index;  // node_of value -> host in order of lowest rank
  for (int r = 0; r < view.nranks; ++r) {
    const int node = view.node_of ? view.node_of[r] : 0;
    if (view.node_of && (node < 0 || node >= std::max(view.nnodes, 1)))
      HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT, "%s: comm->node_of[%d] is %d, outside 0..%d (comm->nnodes %d)",
                         algorithm, r, node, std::max(view.nnodes, 1) - 1, view.nnodes);
    const auto [it, added] = host_index.emplace(node, static_cast<int>(ranks_.size()));
    if (added) ranks_.emplace_back();
    std::vector<int>& host = ranks_[static_cast<size_t>(it->second)];
    host_of_[static_cast<size_t>(r)] = it->second;
    local_of_[static_cast<size_t>(r)] = static_cast<int>(host.size());
    host.push_back(r);
  }
  for (const std::vector<int>& host : ranks_) {
    const int size = static_cast<int>(host.size());
    min_local_ = min_local_ == 0 ? size : std::min(min_local_, size);
    max_local_ = std::max(max_local_, size);
  }
}

std::vector<int> Hosts::rail(int local) const {
  std::vector<int> out;
  for (const std::vector<int>& host : ranks_) out.push_back(host[static_cast<size_t>(local)]);
  return out;
}

}  // namespace hcomm::algo
