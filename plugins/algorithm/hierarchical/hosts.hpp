// The hosts of a communicator as the view describes them (ABI 1.2 node_of):
// each host's ranks in rank order, each rank's host and its index there (its
// local rank). Hosts are ordered by their lowest rank, whatever numbers
// node_of gives them, so every rank derives the same structure.
#pragma once

#include <vector>

#include "hcomm/plugin/algorithm.h"

namespace hcomm::algo {

class Hosts {
 public:
  // Throws HCOMM_ERR_INVALID_ARGUMENT when node_of names a host outside
  // 0..nnodes-1. A view without node_of puts every rank on one host.
  Hosts(const hcomm_comm_view_t& view, const char* algorithm);

  int count() const { return static_cast<int>(ranks_.size()); }
  const std::vector<int>& ranks(int host) const { return ranks_[static_cast<size_t>(host)]; }
  int host_of(int rank) const { return host_of_[static_cast<size_t>(rank)]; }
  int local_of(int rank) const { return local_of_[static_cast<size_t>(rank)]; }
  // The fewest and the most ranks a host has.
  int min_local() const { return min_local_; }
  int max_local() const { return max_local_; }
  // Local rank `local` of every host, in host order: the ranks that share
  // rail `local` (local < min_local()).
  std::vector<int> rail(int local) const;

 private:
  std::vector<std::vector<int>> ranks_;
  std::vector<int> host_of_;
  std::vector<int> local_of_;
  int min_local_ = 0;
  int max_local_ = 0;
};

}  // namespace hcomm::algo
