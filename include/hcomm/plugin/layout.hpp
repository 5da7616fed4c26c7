// Where rank r's block lies in SEND and RECV for the collectives made of
// per-rank blocks (allgather(v), reduce_scatter(_v), alltoall(v), gather,
// scatter), following the layouts in algorithm.h (header only, optional; the
// core sizes and checks a call's buffers with it too). Offsets and sizes in
// bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "hcomm/plugin/algorithm.h"

namespace hcomm::plugin {

// One side of a call's blocks: block r holds counts[r] elements (`count`
// without counts) and starts at displs[r] where the layout has
// displacements, else right after block r - 1. Reads the arrays of the
// call's arguments in place: nothing is copied.
class Blocks {
 public:
  // The receive side (allgather(v), alltoall(v), gather; reduce_scatter_v's
  // counts, packed), or the send side (reduce_scatter(_v), alltoall(v),
  // scatter; alltoallv in place uses the receive layout).
  static Blocks recv(const hcomm_coll_args_t& a) {
    return Blocks(a.recv_counts, a.recv_counts ? a.recv_displs : nullptr, a.count, a.dtype_size);
  }
  static Blocks send(const hcomm_coll_args_t& a) {
    if (a.coll == HCOMM_COLL_ALLTOALLV && a.in_place) return recv(a);
    if (a.send_counts && a.send_displs) return Blocks(a.send_counts, a.send_displs, a.count, a.dtype_size);
    return Blocks(a.recv_counts, nullptr, a.count, a.dtype_size);  // reduce_scatter_v: packed
  }

  uint64_t bytes(int r) const { return (counts_ ? counts_[r] : count_) * elem_size_; }
  // Without displacements: the bytes of the blocks before r.
  uint64_t offset(int r) const {
    if (displs_) return displs_[r] * elem_size_;
    if (!counts_) return static_cast<uint64_t>(r) * count_ * elem_size_;
    uint64_t before = 0;
    for (int i = 0; i < r; ++i) before += counts_[i];
    return before * elem_size_;
  }
  // Calls f(r, offset, bytes) for the blocks of ranks 0 to nranks - 1, in order.
  template <class F>
  void for_each(int nranks, F f) const {
    uint64_t next = 0;  // right after the block before
    for (int r = 0; r < nranks; ++r) {
      const uint64_t at = displs_ ? displs_[r] * elem_size_ : next, b = bytes(r);
      f(r, at, b);
      next = at + b;
    }
  }
  uint64_t total(int nranks) const {
    uint64_t t = 0;
    for_each(nranks, [&](int, uint64_t, uint64_t b) { t += b; });
    return t;
  }
  // The end of the furthest non-empty block: the bytes the side's buffer spans.
  uint64_t extent(int nranks) const {
    uint64_t end = 0;
    for_each(nranks, [&](int, uint64_t at, uint64_t b) {
      if (b && at + b > end) end = at + b;
    });
    return end;
  }

 private:
  Blocks(const size_t* counts, const size_t* displs, uint64_t count, uint64_t elem_size)
      : counts_(counts), displs_(displs), count_(count), elem_size_(elem_size) {}

  const size_t* counts_;
  const size_t* displs_;
  uint64_t count_;
  uint64_t elem_size_;
};

// Every block of one side at once, for code that visits them all.
class BlockLayout {
 public:
  static BlockLayout recv(const hcomm_coll_args_t& a, int nranks) { return BlockLayout(Blocks::recv(a), nranks); }
  static BlockLayout send(const hcomm_coll_args_t& a, int nranks) { return BlockLayout(Blocks::send(a), nranks); }

  BlockLayout(const Blocks& blocks, int nranks) {
    blocks.for_each(nranks, [&](int, uint64_t at, uint64_t b) {
      offsets_.push_back(at);
      bytes_.push_back(b);
    });
  }

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

 private:
  std::vector<uint64_t> offsets_;
  std::vector<uint64_t> bytes_;
};

}  // namespace hcomm::plugin
