// Where a rank's buffers lie, by the layouts of algorithm.h, written here
// from the header's text rather than from the core's code: the per-rank
// blocks of SEND and RECV, and the memory (arenas) every buffer reference
// resolves into, so that in-place buffers alias as the caller's do.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "hcomm/plugin/algorithm.h"

namespace hcomm::algotest {

// The memory of one rank: the caller's send and receive buffers, the core's
// scratch and this call's window.
enum Arena { kUserSend = 0, kUserRecv = 1, kScratch = 2, kWindow = 3, kArenas = 4 };

// Bytes [base, base + bytes) of an arena.
struct Region {
  int arena;
  uint64_t base;
  uint64_t bytes;
};

// Block `index` of a per-rank layout: elements [offset, offset + count) of
// its buffer.
struct Block {
  int index;
  uint64_t offset;
  uint64_t count;
};

struct RankLayout {
  std::array<Region, 4> buffers;             // by hcomm_buffer_t
  std::array<uint64_t, 2> user_arena_bytes;  // kUserSend, kUserRecv
  std::vector<Block> send_blocks;            // the input
  std::vector<Block> recv_blocks;            // the output this rank defines
};

// `args` are this rank's; `scratch` and `window` the bytes of those buffers.
// Where RECV holds no output (reduce and gather off the root, exscan on rank
// 0) its arena still has the size it has elsewhere, filled with a canary that
// must stay.
RankLayout rank_layout(const hcomm_coll_args_t& args, int nranks, int rank, uint64_t scratch, uint64_t window);

// The size that desc.min_bytes and max_bytes bound: count for allreduce,
// broadcast and reduce; all ranks' blocks for the other fixed-size
// collectives; the sum of recv_counts for the v-collectives.
uint64_t message_bytes(const hcomm_coll_args_t& args, int nranks);

// A rank's memory as the simulator runs it.
struct RankMemory {
  RankLayout layout;
  std::array<std::vector<uint8_t>, kArenas> arenas;

  uint8_t* at(const hcomm_bufref_t& ref) {
    const Region& g = layout.buffers[ref.buffer];
    return arenas[static_cast<size_t>(g.arena)].data() + g.base + ref.offset;
  }
};

}  // namespace hcomm::algotest
