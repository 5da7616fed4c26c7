// The cost model of a communicator's links as the algorithms see it
// (hcomm_comm_view_t's link, intra, inter and mapped): the slowest link of
// one host, between hosts and of the communicator, with a reduction's cost
// per byte, the same on every rank.
#pragma once

#include <vector>

#include "core/bootstrap/bootstrap.hpp"
#include "core/topology/topology.hpp"
#include "hcomm/plugin/algorithm.h"

namespace hcomm::algorithm {

struct LinkModels {
  hcomm_link_model_t link, intra, inter;
  hcomm_link_model_t mapped;  // loads, stores and reductions through mapped memory
};

// Collective over the bootstrap: each rank gives the scores of its own
// links (scores[p] of the link to rank p; its own entry is not read).
LinkModels agree_link_models(bootstrap::Bootstrap& bootstrap, const topology::Topology& topology,
                             const std::vector<hcomm_link_score_t>& scores);

// Marks a view whose hosts have more ranks than cores: every wait for a
// peer then also waits for the scheduler to run it, which the models count.
void add_oversubscription(hcomm_comm_view_t& view);

}  // namespace hcomm::algorithm
