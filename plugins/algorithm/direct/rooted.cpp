// one_shot's large rooted collectives (reduce, broadcast, gather, scatter)
// and alltoall, read from the peers' buffers where ranks may copy from each
// other's: a rank whose SEND others read raises kInputReady with
// HCOMM_STEP_SEND_READY and returns only after their kDoneReading; a
// reader loads what it needs once it saw kInputReady, then says
// kDoneReading. One copy per byte moved (a reduce's root combines the inputs
// where they lie), against the message algorithms' copy into a staging
// area and out of it, or a system call per message.
#include <algorithm>
#include <vector>

#include "common/services.hpp"
#include "direct.hpp"
#include "hcomm/plugin/layout.hpp"
#include "mapped_steps.hpp"

namespace hcomm::algo {

namespace {

// This rank's SEND is ready for `reader`, and it waits for the reader's
// kDoneReading; or, with -1, for every peer, whose kDoneReading the caller
// waits for after its own steps.
void lend_send(const Call& call, ScheduleWriter& out, int reader) {
  if (reader >= 0) {
    out.add({.kind = HCOMM_STEP_SIGNAL, .flags = HCOMM_STEP_SEND_READY, .peer = reader, .match = kInputReady,
             .nchunks = 1});
    wait_for(out, reader, kDoneReading, -1);
    return;
  }
  signal_all(call, out, kInputReady, -1, HCOMM_STEP_SEND_READY);
}

// `bytes` at `offset` of `peer`'s SEND into `dst`, after its kInputReady
// and after step `after`; returns the load.
int32_t load_from(const Call& call, ScheduleWriter& out, int peer, uint64_t offset, hcomm_bufref_t dst,
                  uint64_t bytes, int32_t after) {
  hcomm_step_t load = read_step(call, peer, at(HCOMM_BUF_SEND, offset), dst, bytes,
                                out.chunks(bytes, call.args.dtype_size), false, false);
  wait_whole(load, wait_for(out, peer, kInputReady, -1));
  if (after >= 0) wait_whole(load, after);
  return out.add(load);
}

// The root combines every rank's SEND in rank order into RECV (through
// scratch in place, where RECV is its own input); the others lend it theirs.
void build_reduce(const DirectCall& direct, ScheduleWriter& out) {
  const Call& call = direct.call;
  const int root = call.args.root;
  if (call.rank != root) return lend_send(call, out, root);
  const bool in_place = call.args.in_place;
  if (in_place) direct.builder.need_scratch(&direct.builder, call.bytes);
  const hcomm_bufref_t result = at(in_place ? HCOMM_BUF_SCRATCH : HCOMM_BUF_RECV, 0);
  const int32_t reduced = reduce_from_all(call, out, at(HCOMM_BUF_SEND, 0), result, call.bytes, -1, !in_place);
  signal_all(call, out, kDoneReading, reduced);
  if (!in_place) return;
  hcomm_step_t back = {.kind = HCOMM_STEP_COPY, .flags = HCOMM_STEP_UNREAD, .src = result,
                       .dst = at(HCOMM_BUF_RECV, 0), .bytes = call.bytes,
                       .nchunks = out.chunks(call.bytes, call.args.dtype_size)};
  wait_chunkwise(back, reduced);
  out.add(back);
}

// Every other rank loads the root's SEND (at the block `scatters` names for
// it: rank r's block of a scatter) into RECV; the root places its own.
void build_from_root(const DirectCall& direct, ScheduleWriter& out, bool scatters) {
  const Call& call = direct.call;
  const int root = call.args.root;
  const uint64_t mine = scatters ? static_cast<uint64_t>(call.rank) * call.bytes : 0;
  if (call.rank != root) {
    const int32_t loaded = load_from(call, out, root, mine, at(HCOMM_BUF_RECV, 0), call.bytes, -1);
    hcomm_step_t done = {.kind = HCOMM_STEP_SIGNAL, .peer = root, .match = kDoneReading, .nchunks = 1};
    wait_whole(done, loaded);
    out.add(done);
    return;
  }
  lend_send(call, out, -1);
  if (!call.args.in_place)
    out.add({.kind = HCOMM_STEP_COPY, .src = at(HCOMM_BUF_SEND, mine), .dst = at(HCOMM_BUF_RECV, 0),
             .bytes = call.bytes, .nchunks = out.chunks(call.bytes, call.args.dtype_size)});
  wait_all(call, out, kDoneReading, -1);
}

// The root loads every other rank's SEND into its block of RECV.
void build_gather(const DirectCall& direct, ScheduleWriter& out) {
  const Call& call = direct.call;
  const int root = call.args.root, n = call.nranks;
  if (call.rank != root) return lend_send(call, out, root);
  if (!call.args.in_place)
    out.add({.kind = HCOMM_STEP_COPY, .src = at(HCOMM_BUF_SEND, 0),
             .dst = at(HCOMM_BUF_RECV, static_cast<uint64_t>(root) * call.bytes), .bytes = call.bytes,
             .nchunks = out.chunks(call.bytes, call.args.dtype_size)});
  int32_t last = -1;
  for (int k = 1; k < n; ++k) {
    const int p = (root + k) % n;
    last = load_from(call, out, p, 0, at(HCOMM_BUF_RECV, static_cast<uint64_t>(p) * call.bytes), call.bytes, last);
  }
  signal_all(call, out, kDoneReading, last);
}

// Every rank loads its block of every other rank's SEND into that rank's
// block of RECV (in place through scratch, each block copied back once it
// is loaded and no peer reads this rank's buffer any more).
void build_alltoall(const DirectCall& direct, ScheduleWriter& out) {
  const Call& call = direct.call;
  const int me = call.rank, n = call.nranks;
  const uint64_t b = call.bytes, own = static_cast<uint64_t>(me) * b;
  const bool in_place = call.args.in_place;
  if (in_place) direct.builder.need_scratch(&direct.builder, b * static_cast<uint64_t>(n));
  const auto block = [&](int p) { return at(in_place ? HCOMM_BUF_SCRATCH : HCOMM_BUF_RECV, p * b); };
  lend_send(call, out, -1);
  if (!in_place)
    out.add({.kind = HCOMM_STEP_COPY, .src = at(HCOMM_BUF_SEND, own), .dst = block(me), .bytes = b,
             .nchunks = out.chunks(b, call.args.dtype_size)});
  std::vector<int32_t> loaded(n, -1);
  for (int k = 1; k < n; ++k) {
    const int p = (me + k) % n;
    loaded[p] = load_from(call, out, p, own, block(p), b, k > 1 ? loaded[(p + n - 1) % n] : -1);
  }
  const int32_t done = finish_peer_reads(call, out, loaded[(me + n - 1) % n]);
  if (!in_place) return;
  for (int k = 1; k < n; ++k) {
    const int p = (me + k) % n;
    hcomm_step_t back = {.kind = HCOMM_STEP_COPY, .src = block(p), .dst = at(HCOMM_BUF_RECV, p * b), .bytes = b,
                         .nchunks = out.chunks(b, call.args.dtype_size)};
    wait_whole(back, done);
    wait_chunkwise(back, loaded[p]);
    out.add(back);
  }
}

// On 2 ranks one_shot reads the peers' buffers from kPeerCollectivesFrom,
// where it caught up with the best message algorithm; below, the message
// algorithms' rooted calls return without waiting for each other, and
// malloc'd buffers are copied by address unless HCOMM_AUTO_REGISTER
// registers them. An alltoall on more than 2 ranks reads them wherever
// ranks may. The rooted ones only on no more ranks than cores (see
// one_shot.cpp); and whatever the size where the data do not fit a window.
uint64_t peer_collectives_from(const hcomm_comm_view_t& view, hcomm_coll_t coll) {
  return coll == HCOMM_COLL_ALLTOALL && view.nranks > 2 ? 0 : kPeerCollectivesFrom;
}

}  // namespace

bool serves_from_peers(const hcomm_comm_view_t& view, hcomm_coll_t coll, uint64_t bytes) {
  if (!only_from_peers(coll) && coll != HCOMM_COLL_BROADCAST && coll != HCOMM_COLL_REDUCE) return false;
  if (rooted_oversubscribed(view, coll)) return false;
  return reads_peer_buffers(view, bytes) && (bytes >= peer_collectives_from(view, coll) || bytes > view.window_bytes);
}

double from_peers_cost(const hcomm_coll_args_t& args, const hcomm_comm_view_t& view) {
  const uint64_t bytes = static_cast<uint64_t>(args.count) * args.dtype_size;
  const double b = static_cast<double>(bytes), peers = view.nranks - 1;
  const hcomm_link_model_t& m = view.mapped;
  switch (args.coll) {
    case HCOMM_COLL_REDUCE: return 2.0 * m.alpha_us + b * m.beta_us_per_byte + peers * b * m.gamma_us_per_byte;
    case HCOMM_COLL_GATHER:
    case HCOMM_COLL_ALLTOALL: return 2.0 * m.alpha_us + peers * b * m.beta_us_per_byte;
    default: return 2.0 * m.alpha_us + b * m.beta_us_per_byte;  // broadcast, scatter
  }
}

void build_from_peers(const DirectCall& direct, ScheduleWriter& out) {
  const Call& call = direct.call;
  const hcomm_coll_t coll = call.args.coll;
  if (coll != HCOMM_COLL_ALLTOALL) check_root(call);
  if (call.bytes == 0) return;
  if (!serves_from_peers(direct.view, coll, call.bytes))
    HCOMM_PLUGIN_THROW(HCOMM_ERR_UNSUPPORTED, "%s: %llu bytes per rank are left to the message algorithms (one_shot "
                       "carries blocks that fit its signals in them, and reads the peers' buffers from %llu bytes, "
                       "where ranks may copy from each other's; no rooted collective on more ranks than cores)",
                       call.algorithm,
                       static_cast<unsigned long long>(call.bytes),
                       static_cast<unsigned long long>(
                           std::max(peer_collectives_from(direct.view, coll), kPeerBuffersFrom)));
  switch (coll) {
    case HCOMM_COLL_REDUCE: build_reduce(direct, out); break;
    case HCOMM_COLL_BROADCAST: build_from_root(direct, out, false); break;
    case HCOMM_COLL_SCATTER: build_from_root(direct, out, true); break;
    case HCOMM_COLL_GATHER: build_gather(direct, out); break;
    default: build_alltoall(direct, out); break;
  }
}

}  // namespace hcomm::algo
