#include "core/exec/schedule.hpp"

#include <algorithm>

#include "core/common/error.hpp"

namespace hcomm::exec {

void Schedule::chunk_range(const hcomm_step_t& s, size_t elem_size, uint32_t c, uint64_t* offset, uint64_t* bytes) {
  uint64_t elems = s.bytes / elem_size;
  uint64_t first = elems * c / s.nchunks, last = elems * (c + 1) / s.nchunks;
  *offset = first * elem_size;
  *bytes = (last - first) * elem_size;
}

void finalize_schedule(Schedule& s, uint64_t send_bytes, uint64_t recv_bytes) {
  const size_t es = s.args.dtype_size ? s.args.dtype_size : 1;
  auto fail = [&](size_t i, const char* what) {
    HCOMM_THROW(HCOMM_ERR_INTERNAL, "algorithm %s built an invalid schedule: step %zu: %s", s.algorithm.c_str(), i,
                what);
  };
  auto check_ref = [&](size_t i, const hcomm_bufref_t& r, uint64_t bytes) {
    uint64_t limit = r.buffer == HCOMM_BUF_SEND   ? send_bytes
                     : r.buffer == HCOMM_BUF_RECV ? recv_bytes
                     : r.buffer == HCOMM_BUF_SCRATCH ? s.algorithm_scratch
                                                   : 0;
    if (r.buffer > HCOMM_BUF_SCRATCH) fail(i, "unknown buffer");
    if (r.offset > limit || bytes > limit - r.offset) fail(i, "buffer reference out of range");
  };
  uint64_t staging = s.algorithm_scratch;
  s.staging_offset.assign(s.steps.size(), 0);
  s.staging_slot.assign(s.steps.size(), 0);
  for (size_t i = 0; i < s.steps.size(); ++i) {
    hcomm_step_t& st = s.steps[i];
    if (st.nchunks == 0) st.nchunks = 1;
    if (st.nchunks > kMaxChunks) fail(i, "more chunks than tags can carry");
    if (st.bytes % es) fail(i, "bytes not a whole number of elements");
    if (st.ndeps > HCOMM_STEP_MAX_DEPS) fail(i, "too many dependencies");
    for (uint32_t d = 0; d < st.ndeps; ++d) {
      if (st.deps[d] < 0 || static_cast<size_t>(st.deps[d]) >= i) fail(i, "a dependency does not point backwards");
      bool whole = st.whole_deps & (1u << d);
      if (!whole && s.steps[st.deps[d]].nchunks != st.nchunks)
        fail(i, "a chunk-wise dependency on a step with another chunk count");
    }
    switch (st.kind) {
      case HCOMM_STEP_SEND: check_ref(i, st.src, st.bytes); break;
      case HCOMM_STEP_RECV: check_ref(i, st.dst, st.bytes); break;
      case HCOMM_STEP_RECV_REDUCE: {
        check_ref(i, st.src, st.bytes);
        check_ref(i, st.dst, st.bytes);
        uint64_t elems = st.bytes / es;
        uint64_t max_chunk = (elems + st.nchunks - 1) / st.nchunks * es;
        max_chunk = (max_chunk + 63) & ~uint64_t{63};  // cache-line aligned slots
        s.staging_offset[i] = staging;
        s.staging_slot[i] = max_chunk;
        staging += max_chunk * std::min(st.nchunks, kMaxInflightChunks);
        break;
      }
      case HCOMM_STEP_REDUCE:
        check_ref(i, st.src, st.bytes);
        check_ref(i, st.src2, st.bytes);
        check_ref(i, st.dst, st.bytes);
        break;
      case HCOMM_STEP_COPY:
        check_ref(i, st.src, st.bytes);
        check_ref(i, st.dst, st.bytes);
        break;
      default: fail(i, "unknown step kind");
    }
    if ((st.kind == HCOMM_STEP_SEND || st.kind == HCOMM_STEP_RECV || st.kind == HCOMM_STEP_RECV_REDUCE) &&
        st.match >= (1u << 24))
      fail(i, "match id does not fit in 24 bits");
  }
  s.scratch_bytes = staging;
}

}  // namespace hcomm::exec
