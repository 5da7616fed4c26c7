#include "hypercube.hpp"

#include <algorithm>
#include <vector>

#include "common/blocks.hpp"

namespace hcomm::algo {

Bounds element_bounds(const FoldedHypercube& cube, uint64_t count, size_t elem_size) {
  const BlockPartition parts(count, cube.size(), elem_size);
  Bounds bounds;
  for (int v = 0; v < cube.size(); ++v) bounds.push_back(parts.offset(v));
  bounds.push_back(count * elem_size);
  return bounds;
}

Bounds rank_bounds(const FoldedHypercube& cube, const plugin::BlockLayout& blocks, int nranks) {
  Bounds bounds;
  for (int v = 0; v < cube.size(); ++v) bounds.push_back(blocks.offset(cube.first_rank(v)));
  bounds.push_back(blocks.offset(nranks - 1) + blocks.bytes(nranks - 1));
  return bounds;
}

namespace {

// Every chunk of `step` waits for all of each step named; -1 names none.
void wait_all(hcomm_step_t& step, std::initializer_list<int32_t> deps) {
  for (int32_t dep : deps)
    if (dep >= 0) wait_whole(step, dep);
}

hcomm_step_t transfer(hcomm_step_kind_t kind, int peer, uint32_t match, hcomm_bufref_t ref, uint64_t bytes,
                      uint32_t nchunks) {
  hcomm_step_t step = {.kind = kind, .peer = peer, .match = match, .bytes = bytes, .nchunks = nchunks};
  (kind == HCOMM_STEP_SEND ? step.src : step.dst) = ref;
  return step;
}

}  // namespace

void fold_out(const Call& call, ScheduleWriter& out, const FoldedHypercube& cube, uint64_t sent, uint64_t returned) {
  const size_t es = call.args.dtype_size;
  out.add(
      transfer(HCOMM_STEP_SEND, cube.fold_partner(), kFoldMatch, at(HCOMM_BUF_SEND, 0), sent, out.chunks(sent, es)));
  out.add(transfer(HCOMM_STEP_RECV, cube.fold_partner(), kUnfoldMatch, at(HCOMM_BUF_RECV, 0), returned,
                   out.chunks(returned, es)));
}

int32_t fold_in_reduce(const Call& call, ScheduleWriter& out, const FoldedHypercube& cube, uint64_t bytes,
                       hcomm_bufref_t dst) {
  hcomm_step_t fold = transfer(HCOMM_STEP_RECV_REDUCE, cube.fold_partner(), kFoldMatch, dst, bytes,
                               out.chunks(bytes, call.args.dtype_size));
  fold.src = at(HCOMM_BUF_SEND, 0);
  return out.add(fold);
}

void unfold(const Call& call, ScheduleWriter& out, const FoldedHypercube& cube, hcomm_bufref_t src, uint64_t bytes,
            std::initializer_list<int32_t> after) {
  hcomm_step_t back =
      transfer(HCOMM_STEP_SEND, cube.fold_partner(), kUnfoldMatch, src, bytes, out.chunks(bytes, call.args.dtype_size));
  wait_all(back, after);
  out.add(back);
}

// The send of round k reads a part that the reduction of round k - 1 wrote;
// the reduction of round k reads the part of round k - 1's that it keeps.
// Parts given away are not written again while halving, so no step waits
// for a send.
int32_t halve(const Call& call, ScheduleWriter& out, const FoldedHypercube& cube, const Bounds& bounds,
              hcomm_buffer_t input, int32_t produced, hcomm_buffer_t work, hcomm_bufref_t last_dst) {
  const size_t es = call.args.dtype_size;
  for (int round = 0; round < cube.rounds(); ++round) {
    const int64_t d = cube.halving_distance(round);
    const int64_t segment = cube.group(2 * d);
    const int64_t keep = cube.lower(d) ? segment : segment + d;
    const int64_t give = keep ^ d;
    const hcomm_buffer_t from = round == 0 ? input : work;
    const uint64_t give_bytes = bounds[give + d] - bounds[give];
    hcomm_step_t send = transfer(HCOMM_STEP_SEND, cube.peer(d), static_cast<uint32_t>(round), at(from, bounds[give]),
                                 give_bytes, out.chunks(give_bytes, es));
    wait_all(send, {produced});
    out.add(send);
    const bool last = round + 1 == cube.rounds();
    const uint64_t keep_bytes = bounds[keep + d] - bounds[keep];
    hcomm_step_t reduce = transfer(HCOMM_STEP_RECV_REDUCE, cube.peer(d), static_cast<uint32_t>(round),
                                   last ? last_dst : at(work, bounds[keep]), keep_bytes, out.chunks(keep_bytes, es));
    reduce.src = at(from, bounds[keep]);
    if (last) reduce.flags = HCOMM_STEP_FINAL;
    wait_all(reduce, {produced});
    produced = out.add(reduce);
  }
  return produced;
}

Doubled double_up(const Call& call, ScheduleWriter& out, const FoldedHypercube& cube, const Bounds& bounds,
                  uint32_t first_match, int32_t own_part, std::initializer_list<int32_t> ready, bool from_send) {
  const size_t es = call.args.dtype_size;
  Doubled x;
  for (int round = 0; round < cube.rounds(); ++round) {
    const int64_t span = FoldedHypercube::doubling_distance(round);
    const int64_t mine = cube.group(span), theirs = mine ^ span;
    const uint32_t match = first_match + static_cast<uint32_t>(round);
    const uint64_t send_bytes = bounds[mine + span] - bounds[mine];
    const bool own_block = round == 0 && from_send;
    hcomm_step_t send = transfer(HCOMM_STEP_SEND, cube.peer(span), match,
                                 own_block ? at(HCOMM_BUF_SEND, 0) : at(HCOMM_BUF_RECV, bounds[mine]), send_bytes,
                                 out.chunks(send_bytes, es));
    if (round == 0) {
      if (own_part >= 0) wait_chunkwise(send, own_part);
      if (!from_send) wait_all(send, ready);
    } else {
      wait_all(send, {x.last_send, x.last_recv});
      if (round == 1 && from_send) wait_all(send, ready);
    }
    x.last_send = out.add(send);
    const uint64_t recv_bytes = bounds[theirs + span] - bounds[theirs];
    x.last_recv = out.add(transfer(HCOMM_STEP_RECV, cube.peer(span), match, at(HCOMM_BUF_RECV, bounds[theirs]),
                                   recv_bytes, out.chunks(recv_bytes, es)));
  }
  return x;
}

namespace {

// pairs: (a, b) rank pairs of one round, each sending both ways.
template <class Pairs>
hcomm_link_model_t link_of(const hcomm_comm_view_t& comm, Pairs pairs) {
  if (comm.nnodes <= 1 || !comm.node_of) return comm.link;
  std::vector<int> across(comm.nnodes, 0);
  pairs([&](int a, int b) {
    if (comm.node_of[a] != comm.node_of[b]) ++across[comm.node_of[a]], ++across[comm.node_of[b]];
  });
  const int sharing = *std::max_element(across.begin(), across.end());
  if (sharing == 0) return comm.intra;
  hcomm_link_model_t l = comm.inter;
  l.beta_us_per_byte *= sharing;
  return l;
}

}  // namespace

hcomm_link_model_t round_link(const hcomm_comm_view_t& comm, const FoldedHypercube& cube, int64_t distance) {
  return link_of(comm, [&](auto visit) {
    for (int64_t v = 0; v < cube.size(); ++v)
      if (v < (v ^ distance)) visit(cube.rank_of(v), cube.rank_of(v ^ distance));
  });
}

hcomm_link_model_t fold_link(const hcomm_comm_view_t& comm, const FoldedHypercube& cube) {
  return link_of(comm, [&](auto visit) {
    for (int r = 0; r < 2 * (comm.nranks - cube.size()); r += 2) visit(r, r + 1);
  });
}

}  // namespace hcomm::algo
