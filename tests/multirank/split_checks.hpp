// Checks of communicators made from the job's (split.cpp, split_share.cpp):
// in an allreduce every rank sends its job rank * 1000 + i + salt, and the
// sum over the communicator's members (job ranks) is checked element by
// element.
#pragma once

#include <numeric>
#include <string>
#include <vector>

#include "groups.hpp"
#include "hcomm/hcomm.h"

namespace hcomm::test {

// The job's ranks 0..n-1.
inline std::vector<int> first_ranks(int n) {
  std::vector<int> ranks(n);
  std::iota(ranks.begin(), ranks.end(), 0);
  return ranks;
}

inline std::vector<double> contribution(int job_rank, size_t count, double salt) {
  std::vector<double> v(count);
  for (size_t i = 0; i < count; ++i) v[i] = job_rank * 1000.0 + static_cast<double>(i) + salt;
  return v;
}

inline void check_sum(Job& job, const std::vector<double>& got, const std::vector<int>& members, double salt,
                      const std::string& what) {
  for (size_t i = 0; i < got.size(); ++i) {
    double want = 0;
    for (int m : members) want += m * 1000.0 + static_cast<double>(i) + salt;
    if (got[i] != want) {
      job.fail(what + ": allreduce of " + std::to_string(got.size()) + " float64, element " + std::to_string(i) +
               " is " + std::to_string(got[i]) + ", expected " + std::to_string(want));
      return;
    }
  }
}

inline void check_allreduce(Job& job, hcomm_comm_t comm, const std::vector<int>& members, size_t count,
                            const std::string& what, double salt = 0.0) {
  const std::vector<double> send = contribution(job.ranks.rank, count, salt);
  std::vector<double> recv(count, -1.0);
  job.check(hcomm_allreduce(send.data(), recv.data(), count, HCOMM_FLOAT64, HCOMM_SUM, comm, nullptr),
            what + ": hcomm_allreduce");
  check_sum(job, recv, members, salt, what);
}

inline void check_shape(Job& job, hcomm_comm_t comm, int want_rank, int want_size, const std::string& what) {
  int rank = -1, size = -1;
  job.check(hcomm_comm_rank(comm, &rank), what + ": hcomm_comm_rank");
  job.check(hcomm_comm_size(comm, &size), what + ": hcomm_comm_size");
  if (rank != want_rank || size != want_size)
    job.fail(what + ": rank " + std::to_string(rank) + " of " + std::to_string(size) + ", expected " +
             std::to_string(want_rank) + " of " + std::to_string(want_size));
}

}  // namespace hcomm::test
