// The ofi transport names libfabric's shm regions /dev/shm/hcomm-ofi-<pid>-*,
// which the provider unlinks at close, never reached by a killed process.
// (The shm transport's segments never have a name.)
#pragma once

#include <sys/types.h>

#include <vector>

namespace hcomm::run {

// Removes the segments made by any of `pids`; returns how many were removed.
size_t remove_shm_segments(const std::vector<pid_t>& pids);

}  // namespace hcomm::run
