#include "algorithm_reference.hpp"

#include <cstring>
#include <sstream>
#include <stdexcept>
#include <type_traits>

#include "algorithm_values.hpp"

namespace hcomm::algotest {

namespace {

constexpr uint8_t kRecvCanary = 0x5A;
constexpr uint8_t kSendCanary = 0x3C;  // gaps between send blocks
constexpr uint8_t kScratchFill = 0xA5;
constexpr uint8_t kWindowFill = 0xC3;  // a window holds what earlier calls left

template <class T>
T input_value(const hcomm_coll_args_t& a, int rank, uint64_t i) {
  const uint64_t r = static_cast<uint64_t>(rank);
  if constexpr (std::is_same_v<T, Record>) {
    const auto word = [](uint64_t v) {
      v = (v ^ (v >> 31)) * 0x7FB5D329728EA185ull;
      return static_cast<uint32_t>(v ^ (v >> 29));
    };
    return Record{word(r << 40 ^ i) | 1u, word(r << 40 ^ i ^ 0x9E3779B97F4A7C15ull), 1};
  } else {
    if (!coll_traits(a.coll)->reduces) return static_cast<T>(r * 65536 + i % 65536 + 1);  // exact in float32
    if (a.op == kRankOrderOp) return static_cast<T>(rank_range(rank, rank));
    if (a.op == HCOMM_PROD) {
      static const int kSmall[] = {1, -1, 2, 1, -2, 3};  // |product| <= 3^nranks
      return static_cast<T>(kSmall[(i * 7 + r * 3) % 6]);
    }
    if (sizeof(T) == 4) return static_cast<T>(static_cast<int>((i * 31 + r * 17) % 101) - 50);
    return static_cast<T>(static_cast<int64_t>((i * 7919 + r * 104729) % 20011) - 10005);
  }
}

// Which ranks' send block feeds rank r's receive block b: ranks first to
// last, reduced in rank order where they are more than one; and that
// block's index in the sources' layout.
struct Source {
  int first, last;
  int block;
};

Source source_of(const hcomm_coll_args_t& a, int n, int r, int b) {
  switch (a.coll) {
    case HCOMM_COLL_ALLREDUCE:
    case HCOMM_COLL_REDUCE:
      return {0, n - 1, 0};
    case HCOMM_COLL_BROADCAST:
      return {a.root, a.root, 0};
    case HCOMM_COLL_ALLGATHER:
    case HCOMM_COLL_ALLGATHERV:
    case HCOMM_COLL_GATHER:
      return {b, b, 0};
    case HCOMM_COLL_SCATTER:
      return {a.root, a.root, r};
    case HCOMM_COLL_REDUCE_SCATTER:
    case HCOMM_COLL_REDUCE_SCATTER_V:
      return {0, n - 1, r};
    case HCOMM_COLL_SCAN:
      return {0, r, 0};
    case HCOMM_COLL_EXSCAN:
      return {0, r - 1, 0};
    default:
      return {b, b, r};  // alltoall(v)
  }
}

const Block& block(const std::vector<Block>& blocks, int index) {
  for (const Block& b : blocks)
    if (b.index == index) return b;
  throw std::logic_error("no block " + std::to_string(index));
}

// The first byte of element i of a send or receive block of `m`.
template <class Memory>
auto* element(Memory& m, hcomm_buffer_t buffer, const Block& b, uint64_t i, size_t es) {
  const Region& g = m.layout.buffers[buffer];
  return m.arenas[static_cast<size_t>(g.arena)].data() + g.base + (b.offset + i) * es;
}

template <class T>
void fill_inputs(const CallArgs& args, std::vector<RankMemory>& memory) {
  for (int r = 0; r < args.nranks(); ++r) {
    RankMemory& m = memory[static_cast<size_t>(r)];
    for (const Block& b : m.layout.send_blocks)
      for (uint64_t i = 0; i < b.count; ++i)
        store(element(m, HCOMM_BUF_SEND, b, i, sizeof(T)), input_value<T>(args.at(r), r, b.offset + i));
  }
}

template <class T>
void write_outputs(const CallArgs& args, const std::vector<RankMemory>& initial, std::vector<RankMemory>& out) {
  const int n = args.nranks();
  for (int r = 0; r < n; ++r) {
    const hcomm_coll_args_t& a = args.at(r);
    RankMemory& m = out[static_cast<size_t>(r)];
    for (const Block& rb : m.layout.recv_blocks) {
      const Source src = source_of(a, n, r, rb.index);
      const int first = src.first, last = src.last;
      for (uint64_t i = 0; i < rb.count; ++i) {
        T v{};
        for (int q = first; q <= last; ++q) {
          const RankMemory& from = initial[static_cast<size_t>(q)];
          const Block& sb = block(from.layout.send_blocks, src.block);
          if (sb.count != rb.count)
            throw std::logic_error("rank " + std::to_string(q) + " sends " + std::to_string(sb.count) +
                                   " elements for a block of " + std::to_string(rb.count));
          const T x = load<T>(element(from, HCOMM_BUF_SEND, sb, i, sizeof(T)));
          v = q == first ? x : combine(a.op, v, x);
        }
        if constexpr (std::is_arithmetic_v<T>)
          if (coll_traits(a.coll)->reduces && a.op == HCOMM_AVG) v /= static_cast<T>(n);
        store(element(m, HCOMM_BUF_RECV, rb, i, sizeof(T)), v);
      }
    }
  }
}

template <class T>
std::string shown(const uint8_t* p, uint8_t canary) {
  bool is_canary = true;
  for (size_t i = 0; i < sizeof(T); ++i) is_canary = is_canary && p[i] == canary;
  if (is_canary) return "the untouched canary";
  std::ostringstream s;
  if constexpr (std::is_arithmetic_v<T>)
    s << +load<T>(p);
  else
    s << load<T>(p);
  return s.str();
}

// Where byte `offset` of arena `arena` lies for the caller: in which buffer,
// which element, which block.
std::string locate(const RankLayout& l, int arena, uint64_t offset, size_t es) {
  std::ostringstream s;
  for (hcomm_buffer_t buffer : {HCOMM_BUF_RECV, HCOMM_BUF_SEND}) {
    const Region& g = l.buffers[buffer];
    if (g.arena != arena || offset < g.base || offset >= g.base + g.bytes) continue;
    const uint64_t e = (offset - g.base) / es;
    s << (buffer == HCOMM_BUF_RECV ? "RECV" : "SEND") << " element " << e;
    for (const Block& b : buffer == HCOMM_BUF_RECV ? l.recv_blocks : l.send_blocks)
      if (e >= b.offset && e < b.offset + b.count) return s.str() + " (block " + std::to_string(b.index) + ")";
    return s.str() + " (between blocks)";
  }
  s << (arena == kUserSend ? "send" : "receive") << " buffer byte " << offset << " (no buffer of this rank's call)";
  return s.str();
}

template <class T>
void compare_arenas(const CallArgs& args, const std::vector<RankMemory>& expected,
                    const std::vector<RankMemory>& actual, std::vector<std::string>& out) {
  for (int r = 0; r < args.nranks(); ++r) {
    const RankMemory &want = expected[static_cast<size_t>(r)], &got = actual[static_cast<size_t>(r)];
    int mismatches = 0;
    for (int arena : {kUserSend, kUserRecv}) {
      const std::vector<uint8_t>& w = want.arenas[static_cast<size_t>(arena)];
      const std::vector<uint8_t>& g = got.arenas[static_cast<size_t>(arena)];
      const uint8_t canary = arena == kUserSend ? kSendCanary : kRecvCanary;
      for (uint64_t at = 0; at + sizeof(T) <= w.size(); at += sizeof(T)) {
        if (std::memcmp(&w[at], &g[at], sizeof(T)) == 0) continue;
        if (mismatches++ < 3)
          out.push_back("rank " + std::to_string(r) + " " + locate(want.layout, arena, at, sizeof(T)) + ": expected " +
                        shown<T>(&w[at], canary) + ", got " + shown<T>(&g[at], canary));
      }
    }
    if (mismatches > 3)
      out.push_back("rank " + std::to_string(r) + ": " + std::to_string(mismatches) + " elements differ in all");
  }
}

// Calls fn with a value of the call's element type.
template <class Fn>
void typed(const CallArgs& args, Fn fn) {
  if (args.at(0).dtype == kRecordDtype) return fn(Record{});
  switch (args.at(0).dtype) {
    case HCOMM_FLOAT32:
      return fn(float{});
    case HCOMM_INT64:
      return fn(int64_t{});
    default:
      return fn(uint8_t{});  // a barrier's: no elements
  }
}

}  // namespace

std::vector<RankMemory> initial_memory(const CallArgs& args, const std::vector<RankSchedule>& ranks,
                                       uint64_t window_bytes) {
  std::vector<RankMemory> memory(static_cast<size_t>(args.nranks()));
  for (int r = 0; r < args.nranks(); ++r) {
    RankMemory& m = memory[static_cast<size_t>(r)];
    const uint64_t scratch = ranks[static_cast<size_t>(r)].scratch;
    m.layout = rank_layout(args.at(r), args.nranks(), r, scratch, window_bytes);
    m.arenas[kUserSend].assign(m.layout.user_arena_bytes[kUserSend], kSendCanary);
    m.arenas[kUserRecv].assign(m.layout.user_arena_bytes[kUserRecv], kRecvCanary);
    m.arenas[kScratch].assign(scratch, kScratchFill);
    m.arenas[kWindow].assign(window_bytes, kWindowFill);
  }
  typed(args, [&](auto t) { fill_inputs<decltype(t)>(args, memory); });
  return memory;
}

std::vector<RankMemory> expected_memory(const CallArgs& args, const std::vector<RankMemory>& initial) {
  std::vector<RankMemory> expected = initial;
  typed(args, [&](auto t) { write_outputs<decltype(t)>(args, initial, expected); });
  return expected;
}

std::vector<std::string> compare_memory(const CallArgs& args, const std::vector<RankMemory>& expected,
                                        const std::vector<RankMemory>& actual) {
  std::vector<std::string> out;
  typed(args, [&](auto t) { compare_arenas<decltype(t)>(args, expected, actual, out); });
  return out;
}

}  // namespace hcomm::algotest
