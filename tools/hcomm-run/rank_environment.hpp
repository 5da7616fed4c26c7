// The environment each rank starts with: hcomm-run's own, with the job's
// variables (rank, size, rendezvous address, secret) set for that rank.
#pragma once

#include <string>
#include <vector>

#include "unique_fd.hpp"

namespace hcomm::run {

// What every rank of one job shares: where rank 0 serves the rendezvous and
// the secret that the rendezvous asks of every rank.
struct JobIdentity {
  std::string root;    // 127.0.0.1:<port>
  std::string secret;  // 32 hex digits from the kernel's random source
  // Already listening on the root's port, inherited by rank 0 (HCOMM_ROOT_FD):
  // no other process can take the port between its choice and rank 0's start.
  UniqueFd listener;

  static JobIdentity create();  // throws std::system_error
};

// `base` is a null-terminated environment block (environ); any job variable
// it already holds is replaced.
std::vector<std::string> rank_environment(const char* const* base, const JobIdentity& job, int rank, int nranks);

}  // namespace hcomm::run
