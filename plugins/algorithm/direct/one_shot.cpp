// One-shot: every rank reads what it needs of every other rank itself, after
// one synchronisation. Allreduce: every rank reduces every input in rank
// order, so all compute the same bits; reduce: the root alone does.
// Broadcast: every rank reads the root's data; allgather: every other rank's
// block. Barrier: every rank sees every other's flag.
// The smallest data travel with the signals (an allreduce's over several
// flags' lines); small data go through the windows (an allreduce's in pieces
// when larger than a window); larger data, where ranks may copy from each
// other's buffers (HCOMM_VIEW_PEER_BUFFERS), are read from the peers' SEND
// instead: in place where it is mapped, with one copy where it is not.
#include <algorithm>
#include <limits>
#include <vector>

#include "common/services.hpp"
#include "direct.hpp"
#include "hcomm/plugin/layout.hpp"
#include "mapped_steps.hpp"

namespace hcomm::algo {

namespace {

constexpr double kFlagLineBytes = 64;  // a flag and its payload share one cache line

// Every rank exposes SEND at once (kInputReady) and combines `bytes` at
// `offset` of every rank's SEND in rank order into RECV: an allreduce's
// whole input, a reduce-scatter's own block. In place the result builds in
// scratch (the first load would overwrite this rank's input before its
// turn) and is copied to RECV; where peers read RECV (an allreduce's, which
// is SEND) only once every peer said kDoneReading. No rank leaves before
// that.
void reduce_from_peer_buffers(const DirectCall& direct, ScheduleWriter& out, uint64_t offset, uint64_t bytes,
                              bool peers_read_recv) {
  const Call& call = direct.call;
  signal_all(call, out, kInputReady, -1, HCOMM_STEP_SEND_READY);
  const bool in_place = call.args.in_place;
  if (in_place && bytes) direct.builder.need_scratch(&direct.builder, bytes);
  const hcomm_bufref_t result = at(in_place ? HCOMM_BUF_SCRATCH : HCOMM_BUF_RECV, 0);
  const int32_t reduced =
      bytes ? reduce_from_all(call, out, at(HCOMM_BUF_SEND, offset), result, bytes, -1, !in_place) : -1;
  if (!in_place || bytes == 0) {
    finish_peer_reads(call, out, reduced);
    return;
  }
  hcomm_step_t back = {.kind = HCOMM_STEP_COPY, .src = result, .dst = at(HCOMM_BUF_RECV, 0), .bytes = bytes,
                       .nchunks = out.chunks(bytes, call.args.dtype_size)};
  wait_chunkwise(back, reduced);
  if (peers_read_recv) wait_whole(back, finish_peer_reads(call, out, reduced));
  out.add(back);
  if (!peers_read_recv) finish_peer_reads(call, out, reduced);
}

// An allreduce's input (a reduce-scatter's blocks), a broadcast's data and
// a reduce's input travel in the signals, over several flags' lines, up to
// kInSignals; an allgather's block in a flag's line
// (HCOMM_SIGNAL_PAYLOAD_BYTES): beyond, the window is as fast or faster. A
// call in the signals uses no window half, so a root runs ahead of the
// other ranks (window::kLaps).
constexpr uint64_t kInSignals = 256;
static_assert(kInSignals <= HCOMM_SIGNAL_MAX_PAYLOAD_BYTES, "a signal carries kInSignals bytes");
bool in_signals(const hcomm_comm_view_t& view, hcomm_coll_t coll, uint64_t bytes) {
  const uint64_t most = coll == HCOMM_COLL_ALLGATHER || coll == HCOMM_COLL_ALLGATHERV ? HCOMM_SIGNAL_PAYLOAD_BYTES
                                                                                     : kInSignals;
  return (view.flags & HCOMM_VIEW_SIGNAL_PAYLOAD) && bytes <= most;
}

// A message that fits in the signals (in_signals) travels in them: every
// rank signals its input to every peer (`to_peers`; a reduce's root signals
// none) with kInputReady, and reduces the inputs in rank order once they are
// here; with `blocks` (a reduce-scatter) it signals block p to rank p and
// reduces its own block of every input. Peers' inputs land in scratch, one
// slot per rank. This rank's own is read from SEND, or from its slot where
// the first reduction into RECV would overwrite it before its turn (in
// place, with more than 2 ranks).
void build_inline(const DirectCall& direct, ScheduleWriter& out, bool to_peers,
                  const plugin::BlockLayout* blocks = nullptr) {
  const Call& call = direct.call;
  const int n = call.nranks, me = call.rank;
  const auto part = [&](int p) { return at(HCOMM_BUF_SEND, blocks ? blocks->offset(p) : 0); };
  const auto part_bytes = [&](int p) { return blocks ? blocks->bytes(p) : call.bytes; };
  const uint64_t b = part_bytes(me);
  if (b) direct.builder.need_scratch(&direct.builder, b * static_cast<uint64_t>(n));
  const auto slot = [b](int r) { return at(HCOMM_BUF_SCRATCH, r * b); };
  const bool copy_own = call.args.in_place && n > 2 && b;
  const hcomm_bufref_t own = copy_own ? slot(me) : part(me);
  int32_t copied = -1;
  if (copy_own) copied = out.add({.kind = HCOMM_STEP_COPY, .src = part(me), .dst = own, .bytes = b, .nchunks = 1});
  std::vector<int32_t> arrived(n, -1);
  int32_t signalled = -1;
  for (int p = 0; p < n && to_peers; ++p) {
    if (p == me || part_bytes(p) == 0) continue;
    // A reduce-scatter's block p is no rank's result here: it stays as it is.
    hcomm_step_t signal = {.kind = HCOMM_STEP_SIGNAL, .peer = p, .match = kInputReady, .src = blocks ? part(p) : own,
                           .bytes = part_bytes(p), .nchunks = 1};
    if (copied >= 0 && !blocks) wait_whole(signal, copied);
    signalled = out.add(signal);
  }
  if (b == 0) return;
  for (int p = 0; p < n; ++p)
    if (p != me)
      arrived[p] = out.add(
          {.kind = HCOMM_STEP_WAIT, .peer = p, .match = kInputReady, .dst = slot(p), .bytes = b, .nchunks = 1});
  arrived[me] = copied;
  const auto input = [&](int r) { return r == me ? own : slot(r); };
  int32_t previous = -1;
  for (int r = 1; r < n; ++r) {
    hcomm_step_t reduce = {.kind = HCOMM_STEP_REDUCE,
                           .flags = r == n - 1 ? static_cast<uint32_t>(HCOMM_STEP_FINAL) : 0u,
                           .src = r == 1 ? input(0) : at(HCOMM_BUF_RECV, 0),
                           .src2 = input(r),
                           .dst = at(HCOMM_BUF_RECV, 0),
                           .bytes = b,
                           .nchunks = 1};
    if (r == 1) {
      // In place, RECV is SEND, which the copy reads (or with 2 ranks, the signal).
      if (call.args.in_place) wait_for_step(reduce, copy_own ? copied : signalled, false);
      wait_for_step(reduce, arrived[0], false);
    }
    wait_for_step(reduce, arrived[r], false);
    wait_for_step(reduce, previous, false);
    previous = out.add(reduce);
  }
}

void build_allreduce(const DirectCall& direct, ScheduleWriter& out) {
  if (direct.call.bytes == 0) return;
  if (in_signals(direct.view, HCOMM_COLL_ALLREDUCE, direct.call.bytes))
    build_inline(direct, out, true);
  else if (reads_peer_buffers(direct.view, direct.call.bytes))
    reduce_from_peer_buffers(direct, out, 0, direct.call.bytes, true);
  else
    build_rounds(direct, RoundKind::kReduceAll, out);
}

// Every rank raises its flag for every peer and waits for theirs.
void build_barrier(const DirectCall& direct, ScheduleWriter& out) {
  signal_all(direct.call, out, kInputReady, -1);
  wait_all(direct.call, out, kInputReady, -1);
}

// A broadcast's data, a reduce's input or an allgather's block travel in
// the signals (in_signals) or through the windows wherever they fit one:
// two copies, but no message protocol, ahead of the message algorithms at
// every size up to where the peers' buffers are read. Not the rooted
// collectives on more ranks than cores (rooted_oversubscribed).
bool small_served(const hcomm_comm_view_t& view, hcomm_coll_t coll, uint64_t bytes) {
  if (rooted_oversubscribed(view, coll)) return false;
  return in_signals(view, coll, bytes) || bytes <= view.window_bytes;
}
void check_small(const DirectCall& direct, uint64_t bytes) {
  const hcomm_coll_t coll = direct.call.args.coll;
  if (!small_served(direct.view, coll, bytes))
    HCOMM_PLUGIN_THROW(HCOMM_ERR_UNSUPPORTED, "%s: %llu bytes per rank are left to the message algorithms (one_shot "
                       "serves up to %llu, and no rooted collective on more ranks than cores)", direct.call.algorithm,
                       static_cast<unsigned long long>(bytes),
                       static_cast<unsigned long long>(direct.view.window_bytes));
}

// This rank's `bytes` at SEND made readable by every peer, or by `only`
// (-1: all): in its signals, or copied into its window and announced.
void publish(const DirectCall& direct, uint64_t bytes, ScheduleWriter& out, int only = -1) {
  const Call& call = direct.call;
  const bool carried = in_signals(direct.view, call.args.coll, bytes);
  const int32_t copied = carried ? -1
                                 : out.add({.kind = HCOMM_STEP_COPY, .src = at(HCOMM_BUF_SEND, 0),
                                            .dst = at(HCOMM_BUF_WINDOW, 0), .bytes = bytes, .nchunks = 1});
  for (int p = 0; p < call.nranks; ++p) {
    if (p == call.rank || (only >= 0 && p != only)) continue;
    hcomm_step_t signal = {.kind = HCOMM_STEP_SIGNAL, .peer = p, .match = kInputReady, .nchunks = 1};
    if (carried) {
      signal.src = at(HCOMM_BUF_SEND, 0);
      signal.bytes = bytes;
    } else {
      wait_whole(signal, copied);
    }
    out.add(signal);
  }
}

// What rank `from` published, into `dst`: from its signal, or loaded from
// its window after it.
void take(const DirectCall& direct, int from, uint64_t bytes, hcomm_bufref_t dst, ScheduleWriter& out) {
  if (in_signals(direct.view, direct.call.args.coll, bytes)) {
    out.add({.kind = HCOMM_STEP_WAIT, .peer = from, .match = kInputReady, .dst = dst, .bytes = bytes, .nchunks = 1});
    return;
  }
  hcomm_step_t load = read_step(direct.call, from, at(HCOMM_BUF_WINDOW, 0), dst, bytes, 1, false, false);
  wait_whole(load, wait_for(out, from, kInputReady, -1));
  out.add(load);
}

// The root publishes; every other rank takes it into RECV. Through the
// windows, the core keeps the root from writing its half again until every
// rank finished this call.
void build_broadcast(const DirectCall& direct, ScheduleWriter& out) {
  const Call& call = direct.call;
  check_root(call);
  if (call.bytes == 0) return;
  check_small(direct, call.bytes);
  if (call.rank != call.args.root) return take(direct, call.args.root, call.bytes, at(HCOMM_BUF_RECV, 0), out);
  publish(direct, call.bytes, out);
  copy_input_to_output(call, out);
}

// Every other rank's input to the root, which reduces them all in rank
// order: in the signals, or from the windows (the root's own copied into its
// window too, for the shared reduction to read it there).
void build_reduce(const DirectCall& direct, ScheduleWriter& out) {
  const Call& call = direct.call;
  check_root(call);
  const int root = call.args.root;
  if (call.bytes == 0) return;
  check_small(direct, call.bytes);
  if (call.rank != root) return publish(direct, call.bytes, out, root);
  if (in_signals(direct.view, call.args.coll, call.bytes)) return build_inline(direct, out, false);
  const int32_t copied = out.add({.kind = HCOMM_STEP_COPY, .src = at(HCOMM_BUF_SEND, 0),
                                  .dst = at(HCOMM_BUF_WINDOW, 0), .bytes = call.bytes, .nchunks = 1});
  reduce_from_all(call, out, at(HCOMM_BUF_WINDOW, 0), at(HCOMM_BUF_RECV, 0), call.bytes, copied, true);
}

// Gather, scatter and alltoall blocks that fit in the signals travel in
// them, each from its SEND place straight to its RECV place: to the root
// (gather), from it (scatter), from every rank to every other (alltoall).
// Not the rooted ones on more ranks than cores.
bool blocks_in_signals(const hcomm_comm_view_t& view, hcomm_coll_t coll, uint64_t block) {
  return only_from_peers(coll) && in_signals(view, coll, block) && !rooted_oversubscribed(view, coll);
}

// Who sends a gather's, scatter's or alltoall's blocks to whom, and where a
// block lies: in the sender's SEND (and, through the windows, at the same
// offset of its window) and in the receiver's RECV.
struct BlockRoutes {
  const Call& call;
  hcomm_coll_t coll = call.args.coll;
  uint64_t b = call.bytes;
  int me = call.rank, n = call.nranks, root = call.args.root;
  bool gathers = coll == HCOMM_COLL_GATHER, scatters = coll == HCOMM_COLL_SCATTER;
  // This rank has a result: its own block goes from SEND to RECV unless in place.
  bool own_result = coll == HCOMM_COLL_ALLTOALL || me == root;
  bool sends_to(int p) const { return gathers ? p == root : !scatters || me == root; }
  bool hears_from(int p) const { return scatters ? p == root : !gathers || me == root; }
  uint64_t send_offset(int to) const { return gathers ? 0 : to * b; }
  hcomm_bufref_t recv_at(int from) const { return at(HCOMM_BUF_RECV, scatters ? 0 : from * b); }
  void copy_own_block(ScheduleWriter& out) const {
    if (own_result && !call.args.in_place)
      out.add({.kind = HCOMM_STEP_COPY, .src = at(HCOMM_BUF_SEND, send_offset(me)), .dst = recv_at(me), .bytes = b,
               .nchunks = 1});
  }
};

// Each block this rank sends is a signal's payload, and each it gets a
// WAIT's, into its place in RECV; its own block, where it has a result and
// not in place, a copy.
void build_blocks_in_signals(const DirectCall& direct, ScheduleWriter& out) {
  const Call& call = direct.call;
  if (call.args.coll != HCOMM_COLL_ALLTOALL) check_root(call);
  if (call.bytes == 0) return;
  const BlockRoutes r{call};
  r.copy_own_block(out);
  for (int k = 1; k < r.n; ++k) {
    const int p = (r.me + k) % r.n;
    int32_t sent = -1;
    if (r.sends_to(p))
      sent = out.add({.kind = HCOMM_STEP_SIGNAL, .peer = p, .match = kInputReady,
                      .src = at(HCOMM_BUF_SEND, r.send_offset(p)), .bytes = r.b, .nchunks = 1});
    if (!r.hears_from(p)) continue;
    hcomm_step_t take = {.kind = HCOMM_STEP_WAIT, .peer = p, .match = kInputReady, .dst = r.recv_at(p),
                         .bytes = r.b, .nchunks = 1};
    // An alltoall in place sends block p from where block p arrives.
    if (sent >= 0 && call.args.in_place) wait_whole(take, sent);
    out.add(take);
  }
}

// Gather, scatter and alltoall blocks beyond the signals travel through
// the windows where a rank's SEND fits its window and the blocks are not
// read from the peers' buffers (serves_from_peers): each sender copies its
// SEND into its window (at the same offsets) and signals the block's
// receivers, which load their block from there into its place in RECV. Two
// copies, but no message protocol: ahead of the message algorithms at every
// size up to where the peers' buffers are read. Not the rooted ones on more
// ranks than cores.
bool blocks_in_windows(const hcomm_comm_view_t& view, hcomm_coll_t coll, uint64_t block) {
  const uint64_t send_bytes = coll == HCOMM_COLL_GATHER ? block : block * static_cast<uint64_t>(view.nranks);
  return only_from_peers(coll) && (view.flags & HCOMM_VIEW_MAPPED) && send_bytes <= view.window_bytes &&
         !rooted_oversubscribed(view, coll) && !serves_from_peers(view, coll, block);
}

void build_blocks_in_windows(const DirectCall& direct, ScheduleWriter& out) {
  const Call& call = direct.call;
  if (call.args.coll != HCOMM_COLL_ALLTOALL) check_root(call);
  if (call.bytes == 0) return;
  const BlockRoutes r{call};
  // Every rank that sends copies its SEND into its window (a gather's root sends nothing).
  int32_t copied = -1;
  if ((!r.scatters || r.me == r.root) && !(r.gathers && r.me == r.root))
    copied = out.add({.kind = HCOMM_STEP_COPY, .src = at(HCOMM_BUF_SEND, 0), .dst = at(HCOMM_BUF_WINDOW, 0),
                      .bytes = r.gathers ? r.b : r.n * r.b, .nchunks = 1});
  r.copy_own_block(out);
  for (int k = 1; k < r.n; ++k) {
    const int p = (r.me + k) % r.n;
    if (!r.sends_to(p)) continue;
    hcomm_step_t signal = {.kind = HCOMM_STEP_SIGNAL, .peer = p, .match = kInputReady, .nchunks = 1};
    wait_whole(signal, copied);
    out.add(signal);
  }
  for (int k = 1; k < r.n; ++k) {
    const int p = (r.me + k) % r.n;
    if (!r.hears_from(p)) continue;
    hcomm_step_t load =
        read_step(call, p, at(HCOMM_BUF_WINDOW, r.send_offset(r.me)), r.recv_at(p), r.b, 1, false, false);
    wait_whole(load, wait_for(out, p, kInputReady, -1));
    // In place, RECV is SEND: block p arrives where the window copy read it.
    if (copied >= 0 && call.args.in_place) wait_whole(load, copied);
    out.add(load);
  }
}

// Where one_shot reads the peers' buffers for an allgather(v) or a
// reduce-scatter(v) whose largest block is `block` bytes (every rank sees
// the same), and leaves smaller blocks to the message algorithms (its cost is
// infinite there, and it declines). The thresholds are where it caught up
// with the best message algorithm: an allgather from 256 KiB (malloc'd
// buffers are registered from their second use there; below, peers copy
// them by address), a reduce-scatter on 2 ranks from 16 KiB, on more ranks
// at every size beyond the signals (small blocks go through the windows,
// where the core copies each SEND that fits).
constexpr uint64_t kGatherFromPeersFrom = 256 << 10, kReduceScatterFromPeersFrom = 16 << 10;
bool from_peers(const hcomm_comm_view_t& view, bool gathers, uint64_t block) {
  if (!gathers && view.nranks > 2) return view.flags & HCOMM_VIEW_PEER_BUFFERS;
  return reads_peer_buffers(view, block) && block >= (gathers ? kGatherFromPeersFrom : kReduceScatterFromPeersFrom);
}
void check_from_peers(const DirectCall& direct, bool gathers, uint64_t block) {
  if (!from_peers(direct.view, gathers, block))
    HCOMM_PLUGIN_THROW(HCOMM_ERR_UNSUPPORTED, "%s: blocks of %llu bytes are left to the message algorithms (one_shot "
                       "reads the peers' buffers, where ranks may copy from each other's, for allgather blocks from "
                       "%llu bytes and reduce-scatter blocks from %llu on 2 ranks, of any size on more)",
                       direct.call.algorithm, static_cast<unsigned long long>(block),
                       static_cast<unsigned long long>(kGatherFromPeersFrom),
                       static_cast<unsigned long long>(kReduceScatterFromPeersFrom));
}

// Allgather(v) of large blocks (from_peers): each rank loads every other
// rank's block from that rank's SEND into its place in RECV.
void build_allgather_from_peers(const DirectCall& direct, const plugin::BlockLayout& blocks, ScheduleWriter& out) {
  const Call& call = direct.call;
  const int me = call.rank;
  signal_all(call, out, kInputReady, -1, HCOMM_STEP_SEND_READY);
  if (!call.args.in_place && blocks.bytes(me))
    out.add({.kind = HCOMM_STEP_COPY, .src = at(HCOMM_BUF_SEND, 0), .dst = at(HCOMM_BUF_RECV, blocks.offset(me)),
             .bytes = blocks.bytes(me), .nchunks = out.chunks(blocks.bytes(me), call.args.dtype_size)});
  int32_t last = -1;
  // Starting after this rank spreads the readers of each rank's block.
  for (int k = 1; k < call.nranks; ++k) {
    const int p = (me + k) % call.nranks;
    const uint64_t bytes = blocks.bytes(p);
    if (bytes == 0) continue;
    hcomm_step_t load = read_step(call, p, at(HCOMM_BUF_SEND, 0), at(HCOMM_BUF_RECV, blocks.offset(p)), bytes,
                                  out.chunks(bytes, call.args.dtype_size), false, false);
    wait_whole(load, wait_for(out, p, kInputReady, -1));
    if (last >= 0) wait_whole(load, last);
    last = out.add(load);
  }
  finish_peer_reads(call, out, last);
}

// Reduce-scatter(v): small blocks in the signals; larger, each rank combines
// its block of every rank's SEND (in place, RECV is its own block of SEND,
// which no peer reads).
void build_reduce_scatter(const DirectCall& direct, ScheduleWriter& out) {
  const Call& call = direct.call;
  if (call.args.coll == HCOMM_COLL_REDUCE_SCATTER_V) check_recv_layout(call, false);
  const plugin::BlockLayout blocks = plugin::BlockLayout::send(call.args, call.nranks);
  if (in_signals(direct.view, call.args.coll, blocks.max_bytes())) return build_inline(direct, out, true, &blocks);
  check_from_peers(direct, false, blocks.max_bytes());
  reduce_from_peer_buffers(direct, out, blocks.offset(call.rank), blocks.bytes(call.rank), false);
}

// Every rank publishes its block and takes every other one into its place;
// large blocks are read from the peers' buffers.
void build_allgather(const DirectCall& direct, ScheduleWriter& out) {
  const Call& call = direct.call;
  if (call.args.coll == HCOMM_COLL_ALLGATHERV) check_recv_layout(call, true);
  const plugin::BlockLayout blocks = plugin::BlockLayout::recv(call.args, call.nranks);
  const uint64_t largest = blocks.max_bytes();
  if (largest == 0) return;
  if (from_peers(direct.view, true, largest)) return build_allgather_from_peers(direct, blocks, out);
  check_small(direct, largest);
  // Each block published and taken by its own size (in a signal or through
  // the window), which its owner and its takers see alike.
  if (const uint64_t b = blocks.bytes(call.rank)) {
    publish(direct, b, out);
    if (!call.args.in_place)
      out.add({.kind = HCOMM_STEP_COPY, .src = at(HCOMM_BUF_SEND, 0),
               .dst = at(HCOMM_BUF_RECV, blocks.offset(call.rank)), .bytes = b, .nchunks = 1});
  }
  for (int p = 0; p < call.nranks; ++p)
    if (p != call.rank && blocks.bytes(p)) take(direct, p, blocks.bytes(p), at(HCOMM_BUF_RECV, blocks.offset(p)), out);
}

void build_one_shot(const DirectCall& direct, ScheduleWriter& out) {
  const hcomm_coll_t coll = direct.call.args.coll;
  if (blocks_in_signals(direct.view, coll, direct.call.bytes)) return build_blocks_in_signals(direct, out);
  if (blocks_in_windows(direct.view, coll, direct.call.bytes)) return build_blocks_in_windows(direct, out);
  if (only_from_peers(coll) || serves_from_peers(direct.view, coll, direct.call.bytes))
    return build_from_peers(direct, out);
  switch (coll) {
    case HCOMM_COLL_BARRIER: build_barrier(direct, out); break;
    case HCOMM_COLL_BROADCAST: build_broadcast(direct, out); break;
    case HCOMM_COLL_ALLGATHER:
    case HCOMM_COLL_ALLGATHERV: build_allgather(direct, out); break;
    case HCOMM_COLL_REDUCE_SCATTER:
    case HCOMM_COLL_REDUCE_SCATTER_V: build_reduce_scatter(direct, out); break;
    case HCOMM_COLL_REDUCE: build_reduce(direct, out); break;
    default: build_allreduce(direct, out); break;
  }
}

// Allreduce: in the signals, every peer's input loaded with its flags and
// reduced; beyond, a load of every input and n - 1 reductions of it, plus a
// copy into the window and a synchronisation or two per piece; reduce, the
// same on the root only. Barrier: a flag seen, plus a line
// per peer. Broadcast: a flag seen, and through the window the data loaded
// (the copy into the window stays in the writer's cache and costs little
// beside the loads across cores). Allgather: the same for every block;
// larger blocks of allgathers and reduce-scatters from the peers' buffers.
double one_shot_cost(const hcomm_coll_args_t* args, const hcomm_comm_view_t* view) {
  if (!(view->flags & HCOMM_VIEW_MAPPED)) return std::numeric_limits<double>::infinity();
  const uint64_t bytes = static_cast<uint64_t>(args->count) * args->dtype_size;
  const double b = static_cast<double>(bytes);
  const hcomm_link_model_t& m = view->mapped;
  // In build_one_shot's order, so that the cost is of the schedule built.
  if (blocks_in_signals(*view, args->coll, bytes))  // a root's or an alltoall's n - 1 blocks in lines
    return m.alpha_us + (view->nranks - 1) * b * m.beta_us_per_byte;
  // n - 1 blocks loaded from the windows; the copy into a window stays in
  // the writer's cache, and costs little beside the loads across cores.
  if (blocks_in_windows(*view, args->coll, bytes)) return m.alpha_us + (view->nranks - 1) * b * m.beta_us_per_byte;
  if (serves_from_peers(*view, args->coll, bytes)) return from_peers_cost(*args, *view);
  if (only_from_peers(args->coll)) return bytes == 0 ? 0.0 : std::numeric_limits<double>::infinity();  // nothing moves
  if (args->coll == HCOMM_COLL_BARRIER)
    return m.alpha_us + (view->nranks - 1) * kFlagLineBytes * m.beta_us_per_byte;
  if (args->coll == HCOMM_COLL_REDUCE) {
    if (!small_served(*view, args->coll, bytes)) return std::numeric_limits<double>::infinity();
    // Each other input loaded (the copies into the windows stay in their writers' caches).
    const double loads = in_signals(*view, args->coll, bytes) ? 0.0 : view->nranks - 1.0;
    return m.alpha_us + loads * b * m.beta_us_per_byte + (view->nranks - 1) * b * m.gamma_us_per_byte;
  }
  const bool gathers = args->coll == HCOMM_COLL_ALLGATHER || args->coll == HCOMM_COLL_ALLGATHERV;
  if (gathers || args->coll == HCOMM_COLL_REDUCE_SCATTER || args->coll == HCOMM_COLL_REDUCE_SCATTER_V) {
    const uint64_t largest =
        (gathers ? plugin::BlockLayout::recv(*args, view->nranks) : plugin::BlockLayout::send(*args, view->nranks))
            .max_bytes();
    const double block = static_cast<double>(largest), peers = view->nranks - 1;
    if (!gathers && in_signals(*view, args->coll, largest))  // as an allreduce's in the signals
      return m.alpha_us + peers * block * (m.beta_us_per_byte + m.gamma_us_per_byte);
    // From the peers' buffers: the others' blocks loaded, or this rank's
    // block of every input combined; two synchronisations.
    if (from_peers(*view, gathers, largest))
      return 2.0 * m.alpha_us + (gathers ? peers * block * m.beta_us_per_byte
                                         : block * m.beta_us_per_byte + peers * block * m.gamma_us_per_byte);
    if (!gathers || !small_served(*view, args->coll, largest)) return std::numeric_limits<double>::infinity();
    // Each other block loaded.
    return m.alpha_us + (in_signals(*view, args->coll, largest) ? 0.0 : peers * block * m.beta_us_per_byte);
  }
  if (args->coll == HCOMM_COLL_BROADCAST) {
    if (!small_served(*view, args->coll, bytes)) return std::numeric_limits<double>::infinity();
    return m.alpha_us + (in_signals(*view, args->coll, bytes) ? 0.0 : b * m.beta_us_per_byte);  // loaded
  }
  if (in_signals(*view, args->coll, bytes))  // every peer's input in its lines, then reduced
    return m.alpha_us + (view->nranks - 1) * b * (m.beta_us_per_byte + m.gamma_us_per_byte);
  const bool direct = reads_peer_buffers(*view, bytes);
  const double pieces =
      direct ? 1.0 : static_cast<double>(std::max<uint64_t>(Pieces::of(args->count, args->dtype_size,
                                                                         view->window_bytes).count, 1));
  const double syncs = direct || pieces == 1.0 ? 1.0 + direct : 2.0 * pieces;
  return syncs * m.alpha_us + (direct ? 0.0 : b * m.beta_us_per_byte) + b * m.beta_us_per_byte +
         (view->nranks - 1) * b * m.gamma_us_per_byte;
}

constexpr uint32_t kOneShotColls = (1u << HCOMM_COLL_ALLREDUCE) | (1u << HCOMM_COLL_REDUCE) |
                                   (1u << HCOMM_COLL_BROADCAST) | (1u << HCOMM_COLL_ALLGATHER) |
                                   (1u << HCOMM_COLL_ALLGATHERV) | (1u << HCOMM_COLL_REDUCE_SCATTER) |
                                   (1u << HCOMM_COLL_REDUCE_SCATTER_V) | (1u << HCOMM_COLL_BARRIER) |
                                   (1u << HCOMM_COLL_GATHER) | (1u << HCOMM_COLL_SCATTER) |
                                   (1u << HCOMM_COLL_ALLTOALL);

// The call's collective where one_shot serves it; else allreduce, which the
// argument checks then find the call is not.
hcomm_result_t one_shot_build(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm,
                              hcomm_schedule_builder_t* builder) {
  const bool served = args && static_cast<unsigned>(args->coll) < 32 && (kOneShotColls >> args->coll & 1u);
  return run_direct("one_shot", served ? args->coll : HCOMM_COLL_ALLREDUCE, args, comm, builder, build_one_shot);
}

}  // namespace

constinit const hcomm_algorithm_desc_t kOneShot =
    direct_algorithm("one_shot", kOneShotColls, one_shot_cost, one_shot_build);

}  // namespace hcomm::algo
