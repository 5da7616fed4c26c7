// Launches by MPICH's hydra (mpiexec.hydra, and the launchers that speak its
// PMI-1 wire protocol): the process inherits a socket to its process manager
// in PMI_FD, with PMI_RANK and PMI_SIZE; the manager's key-value store
// carries the rendezvous's address and secret from rank 0 to the others, as
// PMIx does (pmix.hpp), and the TCP rendezvous does the rest.
#pragma once

#include "core/bootstrap/launch.hpp"

namespace hcomm::bootstrap {

// Whether a PMI-1 process manager started this process (PMI_FD is set).
bool pmi1_manager_present();

// Joins the PMI-1 job: rank 0 starts a rendezvous, puts it in the job's
// key-value store, and every rank takes it after the manager's barrier,
// waiting at most `timeout_s`. The PMI-1 session lasts until the process
// exits; an exit with status 0 says finalize, another exit nothing, which
// has the manager stop the job's other ranks.
ManagedLaunch pmi1_launch(double timeout_s);

}  // namespace hcomm::bootstrap
