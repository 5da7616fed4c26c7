// The signals hcomm-run acts on, read from a file descriptor in its poll loop
// instead of interrupting it: SIGCHLD (a rank ended) and the signals it passes
// on to the ranks (SIGINT, SIGTERM, SIGHUP; one that hcomm-run was started
// with ignored, as under nohup, stays ignored).
#pragma once

#include <signal.h>

#include <vector>

#include "unique_fd.hpp"

namespace hcomm::run {

class SignalChannel {
 public:
  SignalChannel();  // throws std::system_error
  ~SignalChannel();
  SignalChannel(const SignalChannel&) = delete;
  SignalChannel& operator=(const SignalChannel&) = delete;

  int fd() const { return fd_.get(); }
  // The signals that arrived since the last call, in order (non-blocking).
  std::vector<int> take();
  // The mask to give the ranks: the one hcomm-run started with.
  const sigset_t& original_mask() const { return original_mask_; }

 private:
  sigset_t original_mask_;
  UniqueFd fd_;
};

}  // namespace hcomm::run
