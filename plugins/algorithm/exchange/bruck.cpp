// Bruck's algorithms: ceil(log2 n) rounds for any n, the fewest messages for
// latency-bound allgather and alltoall. Blocks travel in scratch in the
// order relative to the rank (common/bruck.hpp) and are rotated into RECV at
// the end.
#include "common/bruck.hpp"

#include <algorithm>
#include <vector>

#include "common/call.hpp"
#include "exchange.hpp"
#include "wait_all.hpp"

namespace hcomm::algo {

namespace {

// Scratch holds n blocks, index i being the block of rank + i: the own block
// is copied to index 0, round k receives at index 2^k, and a rotation places
// index i at block rank + i of RECV. Round k + 1's send waits for round k's
// send and receive, so it follows every earlier step.
void build_allgather(const Call& call, ScheduleWriter& out) {
  if (call.bytes == 0) return;
  const int n = call.nranks, me = call.rank;
  if (n == 1) return copy_input_to_output(call, out);
  const uint64_t block = call.bytes;
  const Bruck bruck(n, me);
  out.need_scratch(block * n);
  // Round 0's send waits for the own block's copy, as later sends wait for
  // the previous round's send.
  int32_t sent = out.add({.kind = HCOMM_STEP_COPY,
                          .src = at(HCOMM_BUF_SEND, 0),
                          .dst = at(HCOMM_BUF_SCRATCH, 0),
                          .bytes = block,
                          .nchunks = 1});
  int32_t received = -1;
  for (int round = 0; round < bruck.rounds(); ++round) {
    const uint64_t bytes = bruck.allgather_blocks(round) * block;
    const uint32_t nchunks = out.chunks(bytes, call.args.dtype_size);
    const uint32_t match = static_cast<uint32_t>(round);
    hcomm_step_t send = {.kind = HCOMM_STEP_SEND,
                         .peer = bruck.allgather_to(round),
                         .match = match,
                         .src = at(HCOMM_BUF_SCRATCH, 0),
                         .bytes = bytes,
                         .nchunks = nchunks};
    wait_all(send, {sent, received});
    sent = out.add(send);
    received = out.add({.kind = HCOMM_STEP_RECV,
                        .peer = bruck.allgather_from(round),
                        .match = match,
                        .dst = at(HCOMM_BUF_SCRATCH, Bruck::distance(round) * block),
                        .bytes = bytes,
                        .nchunks = nchunks});
  }
  const uint64_t head = static_cast<uint64_t>(n - me) * block;  // indices 0.. that land at block rank..n-1
  hcomm_step_t tail_part = {.kind = HCOMM_STEP_COPY,
                            .src = at(HCOMM_BUF_SCRATCH, 0),
                            .dst = at(HCOMM_BUF_RECV, static_cast<uint64_t>(me) * block),
                            .bytes = head,
                            .nchunks = 1};
  wait_all(tail_part, {sent, received});
  out.add(tail_part);
  if (me == 0) return;
  hcomm_step_t wrapped = {.kind = HCOMM_STEP_COPY,
                          .src = at(HCOMM_BUF_SCRATCH, head),
                          .dst = at(HCOMM_BUF_RECV, 0),
                          .bytes = static_cast<uint64_t>(me) * block,
                          .nchunks = 1};
  wait_all(wrapped, {sent, received});
  out.add(wrapped);
}

// The blocks round k moves: those whose index has bit k set.
uint64_t moved_blocks(const Bruck& bruck, int round) {
  uint64_t blocks = 0;
  for (const BlockRun& run : bruck.alltoall_runs(round)) blocks += static_cast<uint64_t>(run.count);
  return blocks;
}

uint64_t most_moved_blocks(const Bruck& bruck) {
  uint64_t most = 0;
  for (int round = 0; round < bruck.rounds(); ++round) most = std::max(most, moved_blocks(bruck, round));
  return most;
}

// Scratch: n blocks in relative order, then a packing area for the blocks a
// round sends and one for those it receives.
struct AlltoallScratch {
  uint64_t packed_out, packed_in, end;
};

AlltoallScratch alltoall_scratch(const Bruck& bruck, int nranks, uint64_t block) {
  const uint64_t packed = most_moved_blocks(bruck) * block, relative = block * nranks;
  return {.packed_out = relative, .packed_in = relative + packed, .end = relative + 2 * packed};
}

// Index i of scratch starts as SEND block rank + i (a rotation). Round k
// packs the indices with bit k set, sends them to rank + 2^k, receives the
// same indices from rank - 2^k and unpacks them in place. Index i then holds
// the block from rank - i, copied to RECV block rank - i. Copies run as one
// chain, each after the one before; the first pack of a round also waits
// for the previous send, the receive for the previous round's unpacking.
void build_alltoall(const Call& call, ScheduleWriter& out) {
  if (call.bytes == 0) return;
  const int n = call.nranks, me = call.rank;
  if (n == 1) return copy_input_to_output(call, out);
  const uint64_t block = call.bytes;
  const Bruck bruck(n, me);
  const AlltoallScratch scratch = alltoall_scratch(bruck, n, block);
  out.need_scratch(scratch.end);
  int32_t copied = -1;  // the last copy of the chain
  const auto copy = [&](hcomm_bufref_t src, hcomm_bufref_t dst, uint64_t bytes, int32_t also) {
    hcomm_step_t step = {.kind = HCOMM_STEP_COPY, .src = src, .dst = dst, .bytes = bytes, .nchunks = 1};
    wait_all(step, {copied, also});
    copied = out.add(step);
  };
  const auto relative = [&](int64_t index) { return at(HCOMM_BUF_SCRATCH, static_cast<uint64_t>(index) * block); };
  copy(at(HCOMM_BUF_SEND, static_cast<uint64_t>(me) * block), relative(0), static_cast<uint64_t>(n - me) * block, -1);
  if (me > 0) copy(at(HCOMM_BUF_SEND, 0), relative(n - me), static_cast<uint64_t>(me) * block, -1);
  int32_t sent = -1;
  for (int round = 0; round < bruck.rounds(); ++round) {
    const std::vector<BlockRun> runs = bruck.alltoall_runs(round);
    const int32_t unpacked = copied;
    uint64_t packed = 0;
    for (const BlockRun& run : runs) {
      const uint64_t bytes = static_cast<uint64_t>(run.count) * block;
      copy(relative(run.first), at(HCOMM_BUF_SCRATCH, scratch.packed_out + packed), bytes, sent);
      packed += bytes;
    }
    const uint32_t nchunks = out.chunks(packed, call.args.dtype_size);
    const uint32_t match = static_cast<uint32_t>(round);
    hcomm_step_t send = {.kind = HCOMM_STEP_SEND,
                         .peer = bruck.alltoall_to(round),
                         .match = match,
                         .src = at(HCOMM_BUF_SCRATCH, scratch.packed_out),
                         .bytes = packed,
                         .nchunks = nchunks};
    wait_all(send, {copied});
    sent = out.add(send);
    hcomm_step_t recv = {.kind = HCOMM_STEP_RECV,
                         .peer = bruck.alltoall_from(round),
                         .match = match,
                         .dst = at(HCOMM_BUF_SCRATCH, scratch.packed_in),
                         .bytes = packed,
                         .nchunks = nchunks};
    wait_all(recv, {unpacked});
    const int32_t received = out.add(recv);
    packed = 0;
    for (const BlockRun& run : runs) {
      const uint64_t bytes = static_cast<uint64_t>(run.count) * block;
      copy(at(HCOMM_BUF_SCRATCH, scratch.packed_in + packed), relative(run.first), bytes, received);
      packed += bytes;
    }
  }
  for (int i = 0; i < n; ++i)
    copy(relative(i), at(HCOMM_BUF_RECV, static_cast<uint64_t>(wrap(int64_t{me} - i, n)) * block), block, -1);
}

// ceil(log2 n) messages carrying n-1 blocks, and the own copy plus the
// rotation of all n blocks into RECV.
double allgather_cost(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm) {
  const double block = static_cast<double>(args->count) * static_cast<double>(args->dtype_size);
  const hcomm_link_model_t& link = comm->link;
  const int n = comm->nranks;
  if (n <= 1) return args->in_place ? 0.0 : block * link.gamma_us_per_byte;
  return ceil_log2(n) * link.alpha_us + (n - 1) * block * link.beta_us_per_byte +
         (n + 1) * block * link.gamma_us_per_byte;
}

// ceil(log2 n) messages carrying about n/2 blocks each, every moved block
// packed and unpacked, and all n rotated in and out.
double alltoall_cost(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm) {
  const double block = static_cast<double>(args->count) * static_cast<double>(args->dtype_size);
  const hcomm_link_model_t& link = comm->link;
  const int n = comm->nranks;
  if (n <= 1) return args->in_place ? 0.0 : block * link.gamma_us_per_byte;
  const Bruck bruck(n, 0);
  double moved = 0;
  for (int round = 0; round < bruck.rounds(); ++round) moved += static_cast<double>(moved_blocks(bruck, round));
  return bruck.rounds() * link.alpha_us + moved * block * link.beta_us_per_byte +
         (2 * moved + 2 * n) * block * link.gamma_us_per_byte;
}

hcomm_result_t allgather_build(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm,
                               hcomm_schedule_builder_t* builder) {
  return run_builder("bruck allgather", HCOMM_COLL_ALLGATHER, args, comm, builder, build_allgather);
}

hcomm_result_t alltoall_build(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm,
                              hcomm_schedule_builder_t* builder) {
  return run_builder("bruck alltoall", HCOMM_COLL_ALLTOALL, args, comm, builder, build_alltoall);
}

}  // namespace

constinit const hcomm_algorithm_desc_t kBruckAllgather =
    any_size_algorithm("bruck", HCOMM_COLL_ALLGATHER, allgather_cost, allgather_build);
constinit const hcomm_algorithm_desc_t kBruckAlltoall =
    any_size_algorithm("bruck", HCOMM_COLL_ALLTOALL, alltoall_cost, alltoall_build);

}  // namespace hcomm::algo
