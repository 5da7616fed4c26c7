#include "direct.hpp"

#include <algorithm>

#include "common/patterns.hpp"
#include "common/services.hpp"
#include "hcomm/plugin/layout.hpp"
#include "wait_all.hpp"

namespace hcomm::algo {

void check_alltoallv_layout(const Call& call) {
  const hcomm_coll_args_t& a = call.args;
  if (a.coll != HCOMM_COLL_ALLTOALLV) return;
  const char* missing = !a.recv_counts   ? "recv_counts"
                        : !a.recv_displs ? "recv_displs"
                        : a.in_place     ? nullptr
                        : !a.send_counts ? "send_counts"
                        : !a.send_displs ? "send_displs"
                                         : nullptr;
  if (missing) HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT, "%s: args->%s is NULL", call.algorithm, missing);
}

// Transfers of empty blocks are left out on both ends alike (the counts of
// a pair agree). When paced by rounds, a round waits for the last round
// that had transfers.
void build_direct_alltoall(const Call& call, ScheduleWriter& out, Pacing pacing) {
  check_alltoallv_layout(call);
  const int n = call.nranks, me = call.rank;
  const size_t es = call.args.dtype_size;
  const plugin::BlockLayout to = plugin::BlockLayout::send(call.args, n),
                            from = plugin::BlockLayout::recv(call.args, n);
  hcomm_buffer_t outgoing = HCOMM_BUF_SEND;
  int32_t staged = -1;
  if (const uint64_t bytes = call.args.in_place && n > 1 ? plugin::Blocks::recv(call.args).extent(n) : 0) {
    out.need_scratch(bytes);
    staged = out.add({.kind = HCOMM_STEP_COPY,
                      .src = at(HCOMM_BUF_RECV, 0),
                      .dst = at(HCOMM_BUF_SCRATCH, 0),
                      .bytes = bytes,
                      .nchunks = 1});
    outgoing = HCOMM_BUF_SCRATCH;
  } else if (!call.args.in_place && from.bytes(me) > 0) {
    out.add({.kind = HCOMM_STEP_COPY,
             .src = at(HCOMM_BUF_SEND, to.offset(me)),
             .dst = at(HCOMM_BUF_RECV, from.offset(me)),
             .bytes = from.bytes(me),
             .nchunks = 1});
  }
  int32_t round_send = -1, round_recv = -1;  // the last paced round's transfers
  for (int k = 1; k < n; ++k) {
    const int peer_to = wrap(int64_t{me} + k, n), peer_from = wrap(int64_t{me} - k, n);
    int32_t sent = -1, received = -1;
    if (const uint64_t bytes = to.bytes(peer_to)) {
      hcomm_step_t send = {.kind = HCOMM_STEP_SEND,
                           .peer = peer_to,
                           .src = at(outgoing, to.offset(peer_to)),
                           .bytes = bytes,
                           .nchunks = out.chunks(bytes, es)};
      wait_all(send, {staged, round_send, round_recv});
      sent = out.add(send);
    }
    if (const uint64_t bytes = from.bytes(peer_from)) {
      hcomm_step_t recv = {.kind = HCOMM_STEP_RECV,
                           .peer = peer_from,
                           .dst = at(HCOMM_BUF_RECV, from.offset(peer_from)),
                           .bytes = bytes,
                           .nchunks = out.chunks(bytes, es)};
      wait_all(recv, {staged, round_send, round_recv});
      received = out.add(recv);
    }
    if (pacing == Pacing::kRounds && (sent >= 0 || received >= 0)) {
      round_send = sent;
      round_recv = received;
    }
  }
}

double direct_alltoall_cost(const hcomm_coll_args_t& args, const hcomm_comm_view_t& comm, double latency) {
  const int n = comm.nranks;
  const double es = static_cast<double>(args.dtype_size);
  double out = 0, in = 0, own = 0;
  if (args.coll != HCOMM_COLL_ALLTOALLV) {
    own = static_cast<double>(args.count) * es;
    out = in = own * (n - 1);
  } else if (args.recv_counts && (args.in_place || args.send_counts)) {
    const size_t* sent = args.in_place ? args.recv_counts : args.send_counts;
    for (int r = 0; r < n; ++r) {
      if (r == comm.rank) {
        own = static_cast<double>(args.recv_counts[r]) * es;
        continue;
      }
      out += static_cast<double>(sent[r]) * es;
      in += static_cast<double>(args.recv_counts[r]) * es;
    }
  }
  const double copied = args.in_place ? (n > 1 ? out + own : 0.0) : own;
  return latency + std::max(out, in) * comm.link.beta_us_per_byte + copied * comm.link.gamma_us_per_byte;
}

}  // namespace hcomm::algo
