// Where rank r's block lies in SEND and RECV for the collectives made of
// per-rank blocks (allgather(v), reduce_scatter(_v), alltoall(v), gather,
// scatter), following the layouts in algorithm.h. Offsets and sizes in bytes.
#pragma once

#include <cstdint>
#include <vector>

#include "hcomm/plugin/algorithm.h"

namespace hcomm::algo {

class BlockLayout {
 public:
  uint64_t offset(int r) const { return offsets_[static_cast<size_t>(r)]; }
  uint64_t bytes(int r) const { return bytes_[static_cast<size_t>(r)]; }
  uint64_t max_bytes() const {
    uint64_t m = 0;
    for (uint64_t b : bytes_) m = b > m ? b : m;
    return m;
  }
  uint64_t total_bytes() const {
    uint64_t t = 0;
    for (uint64_t b : bytes_) t += b;
    return t;
  }

  // The blocks of the receive side (allgather(v), alltoall(v), gather), or of
  // the send side (reduce_scatter(_v), alltoall(v), scatter).
  static BlockLayout recv(const hcomm_coll_args_t& a, int nranks) {
    if (a.recv_counts && a.recv_displs) return from_arrays(a.recv_counts, a.recv_displs, nranks, a.dtype_size);
    if (a.recv_counts) return packed(a.recv_counts, nranks, a.dtype_size);
    return equal(a.count, nranks, a.dtype_size);
  }
  static BlockLayout send(const hcomm_coll_args_t& a, int nranks) {
    if (a.coll == HCOMM_COLL_ALLTOALLV && a.in_place) return recv(a, nranks);
    if (a.send_counts && a.send_displs) return from_arrays(a.send_counts, a.send_displs, nranks, a.dtype_size);
    if (a.recv_counts) return packed(a.recv_counts, nranks, a.dtype_size);  // reduce_scatter_v
    return equal(a.count, nranks, a.dtype_size);
  }

 private:
  static BlockLayout equal(uint64_t count, int nranks, uint64_t es) {
    BlockLayout l;
    for (int r = 0; r < nranks; ++r) l.add(static_cast<uint64_t>(r) * count * es, count * es);
    return l;
  }
  static BlockLayout packed(const size_t* counts, int nranks, uint64_t es) {
    BlockLayout l;
    uint64_t at = 0;
    for (int r = 0; r < nranks; ++r) {
      l.add(at * es, counts[r] * es);
      at += counts[r];
    }
    return l;
  }
  static BlockLayout from_arrays(const size_t* counts, const size_t* displs, int nranks, uint64_t es) {
    BlockLayout l;
    for (int r = 0; r < nranks; ++r) l.add(displs[r] * es, counts[r] * es);
    return l;
  }
  void add(uint64_t offset, uint64_t bytes) {
    offsets_.push_back(offset);
    bytes_.push_back(bytes);
  }

  std::vector<uint64_t> offsets_;
  std::vector<uint64_t> bytes_;
};

}  // namespace hcomm::algo
