// The rendezvous service: a thread that admits the job's ranks, serves their
// all-gathers and tells every rank when another one dies.
//
// Lifetime: the thread ends by itself once every rank has said goodbye or is
// gone (or the job was aborted). The services of a process are owned by a
// static registry; at process exit it waits for a running job's other ranks
// to leave (at most HCOMM_TIMEOUT, and only if this process's own ranks said
// goodbye, an orderly exit), then stops the thread and joins it. A child made
// by fork() owns no service thread and leaves them alone.
#pragma once

#include <cstdint>
#include <string>

#include "core/bootstrap/bootstrap.hpp"
#include "core/bootstrap/socket.hpp"

namespace hcomm::bootstrap {

struct RootOptions {
  Secret secret{};
  int nranks = 0;  // 0: learnt from the first accepted hello
  double timeout_s = 30;
  std::string address;  // as the ranks were told it, for messages
};

// Starts a service on `listener` (already listening) and hands it to the registry.
void start_root_service(Fd listener, const RootOptions& options);

// Whether a service of this process listens on `port` for the job with `secret`.
bool root_service_runs_here(uint16_t port, const Secret& secret);

}  // namespace hcomm::bootstrap
