#include "algorithm_layout.hpp"

#include <algorithm>

#include "algorithm_case.hpp"

namespace hcomm::algotest {

namespace {

std::vector<Block> equal_blocks(int nranks, uint64_t count) {
  std::vector<Block> out;
  for (int b = 0; b < nranks; ++b) out.push_back({b, static_cast<uint64_t>(b) * count, count});
  return out;
}

std::vector<Block> array_blocks(int nranks, const size_t* counts, const size_t* displs) {
  std::vector<Block> out;
  uint64_t packed = 0;
  for (int b = 0; b < nranks; ++b) {
    out.push_back({b, displs ? displs[b] : packed, counts[b]});
    packed += counts[b];
  }
  return out;
}

std::vector<Block> send_blocks(const hcomm_coll_args_t& a, int nranks, int rank) {
  const Block whole = {0, 0, a.count};
  const bool root = rank == a.root;
  switch (a.coll) {
    case HCOMM_COLL_ALLREDUCE:
    case HCOMM_COLL_REDUCE:
    case HCOMM_COLL_ALLGATHER:
    case HCOMM_COLL_GATHER:
    case HCOMM_COLL_SCAN:
    case HCOMM_COLL_EXSCAN:
      return {whole};
    case HCOMM_COLL_BROADCAST:
      return root ? std::vector<Block>{whole} : std::vector<Block>{};
    case HCOMM_COLL_SCATTER:
      return root ? equal_blocks(nranks, a.count) : std::vector<Block>{};
    case HCOMM_COLL_REDUCE_SCATTER:
    case HCOMM_COLL_ALLTOALL:
      return equal_blocks(nranks, a.count);
    case HCOMM_COLL_ALLGATHERV:
      return {{0, 0, a.recv_counts[rank]}};
    case HCOMM_COLL_REDUCE_SCATTER_V:
      return array_blocks(nranks, a.recv_counts, nullptr);
    case HCOMM_COLL_ALLTOALLV:  // in place sends with the receive layout
      return a.in_place ? array_blocks(nranks, a.recv_counts, a.recv_displs)
                        : array_blocks(nranks, a.send_counts, a.send_displs);
    default:
      return {};
  }
}

// `root_view`: the blocks as the root has them (reduce and gather off the
// root define no output, but get a canary arena of the root's size; so does
// exscan's rank 0, whose buffer it must not touch).
std::vector<Block> recv_blocks(const hcomm_coll_args_t& a, int nranks, int rank, bool root_view) {
  const Block whole = {0, 0, a.count};
  const bool root = root_view || rank == a.root;
  switch (a.coll) {
    case HCOMM_COLL_ALLREDUCE:
    case HCOMM_COLL_BROADCAST:
    case HCOMM_COLL_SCATTER:
    case HCOMM_COLL_REDUCE_SCATTER:
    case HCOMM_COLL_SCAN:
      return {whole};
    case HCOMM_COLL_EXSCAN:
      return rank > 0 || root_view ? std::vector<Block>{whole} : std::vector<Block>{};
    case HCOMM_COLL_REDUCE:
      return root ? std::vector<Block>{whole} : std::vector<Block>{};
    case HCOMM_COLL_ALLGATHER:
    case HCOMM_COLL_ALLTOALL:
      return equal_blocks(nranks, a.count);
    case HCOMM_COLL_GATHER:
      return root ? equal_blocks(nranks, a.count) : std::vector<Block>{};
    case HCOMM_COLL_ALLGATHERV:
    case HCOMM_COLL_ALLTOALLV:
      return array_blocks(nranks, a.recv_counts, a.recv_displs);
    case HCOMM_COLL_REDUCE_SCATTER_V:
      return {{0, 0, a.recv_counts[rank]}};
    default:
      return {};
  }
}

// The end of the furthest non-empty block, in elements.
uint64_t extent(const std::vector<Block>& blocks) {
  uint64_t end = 0;
  for (const Block& b : blocks)
    if (b.count) end = std::max(end, b.offset + b.count);
  return end;
}

uint64_t block_offset(const std::vector<Block>& blocks, int index) {
  for (const Block& b : blocks)
    if (b.index == index) return b.offset;
  return 0;
}

}  // namespace

RankLayout rank_layout(const hcomm_coll_args_t& args, int nranks, int rank, uint64_t scratch, uint64_t window) {
  const uint64_t es = args.dtype_size;
  RankLayout l;
  l.send_blocks = send_blocks(args, nranks, rank);
  l.recv_blocks = recv_blocks(args, nranks, rank, false);
  const uint64_t send_bytes = extent(l.send_blocks) * es;
  const uint64_t recv_bytes = extent(l.recv_blocks) * es;
  const uint64_t recv_arena = extent(recv_blocks(args, nranks, rank, true)) * es;
  Region send = {kUserSend, 0, send_bytes}, recv = {kUserRecv, 0, recv_bytes};
  l.user_arena_bytes = {send_bytes, recv_arena};
  if (args.in_place) {
    switch (coll_traits(args.coll)->in_place) {
      case InPlace::kSendIsRecv:
        send = {kUserRecv, 0, send_bytes};
        l.user_arena_bytes[kUserSend] = 0;
        break;
      case InPlace::kSendInRecvBlock:
        send = {kUserRecv, block_offset(l.recv_blocks, rank) * es, send_bytes};
        l.user_arena_bytes[kUserSend] = 0;
        break;
      case InPlace::kRecvInSendBlock:
        recv = {kUserSend, block_offset(l.send_blocks, rank) * es, recv_bytes};
        l.user_arena_bytes[kUserRecv] = 0;
        break;
      case InPlace::kNone:
        break;
    }
  }
  l.buffers[HCOMM_BUF_SEND] = send;
  l.buffers[HCOMM_BUF_RECV] = recv;
  l.buffers[HCOMM_BUF_SCRATCH] = {kScratch, 0, scratch};
  l.buffers[HCOMM_BUF_WINDOW] = {kWindow, 0, window};
  return l;
}

uint64_t message_bytes(const hcomm_coll_args_t& args, int nranks) {
  const uint64_t bytes = args.count * args.dtype_size;
  switch (args.coll) {
    case HCOMM_COLL_ALLREDUCE:
    case HCOMM_COLL_BROADCAST:
    case HCOMM_COLL_REDUCE:
      return bytes;
    case HCOMM_COLL_BARRIER:
      return 0;
    default:
      break;
  }
  if (!args.recv_counts) return bytes * static_cast<uint64_t>(nranks);
  uint64_t total = 0;
  for (int r = 0; r < nranks; ++r) total += args.recv_counts[r];
  return total * args.dtype_size;
}

}  // namespace hcomm::algotest
