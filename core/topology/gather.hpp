// A communicator's topology: every rank's description all-gathered through
// the bootstrap, or the file HCOMM_TOPO_FILE names.
#pragma once

#include "core/bootstrap/bootstrap.hpp"
#include "core/topology/topology.hpp"

namespace hcomm::topology {

Topology gather(bootstrap::Bootstrap& bootstrap);

}  // namespace hcomm::topology
