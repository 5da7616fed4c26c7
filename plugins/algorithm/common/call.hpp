// One collective call as a schedule builder sees it, after the checks every
// builder relies on; the C entry that runs a builder; steps several share.
#pragma once

#include <cstdint>

#include "hcomm/plugin/algorithm.h"
#include "schedule_writer.hpp"

namespace hcomm::algo {

struct Call {
  const char* algorithm;  // for error messages
  const hcomm_coll_args_t& args;
  int nranks;
  int rank;
  uint64_t bytes;  // count * dtype_size
};

// Throws HCOMM_ERR_INVALID_ARGUMENT unless args->root is a rank.
void check_root(const Call& call);

// Throws HCOMM_ERR_INVALID_ARGUMENT unless a variable-size collective came
// with its counts (and, when `displs`, its displacements).
void check_recv_layout(const Call& call, bool displs);

// Places this rank's input in its output: a copy from SEND to RECV, left
// out when in place (SEND is then RECV).
void copy_input_to_output(const Call& call, ScheduleWriter& out);

using BuildFn = void (*)(const Call& call, ScheduleWriter& out);

// Checks the C arguments (HCOMM_ERR_INVALID_ARGUMENT naming the field), then
// runs `build`; exceptions become status codes at this boundary.
hcomm_result_t run_builder(const char* algorithm, hcomm_coll_t coll, const hcomm_coll_args_t* args,
                           const hcomm_comm_view_t* comm, hcomm_schedule_builder_t* builder, BuildFn build) noexcept;

}  // namespace hcomm::algo
