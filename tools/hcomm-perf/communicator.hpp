// hcomm-perf's hold on the library: the communicator from the environment,
// and every status code checked, a failure becoming an exception that carries
// the library's own text.
#pragma once

#include <stdexcept>
#include <string>

#include "hcomm/hcomm.h"

namespace hcomm::perf {

class CallError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws CallError ("hcomm_allreduce failed: <status>: <last error>") unless
// `result` is HCOMM_SUCCESS. `call` names the API function.
inline void check(hcomm_result_t result, const char* call) {
  if (result == HCOMM_SUCCESS) return;
  throw CallError(std::string(call) + " failed: " + hcomm_result_string(result) + ": " + hcomm_get_last_error());
}

class Communicator {
 public:
  // From HCOMM_RANK, HCOMM_SIZE, HCOMM_ROOT and HCOMM_SECRET (set by hcomm-run).
  Communicator() {
    check(hcomm_comm_init_env(&comm_), "hcomm_comm_init_env");
    check(hcomm_comm_rank(comm_, &rank_), "hcomm_comm_rank");
    check(hcomm_comm_size(comm_, &size_), "hcomm_comm_size");
  }
  // On an error path: the error being reported matters more than this one.
  ~Communicator() {
    if (comm_) hcomm_comm_destroy(comm_);
  }
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  // The orderly end, checked.
  void destroy() {
    const hcomm_result_t result = hcomm_comm_destroy(comm_);
    comm_ = nullptr;
    check(result, "hcomm_comm_destroy");
  }

  hcomm_comm_t get() const { return comm_; }
  int rank() const { return rank_; }
  int size() const { return size_; }

 private:
  hcomm_comm_t comm_ = nullptr;
  int rank_ = 0;
  int size_ = 0;
};

}  // namespace hcomm::perf
