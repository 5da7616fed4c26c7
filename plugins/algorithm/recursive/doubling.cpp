#include "doubling.hpp"

#include <numeric>

#include "common/recursive_halving.hpp"

namespace hcomm::algo {

Group Group::all(const Call& call) {
  Group group{std::vector<int>(static_cast<size_t>(call.nranks)), call.rank};
  std::iota(group.ranks.begin(), group.ranks.end(), 0);
  return group;
}

// A send reads a value that a reduction wrote; a receive into scratch waits
// for the reduction that still reads it; a reduction that may overwrite the
// value being sent (in acc, or the input of an in-place call) waits for
// that send.
Placed add_doubling_allreduce(const Call& call, const Group& group, DoublingMatches matches, Placed input,
                              hcomm_bufref_t acc, bool final, ScheduleWriter& out) {
  const FoldedHypercube cube(group.size(), group.me);
  const uint32_t nchunks = out.chunks(call.bytes, call.args.dtype_size);
  auto transfer = [&](hcomm_step_kind_t kind, int position, uint32_t match) {
    return hcomm_step_t{
        .kind = kind, .peer = group.rank_at(position), .match = match, .bytes = call.bytes, .nchunks = nchunks};
  };
  if (cube.folded_out()) {
    hcomm_step_t send = transfer(HCOMM_STEP_SEND, cube.fold_partner(), matches.fold);
    send.src = input.at;
    wait_for_step(send, input.step, true);
    out.add(send);
    // The result may land where the input is sent from: the partner returns
    // each chunk only after it received that chunk of the input.
    hcomm_step_t back = transfer(HCOMM_STEP_RECV, cube.fold_partner(), matches.unfold);
    back.dst = acc;
    return {out.add(back), acc};
  }
  Placed value = input;
  if (cube.folded_in()) {
    hcomm_step_t fold = transfer(HCOMM_STEP_RECV_REDUCE, cube.fold_partner(), matches.fold);
    fold.src = value.at;
    fold.dst = acc;
    wait_for_step(fold, value.step, true);
    value = {out.add(fold), acc};
  }
  const hcomm_bufref_t scratch = at(HCOMM_BUF_SCRATCH, 0);
  if (cube.rounds() > 0) out.need_scratch(call.bytes);
  int32_t combined = -1;  // the last reduction, which read scratch
  for (int round = 0; round < cube.rounds(); ++round) {
    const int64_t d = FoldedHypercube::doubling_distance(round);
    const uint32_t match = matches.first_round + static_cast<uint32_t>(round);
    hcomm_step_t send = transfer(HCOMM_STEP_SEND, cube.peer(d), match);
    send.src = value.at;
    wait_for_step(send, value.step, true);
    const int32_t sent = out.add(send);
    hcomm_step_t recv = transfer(HCOMM_STEP_RECV, cube.peer(d), match);
    recv.dst = scratch;
    wait_for_step(recv, combined, true);
    const int32_t received = out.add(recv);
    hcomm_step_t reduce = {.kind = HCOMM_STEP_REDUCE,
                           .flags = final && round + 1 == cube.rounds() ? uint32_t{HCOMM_STEP_FINAL} : 0u,
                           .src = cube.lower(d) ? value.at : scratch,
                           .src2 = cube.lower(d) ? scratch : value.at,
                           .dst = acc,
                           .bytes = call.bytes,
                           .nchunks = nchunks};
    wait_for_step(reduce, received, true);
    wait_for_step(reduce, value.step, true);
    if (value.at.buffer == acc.buffer || call.args.in_place) wait_for_step(reduce, sent, true);
    combined = out.add(reduce);
    value = {combined, acc};
  }
  if (cube.folded_in()) {
    hcomm_step_t back = transfer(HCOMM_STEP_SEND, cube.fold_partner(), matches.unfold);
    back.src = value.at;
    wait_for_step(back, value.step, true);
    out.add(back);
  }
  return value;
}

}  // namespace hcomm::algo
