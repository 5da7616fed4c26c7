#include "core/algorithm/layout.hpp"

#include <algorithm>

namespace hcomm::algorithm {

namespace {

uint64_t sum(const size_t* counts, int nranks) {
  uint64_t total = 0;
  for (int r = 0; r < nranks; ++r) total += counts[r];
  return total;
}

// The end of the furthest block of a (counts, displs) layout, in elements.
uint64_t extent(const size_t* counts, const size_t* displs, int nranks) {
  uint64_t end = 0;
  for (int r = 0; r < nranks; ++r)
    if (counts[r]) end = std::max<uint64_t>(end, displs[r] + counts[r]);
  return end;
}

}  // namespace

uint64_t message_bytes(const hcomm_coll_args_t& a, int n) {
  const uint64_t es = a.dtype_size;
  switch (a.coll) {
    case HCOMM_COLL_ALLGATHER:
    case HCOMM_COLL_REDUCE_SCATTER:
    case HCOMM_COLL_ALLTOALL:
    case HCOMM_COLL_GATHER:
    case HCOMM_COLL_SCATTER: return a.count * es * static_cast<uint64_t>(n);
    case HCOMM_COLL_ALLGATHERV:
    case HCOMM_COLL_REDUCE_SCATTER_V:
    case HCOMM_COLL_ALLTOALLV: return sum(a.recv_counts, n) * es;
    case HCOMM_COLL_BARRIER: return 0;
    default: return a.count * es;
  }
}

uint64_t send_bytes(const hcomm_coll_args_t& a, int n, int rank) {
  const uint64_t es = a.dtype_size, c = a.count * es;
  const bool root = rank == a.root;
  switch (a.coll) {
    case HCOMM_COLL_REDUCE_SCATTER:
    case HCOMM_COLL_ALLTOALL: return c * n;
    case HCOMM_COLL_SCATTER: return root ? c * n : 0;
    case HCOMM_COLL_BROADCAST: return root ? c : 0;
    case HCOMM_COLL_ALLGATHERV: return a.recv_counts[rank] * es;
    case HCOMM_COLL_REDUCE_SCATTER_V: return sum(a.recv_counts, n) * es;
    case HCOMM_COLL_ALLTOALLV:
      return (a.in_place ? extent(a.recv_counts, a.recv_displs, n) : extent(a.send_counts, a.send_displs, n)) * es;
    case HCOMM_COLL_BARRIER: return 0;
    default: return c;
  }
}

uint64_t recv_bytes(const hcomm_coll_args_t& a, int n, int rank) {
  const uint64_t es = a.dtype_size, c = a.count * es;
  const bool root = rank == a.root;
  switch (a.coll) {
    case HCOMM_COLL_ALLGATHER:
    case HCOMM_COLL_ALLTOALL: return c * n;
    case HCOMM_COLL_GATHER: return root ? c * n : 0;
    case HCOMM_COLL_REDUCE: return root ? c : 0;
    case HCOMM_COLL_ALLGATHERV:
    case HCOMM_COLL_ALLTOALLV: return extent(a.recv_counts, a.recv_displs, n) * es;
    case HCOMM_COLL_REDUCE_SCATTER_V: return a.recv_counts[rank] * es;
    case HCOMM_COLL_BARRIER: return 0;
    default: return c;
  }
}

}  // namespace hcomm::algorithm
