// Allreduce through the windows, piece by piece. Round j copies piece j of
// SEND into this rank's window (a window half when there are several pieces,
// so that round j + 1 fills the other half while peers still read this one),
// raises kInputReady, and reduces: the whole piece (kReduceAll), or this
// rank's slice, which it puts back into its window and announces with
// kSliceReduced for the others to gather (kReduceSlice). Before round j + 2
// reuses the half, every peer says with kDoneReading that it read round j,
// and this rank's own reads of round j are done.
#include <algorithm>

#include "common/blocks.hpp"
#include "common/services.hpp"
#include "direct.hpp"
#include "mapped_steps.hpp"

namespace hcomm::algo {

Pieces Pieces::of(uint64_t elements, size_t elem_size, uint64_t window_bytes) {
  if (elements * elem_size <= window_bytes) return {elements, elements ? 1u : 0u, elements * elem_size};
  const uint64_t per_piece = window_bytes / 2 / elem_size;
  if (per_piece == 0) return {0, 0, 0};
  return {per_piece, (elements + per_piece - 1) / per_piece, per_piece * elem_size};
}

int32_t reduce_from_all(const Call& call, ScheduleWriter& out, hcomm_bufref_t src, hcomm_bufref_t dst, uint64_t bytes,
                        int32_t own_ready, bool unread) {
  const auto mark = [unread](hcomm_step_t& s) {
    if (unread && (s.flags & HCOMM_STEP_FINAL)) s.flags |= HCOMM_STEP_UNREAD;
  };
  const uint32_t nchunks = out.chunks(bytes, call.args.dtype_size);
  const int n = call.nranks;
  int32_t previous = -1;
  int r = 0;
  // Ranks 0 and 1 combine the first two inputs in one step, their own with
  // the other's: a op b and b op a have the same bits for every op.
  if (call.rank <= 1) {
    const int other = 1 - call.rank;
    hcomm_step_t s = read_step(call, other, src, dst, bytes, nchunks, true, n == 2);
    s.src = src;
    mark(s);
    if (own_ready >= 0) wait_whole(s, own_ready);
    wait_whole(s, wait_for(out, other, kInputReady, -1));
    previous = out.add(s);
    r = 2;
  }
  for (; r < n; ++r) {
    hcomm_step_t s = read_step(call, r, src, dst, bytes, nchunks, r > 0, r == n - 1);
    mark(s);
    if (previous >= 0) wait_chunkwise(s, previous);
    if ((r == call.rank || previous < 0) && own_ready >= 0) wait_whole(s, own_ready);
    if (r != call.rank) wait_whole(s, wait_for(out, r, kInputReady, -1));
    previous = out.add(s);
  }
  return previous;
}

int32_t finish_peer_reads(const Call& call, ScheduleWriter& out, int32_t read) {
  signal_all(call, out, kDoneReading, read);
  return wait_all(call, out, kDoneReading, -1);
}

namespace {

// This rank's slice of the piece reduced, put back into its window and
// announced; then the others' slices gathered. Returns the last step that
// read a peer's window.
int32_t reduce_slice(const Call& call, ScheduleWriter& out, uint64_t elements, uint64_t base, uint64_t slot,
                     int32_t copied_in) {
  const size_t es = call.args.dtype_size;
  const BlockPartition blocks(elements, call.nranks, es);
  const int me = call.rank;
  int32_t last_read = -1;
  if (const uint64_t bytes = blocks.bytes(me)) {
    const uint64_t off = blocks.offset(me);
    last_read = reduce_from_all(call, out, at(HCOMM_BUF_WINDOW, slot + off), at(HCOMM_BUF_RECV, base + off), bytes,
                                copied_in, false);
    hcomm_step_t back = {.kind = HCOMM_STEP_COPY,
                         .src = at(HCOMM_BUF_RECV, base + off),
                         .dst = at(HCOMM_BUF_WINDOW, slot + off),
                         .bytes = bytes,
                         .nchunks = out.chunks(bytes, es)};
    wait_chunkwise(back, last_read);
    signal_all(call, out, kSliceReduced, out.add(back));
  }
  // Starting after this rank spreads the readers of each window.
  for (int k = 1; k < call.nranks; ++k) {
    const int p = (me + k) % call.nranks;
    const uint64_t bytes = blocks.bytes(p), off = blocks.offset(p);
    if (bytes == 0) continue;
    hcomm_step_t s = read_step(call, p, at(HCOMM_BUF_WINDOW, slot + off), at(HCOMM_BUF_RECV, base + off), bytes,
                               out.chunks(bytes, es), false, false);
    wait_whole(s, wait_for(out, p, kSliceReduced, -1));
    if (last_read >= 0) wait_whole(s, last_read);
    last_read = out.add(s);
  }
  return last_read;
}

}  // namespace

void build_rounds(const DirectCall& direct, RoundKind kind, ScheduleWriter& out) {
  const Call& call = direct.call;
  const hcomm_comm_view_t& view = direct.view;
  const size_t es = call.args.dtype_size;
  const Pieces pieces = Pieces::of(call.args.count, es, view.window_bytes);
  if (pieces.count == 0)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_UNSUPPORTED, "%s: a window of %llu bytes holds no piece of %zu-byte elements",
                       call.algorithm, static_cast<unsigned long long>(view.window_bytes), es);
  if (pieces.count > HCOMM_MAX_SIGNAL_OCCURRENCES)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_UNSUPPORTED, "%s: %llu pieces through a window of %llu bytes are too many signals",
                       call.algorithm, static_cast<unsigned long long>(pieces.count),
                       static_cast<unsigned long long>(view.window_bytes));
  int32_t last_read[2] = {-1, -1};  // by the half a round used
  for (uint64_t j = 0; j < pieces.count; ++j) {
    const uint64_t first = j * pieces.elements;
    const uint64_t elements = std::min(pieces.elements, call.args.count - first);
    const uint64_t bytes = elements * es, base = first * es, slot = (j % 2) * pieces.slot_bytes;
    hcomm_step_t copy_in = {.kind = HCOMM_STEP_COPY,
                            .src = at(HCOMM_BUF_SEND, base),
                            .dst = at(HCOMM_BUF_WINDOW, slot),
                            .bytes = bytes,
                            .nchunks = out.chunks(bytes, es)};
    if (j >= 2) {
      wait_whole(copy_in, wait_all(call, out, kDoneReading, -1));
      if (last_read[j % 2] >= 0) wait_whole(copy_in, last_read[j % 2]);
    }
    const int32_t copied_in = out.add(copy_in);
    signal_all(call, out, kInputReady, copied_in);
    last_read[j % 2] =
        kind == RoundKind::kReduceAll
            ? reduce_from_all(call, out, at(HCOMM_BUF_WINDOW, slot), at(HCOMM_BUF_RECV, base), bytes, copied_in, true)
            : reduce_slice(call, out, elements, base, slot, copied_in);
    if (j + 2 < pieces.count) signal_all(call, out, kDoneReading, last_read[j % 2]);
  }
}

}  // namespace hcomm::algo
