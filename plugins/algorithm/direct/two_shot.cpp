// Two-shot allreduce: a reduce-scatter, then an allgather. Each rank
// combines a 1/n slice of every rank's input in rank order, and gathers the
// other slices from their owners; each slice is combined once, so every rank
// has the same bits. Small messages go through the windows (in pieces when
// larger than a window); larger ones, where ranks may copy from each other's
// buffers, are read from the peers' SEND (from 256 KiB pushed into the
// peers' windows instead, where ranks lie under different last-level caches
// and the slices fit a window), and from 256 KiB each rank stores its result
// into the peers' RECV (past the caches, where they are apart).
#include <algorithm>
#include <limits>
#include <vector>

#include "common/blocks.hpp"
#include "direct.hpp"
#include "mapped_steps.hpp"

namespace hcomm::algo {

namespace {

// Results are stored into the peers' RECV from here on, and where ranks lie
// under different last-level caches inputs pushed where they fit. Below, a
// peer's malloc'd RECV would be written by address (where
// HCOMM_AUTO_REGISTER is set, it is registered only from that size), which
// is slower. Under one cache pushing costs at every size: each pushed line
// moves to the writer's cache and back to its owner's, where a read moves it
// once.
constexpr uint64_t kPushFrom = 256 << 10;

uint64_t pushed_slot_bytes(uint64_t count, int nranks, size_t elem_size) {
  return (BlockPartition(count, nranks, elem_size).max_bytes() + 63) / 64 * 64;
}

bool pushes(const hcomm_comm_view_t& view, uint64_t count, size_t elem_size) {
  const uint64_t bytes = count * elem_size;
  return (view.flags & HCOMM_VIEW_PEER_BUFFERS) && (view.flags & HCOMM_VIEW_CACHES_APART) && bytes >= kPushFrom &&
         pushed_slot_bytes(count, view.nranks, elem_size) * (view.nranks - 1) <= view.window_bytes;
}

// This rank's slice of the result (RECV bytes [off, off + bytes), made chunk
// by chunk by step `made`) stored into every peer's RECV past the caches
// (MappedCall::store), after step `ready` where that is needed for every
// peer's RECV to be this call's, and each peer told so with kDoneReading.
void give_slice(const Call& call, ScheduleWriter& out, uint64_t off, uint64_t bytes, int32_t made, int32_t ready) {
  const uint32_t nchunks = out.chunks(bytes, call.args.dtype_size);
  for (int k = 1; k < call.nranks; ++k) {
    const int p = (call.rank + k) % call.nranks;
    hcomm_step_t give = {.kind = HCOMM_STEP_STORE, .peer = p, .src = at(HCOMM_BUF_RECV, off),
                         .dst = at(HCOMM_BUF_RECV, off), .bytes = bytes, .nchunks = nchunks};
    wait_chunkwise(give, made);
    if (ready >= 0) wait_whole(give, ready);
    hcomm_step_t given = {.kind = HCOMM_STEP_SIGNAL, .peer = p, .match = kDoneReading, .nchunks = 1};
    wait_whole(given, out.add(give));
    out.add(given);
  }
}

// Every peer with a slice has stored it here (give_slice), and with it read
// all it reads of this rank's buffers.
void await_slices(const Call& call, ScheduleWriter& out, const BlockPartition& blocks, int32_t after) {
  for (int p = 0; p < call.nranks; ++p)
    if (p != call.rank && blocks.bytes(p)) after = wait_for(out, p, kDoneReading, after);
}

// Every rank exposes SEND (kInputReady at once) and combines its slice from
// every rank's SEND into its RECV (through scratch when in place: the first
// load would overwrite its own input there), announces it (kSliceReduced)
// and loads every other slice from its owner's RECV; from kPushFrom it
// stores its slice into every peer's RECV instead (give_slice), past the
// caches: no line of a result is left in a peer's cache for the owner to
// take back when it writes the buffer next. Below, where the message fits in
// a window half, a slice is also published in its owner's window at its own
// offset (HCOMM_STEP_PUBLISH), where the core's copy of a SEND peers cannot
// map leaves a hole (the owner's slice of its SEND, which no peer loads):
// peers that cannot map the owner's RECV read it there instead of copying it
// by address, and where they can, the core skips that copy.
// Its own SEND and RECV are read until every peer says kDoneReading.
void build_from_peer_buffers(const DirectCall& direct, ScheduleWriter& out) {
  const Call& call = direct.call;
  const size_t es = call.args.dtype_size;
  const BlockPartition blocks(call.args.count, call.nranks, es);
  const int me = call.rank;
  const bool via_window = call.bytes <= direct.view.window_bytes;
  const bool gives = call.bytes >= kPushFrom;
  signal_all(call, out, kInputReady, -1, HCOMM_STEP_SEND_READY);
  int32_t last_read = -1;
  if (const uint64_t bytes = blocks.bytes(me)) {
    const uint64_t off = blocks.offset(me);
    const bool in_place = call.args.in_place;
    if (in_place) direct.builder.need_scratch(&direct.builder, bytes);
    const hcomm_bufref_t slice = at(in_place ? HCOMM_BUF_SCRATCH : HCOMM_BUF_RECV, in_place ? 0 : off);
    last_read = reduce_from_all(call, out, at(HCOMM_BUF_SEND, off), slice, bytes, -1, false);
    int32_t ready = last_read;
    const auto copy_to = [&](hcomm_bufref_t dst, uint32_t flags) {
      hcomm_step_t copy = {.kind = HCOMM_STEP_COPY,
                           .flags = flags,
                           .src = slice,
                           .dst = dst,
                           .bytes = bytes,
                           .nchunks = out.chunks(bytes, es)};
      wait_chunkwise(copy, ready);  // after the reduction, and the copy into RECV when in place
      return out.add(copy);
    };
    if (in_place) ready = copy_to(at(HCOMM_BUF_RECV, off), 0);
    if (gives) {
      give_slice(call, out, off, bytes, ready, -1);  // the reduction waited for every peer's kInputReady
    } else {
      if (via_window) ready = copy_to(at(HCOMM_BUF_WINDOW, off), HCOMM_STEP_PUBLISH);
      signal_all(call, out, kSliceReduced, ready);
    }
  }
  if (gives) return await_slices(call, out, blocks, -1);
  for (int k = 1; k < call.nranks; ++k) {
    const int p = (me + k) % call.nranks;
    const uint64_t bytes = blocks.bytes(p), off = blocks.offset(p);
    if (bytes == 0) continue;
    hcomm_step_t s = read_step(call, p, at(HCOMM_BUF_RECV, off), at(HCOMM_BUF_RECV, off), bytes,
                               out.chunks(bytes, es), false, false);
    wait_whole(s, wait_for(out, p, kSliceReduced, -1));
    if (last_read >= 0) wait_whole(s, last_read);
    last_read = out.add(s);
  }
  finish_peer_reads(call, out, last_read);
}

// Pushed: each rank stores its input's slice p into rank p's window (a slot
// per sender), combines its own slice from its input and the slices pushed
// to it, and stores the result into every peer's RECV; the stores pass the
// caches (MappedCall::store). No rank reads a line that another core wrote
// and keeps: where the cores sit on different last-level caches, taking a
// line from another core's cache is slower than memory, and a line a peer
// read in place must be taken back from it when its owner writes it next
// (the next input, the next result). Where the cores share their caches
// reading in place stays ahead.
uint64_t pushed_slot(int sender, int receiver, int n, uint64_t slot_bytes) {
  return static_cast<uint64_t>((sender - receiver + n) % n - 1) * slot_bytes;
}

void build_pushed(const DirectCall& direct, ScheduleWriter& out) {
  const Call& call = direct.call;
  const size_t es = call.args.dtype_size;
  const BlockPartition blocks(call.args.count, call.nranks, es);
  const int me = call.rank, n = call.nranks;
  const uint64_t slot = pushed_slot_bytes(call.args.count, n, es);
  signal_all(call, out, kInputReady, -1);
  // Every peer's window and RECV are this call's (one chain of waits, so
  // that every signal follows every wait before it: Schedule::in_order).
  const int32_t ready = wait_all(call, out, kInputReady, -1);
  for (int k = 1; k < n; ++k) {
    const int p = (me + k) % n;
    const uint64_t bytes = blocks.bytes(p);
    if (bytes == 0) continue;
    hcomm_step_t push = {.kind = HCOMM_STEP_STORE, .peer = p, .src = at(HCOMM_BUF_SEND, blocks.offset(p)),
                         .dst = at(HCOMM_BUF_WINDOW, pushed_slot(me, p, n, slot)), .bytes = bytes,
                         .nchunks = out.chunks(bytes, es)};
    wait_whole(push, ready);
    hcomm_step_t pushed = {.kind = HCOMM_STEP_SIGNAL, .peer = p, .match = kSliceReduced, .nchunks = 1};
    wait_whole(pushed, out.add(push));
    out.add(pushed);
  }
  const uint64_t bytes = blocks.bytes(me), off = blocks.offset(me);
  int32_t last = -1;
  if (bytes) {
    const bool in_place = call.args.in_place;
    if (in_place) direct.builder.need_scratch(&direct.builder, bytes);
    const hcomm_bufref_t slice = at(in_place ? HCOMM_BUF_SCRATCH : HCOMM_BUF_RECV, in_place ? 0 : off);
    const auto input = [&](int r) {
      return r == me ? at(HCOMM_BUF_SEND, off) : at(HCOMM_BUF_WINDOW, pushed_slot(r, me, n, slot));
    };
    std::vector<int32_t> arrived(n, -1);  // each peer's push
    for (int p = 0; p < n; ++p)
      if (p != me) arrived[p] = wait_for(out, p, kSliceReduced, -1);
    const uint32_t nchunks = out.chunks(bytes, es);
    for (int r = 1; r < n; ++r) {
      hcomm_step_t s = {.kind = HCOMM_STEP_REDUCE, .flags = r == n - 1 ? static_cast<uint32_t>(HCOMM_STEP_FINAL) : 0u,
                        .src = r == 1 ? input(0) : slice, .src2 = input(r), .dst = slice, .bytes = bytes,
                        .nchunks = nchunks};
      if (last >= 0) wait_chunkwise(s, last);
      if (r == 1 && me != 0) wait_whole(s, arrived[0]);
      if (r != me) wait_whole(s, arrived[r]);
      last = out.add(s);
    }
    if (in_place) {
      hcomm_step_t back = {.kind = HCOMM_STEP_COPY, .src = slice, .dst = at(HCOMM_BUF_RECV, off), .bytes = bytes,
                           .nchunks = nchunks};
      wait_chunkwise(back, last);
      last = out.add(back);
    }
    give_slice(call, out, off, bytes, last, ready);
  }
  await_slices(call, out, blocks, last);
}

void build_two_shot(const DirectCall& direct, ScheduleWriter& out) {
  if (direct.call.bytes == 0) return;
  if (pushes(direct.view, direct.call.args.count, direct.call.args.dtype_size))
    build_pushed(direct, out);
  else if (reads_peer_buffers(direct.view, direct.call.bytes))
    build_from_peer_buffers(direct, out);
  else
    build_rounds(direct, RoundKind::kReduceSlice, out);
}

// A copy of the input into the window (or none, from peers' buffers), (n-1)/n
// of it loaded and combined, (n-1)/n gathered, a slice copied back; two
// synchronisations per piece, three when its window half is reused (three
// in all from peers' buffers). Gathered slices were written just before by
// another core, which makes loading them about twice as slow.
double two_shot_cost(const hcomm_coll_args_t* args, const hcomm_comm_view_t* view) {
  if (!(view->flags & HCOMM_VIEW_MAPPED)) return std::numeric_limits<double>::infinity();
  const uint64_t bytes = static_cast<uint64_t>(args->count) * args->dtype_size;
  const double b = static_cast<double>(bytes);
  const hcomm_link_model_t& m = view->mapped;
  const int n = view->nranks;
  const double share = (n - 1) * b / n;
  if (bytes >= kPushFrom && reads_peer_buffers(*view, bytes))  // input slices and results moved once each
    return 3.0 * m.alpha_us + 2.0 * share * m.beta_us_per_byte + share * m.gamma_us_per_byte;
  if (reads_peer_buffers(*view, bytes))
    return 3.0 * m.alpha_us + 3.0 * share * m.beta_us_per_byte + share * m.gamma_us_per_byte;
  const double pieces = static_cast<double>(
      std::max<uint64_t>(Pieces::of(args->count, args->dtype_size, view->window_bytes).count, 1));
  const double syncs = pieces == 1.0 ? 2.0 : 3.0 * pieces;
  return syncs * m.alpha_us + (b + b / n + 3.0 * share) * m.beta_us_per_byte + share * m.gamma_us_per_byte;
}

hcomm_result_t two_shot_build(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm,
                              hcomm_schedule_builder_t* builder) {
  return run_direct("two_shot allreduce", HCOMM_COLL_ALLREDUCE, args, comm, builder, build_two_shot);
}

}  // namespace

constinit const hcomm_algorithm_desc_t kTwoShotAllreduce =
    direct_algorithm("two_shot", 1u << HCOMM_COLL_ALLREDUCE, two_shot_cost, two_shot_build);

}  // namespace hcomm::algo
