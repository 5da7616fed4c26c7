// The communicator's view as the algorithms see it: the link model the
// transports reported, or the one HCOMM_TUNE_FILE holds (tune_file.hpp).
#pragma once

#include "hcomm/plugin/algorithm.h"

namespace hcomm::algorithm {

// `measured` unchanged when HCOMM_TUNE_FILE is empty; else with the file's
// parameters (rank 0 logs them, INFO ALGO). Throws HCOMM_ERR_CONFIG for a
// file that cannot be read or does not parse.
hcomm_comm_view_t tuned_view(const hcomm_comm_view_t& measured);

}  // namespace hcomm::algorithm
