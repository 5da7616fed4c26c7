#include "core/algorithm/layout.hpp"

#include "hcomm/plugin/layout.hpp"

namespace hcomm::algorithm {

using plugin::Blocks;

uint64_t message_bytes(const hcomm_coll_args_t& a, int n) {
  switch (a.coll) {
    case HCOMM_COLL_ALLGATHER:
    case HCOMM_COLL_REDUCE_SCATTER:
    case HCOMM_COLL_ALLTOALL:
    case HCOMM_COLL_GATHER:
    case HCOMM_COLL_SCATTER:
    case HCOMM_COLL_ALLGATHERV:
    case HCOMM_COLL_REDUCE_SCATTER_V:
    case HCOMM_COLL_ALLTOALLV:
      return Blocks::recv(a).total(n);
    case HCOMM_COLL_BARRIER: return 0;
    default:
      return a.count * a.dtype_size;
  }
}

uint64_t send_bytes(const hcomm_coll_args_t& a, int n, int rank) {
  const bool root = rank == a.root;
  switch (a.coll) {
    case HCOMM_COLL_REDUCE_SCATTER:
    case HCOMM_COLL_ALLTOALL:
    case HCOMM_COLL_REDUCE_SCATTER_V:
    case HCOMM_COLL_ALLTOALLV:
      return Blocks::send(a).extent(n);
    case HCOMM_COLL_SCATTER:
      return root ? Blocks::send(a).extent(n) : 0;
    case HCOMM_COLL_BROADCAST:
      return root ? a.count * a.dtype_size : 0;
    case HCOMM_COLL_ALLGATHERV:
      return Blocks::recv(a).bytes(rank);
    case HCOMM_COLL_BARRIER: return 0;
    default:
      return a.count * a.dtype_size;
  }
}

uint64_t recv_bytes(const hcomm_coll_args_t& a, int n, int rank) {
  const bool root = rank == a.root;
  switch (a.coll) {
    case HCOMM_COLL_ALLGATHER:
    case HCOMM_COLL_ALLTOALL:
    case HCOMM_COLL_ALLGATHERV:
    case HCOMM_COLL_ALLTOALLV:
      return Blocks::recv(a).extent(n);
    case HCOMM_COLL_GATHER:
      return root ? Blocks::recv(a).extent(n) : 0;
    case HCOMM_COLL_REDUCE:
      return root ? a.count * a.dtype_size : 0;
    case HCOMM_COLL_REDUCE_SCATTER_V:
      return Blocks::recv(a).bytes(rank);
    case HCOMM_COLL_EXSCAN:  // rank 0's result is undefined: its RECV is not touched
      return rank == 0 ? 0 : a.count * a.dtype_size;
    case HCOMM_COLL_BARRIER: return 0;
    default:
      return a.count * a.dtype_size;
  }
}

}  // namespace hcomm::algorithm
