// What a process manager that keeps a key-value store for its job (a PMIx
// server, MPICH's hydra through PMI-1) tells a rank: its place in the job
// and the rendezvous that rank 0 started and published there.
#pragma once

#include <string>

#include "core/bootstrap/bootstrap.hpp"
#include "hcomm/hcomm.h"

namespace hcomm::bootstrap {

struct ManagedLaunch {
  int rank = 0;
  int size = 1;
  Locality locality;
  hcomm_unique_id_t rendezvous{};  // started by rank 0
};

// Each communicator made from the environment publishes its rendezvous under
// its own key ("hcomm.rendezvous.<n>"); every rank makes them in one order.
std::string next_rendezvous_key();

}  // namespace hcomm::bootstrap
