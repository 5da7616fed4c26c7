// What this process holds, read from /proc/self: open files, threads,
// shared-memory files, and scheduler time. The checks use it to find what a
// plugin leaked and whether it spins.
#pragma once

#include <set>
#include <string>
#include <vector>

namespace hcomm::tcheck {

// Open file descriptors, as numbers in text ("3").
std::vector<std::string> open_fds();
// Where a descriptor points ("socket:[1234]", "/dev/shm/x"), or "?".
std::string fd_target(const std::string& fd);
size_t thread_count();
// Files under /dev/shm this process has open or mapped, unlinked ones excluded.
std::set<std::string> shm_files_in_use();
// Files under /dev/shm this process has mapped, unlinked or not.
std::vector<std::string> shm_mappings();
// Seconds all threads spent on a CPU or runnable and waiting for one
// (schedstat). Unlike CPU time this does not shrink when the machine is busy:
// a thread that spins is runnable all the time, one that blocks is not.
double runnable_seconds();

}  // namespace hcomm::tcheck
