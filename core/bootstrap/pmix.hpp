// Launches by a PMIx server (Open MPI's mpirun, Slurm's srun --mpi=pmix,
// PRRTE's prterun): the job's shape comes from PMIx, and PMIx carries the
// rendezvous's address and secret from rank 0 to the other ranks; the TCP
// rendezvous does the rest, as under any other launcher.
#pragma once

#include "core/bootstrap/launch.hpp"

namespace hcomm::bootstrap {

// Whether this libhcomm was built with libpmix (pmix.cpp) or without it
// (pmix_absent.cpp, which throws from pmix_launch).
bool pmix_built_in();

// Joins the PMIx job that started this process; its rank 0 starts a
// rendezvous (Bootstrap::make_unique_id) and the others learn it through a
// PMIx fence, waiting at most `timeout_s`. The PMIx session lasts until the
// process exits.
ManagedLaunch pmix_launch(double timeout_s);

}  // namespace hcomm::bootstrap
