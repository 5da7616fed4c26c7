// The communicator's view and rules as the selector sees them: the link
// model the transports reported, or the one HCOMM_TUNE_FILE holds
// (tune_file.hpp); HCOMM_TUNE's rules (tune.hpp), then the file's measured
// choices where they were measured on a communicator like this one.
#pragma once

#include <string>
#include <vector>

#include "core/algorithm/tune.hpp"
#include "hcomm/plugin/algorithm.h"

namespace hcomm::algorithm {

struct Tuning {
  hcomm_comm_view_t view;
  std::vector<TuneRule> rules;  // the first that covers a call decides it
};

// `measured` unchanged when HCOMM_TUNE_FILE is empty; else with the file's
// parameters (rank 0 logs them, INFO ALGO). `transports`: the communicator's
// (transport::allowed_names), which the file's select rules must match.
// Throws HCOMM_ERR_CONFIG for an HCOMM_TUNE that does not parse, or a file
// that cannot be read or does not parse.
Tuning tuning(const hcomm_comm_view_t& measured, const std::string& transports);

}  // namespace hcomm::algorithm
