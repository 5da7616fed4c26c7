// Groups: ordered sets of processes, kept as their ranks in MPI_COMM_WORLD.
#pragma once

#include <vector>

#include "mpi_compat/src/state.hpp"

namespace hcomm::mpi {

// The members of a group handle (MPI_GROUP_EMPTY has none), or MPI_ERR_GROUP.
const std::vector<int>& group_of(MPI_Group group, const char* argument = "group");
// A handle for a group of these members; MPI_GROUP_EMPTY for none.
MPI_Group add_group(std::vector<int> members);

}  // namespace hcomm::mpi
