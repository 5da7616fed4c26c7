// The buffer sizes of hcomm_coll_args_t's layouts (algorithm.h; the blocks
// as hcomm/plugin/layout.hpp places them): how many bytes a call's SEND and
// RECV hold on a rank, and the message size that selection, HCOMM_TUNE
// ranges and the algorithms' size limits are stated in.
#pragma once

#include <cstdint>

#include "hcomm/plugin/algorithm.h"

namespace hcomm::algorithm {

// The largest buffer of the call, as nccl-tests counts sizes: count for
// allreduce, broadcast, reduce, scan and exscan; every rank's blocks together for the
// gathering and scattering collectives and alltoall; the sum of the counts
// for the v-collectives (alltoallv: of what this rank receives).
uint64_t message_bytes(const hcomm_coll_args_t& args, int nranks);
// The bytes a schedule of `rank` may address in SEND and RECV.
uint64_t send_bytes(const hcomm_coll_args_t& args, int nranks, int rank);
uint64_t recv_bytes(const hcomm_coll_args_t& args, int nranks, int rank);

}  // namespace hcomm::algorithm
