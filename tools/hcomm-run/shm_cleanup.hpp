// The shared-memory transport names its segments /dev/shm/hcomm-shm-<pid>-*
// after the process that made them and unlinks them once its peers have
// mapped them; a rank that dies before that leaves them behind. The ofi
// transport names libfabric's shm regions /dev/shm/hcomm-ofi-<pid>-*, which
// the provider unlinks at close, never reached by a killed process.
#pragma once

#include <sys/types.h>

#include <vector>

namespace hcomm::run {

// Removes the segments made by any of `pids`; returns how many were removed.
size_t remove_shm_segments(const std::vector<pid_t>& pids);

}  // namespace hcomm::run
