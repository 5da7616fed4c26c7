// A harness for the recursive and exchange algorithm plugins: loads a plugin
// library as the core does, builds every rank's schedule, checks the rules
// the executor relies on, and runs all ranks' schedules together on real data
// in a data-flow simulator that executes ready chunks in random order, with
// eager sends (a send completes at once) or rendezvous sends (a send runs
// only once its receive is posted), comparing every element of every rank's
// output with a serial reference.
#pragma once

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "core/algorithm/layout.hpp"
#include "hcomm/plugin/algorithm.h"

namespace hcomm::sim {

// ---------------------------------------------------------------------------
// Plugins.

inline std::string& plugin_error_text() {
  static std::string text;
  return text;
}

inline const hcomm_plugin_services_t kServices = {
    .size = sizeof(hcomm_plugin_services_t),
    .log = [](hcomm_log_level_t, const char*, const char*) {},
    .log_enabled = [](hcomm_log_level_t, const char*) { return 0; },
    .get_setting = [](const char*) { return ""; },
    .set_error = [](const char* message) { plugin_error_text() = message; },
    .abi_minor = HCOMM_PLUGIN_ABI_MINOR,
};

// The algorithm `name` serving `coll` in libhcomm_algorithm_<plugin>.so of
// the first folder of HCOMM_PLUGIN_PATH, else of the build tree, or nullptr
// with the reason in *why.
inline const hcomm_algorithm_desc_t* find_algorithm(const std::string& plugin, const std::string& name,
                                                    hcomm_coll_t coll, std::string* why) {
  struct Loaded {
    const hcomm_algorithm_v1_t* iface = nullptr;
    std::string error;
  };
  static std::map<std::string, Loaded> loaded;
  auto it = loaded.find(plugin);
  if (it == loaded.end()) {
    const char* setting = std::getenv("HCOMM_PLUGIN_PATH");
    const std::string folders = setting && *setting ? setting : HCOMM_PLUGIN_BUILD_DIR;
    const std::string path = folders.substr(0, folders.find(':')) + "/libhcomm_algorithm_" + plugin + ".so";
    Loaded l;
    if (void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      auto entry = reinterpret_cast<hcomm_plugin_v1_fn>(dlsym(handle, HCOMM_PLUGIN_SYMBOL));
      const hcomm_plugin_header_t* header = entry ? entry() : nullptr;
      if (header && header->kind == HCOMM_PLUGIN_ALGORITHM && header->iface &&
          static_cast<const hcomm_algorithm_v1_t*>(header->iface)->init(&kServices) == HCOMM_SUCCESS)
        l.iface = static_cast<const hcomm_algorithm_v1_t*>(header->iface);
      else
        l.error = path + " is not an algorithm plugin, or its init failed";
    } else {
      l.error = std::string("dlopen: ") + dlerror();
    }
    it = loaded.emplace(plugin, l).first;
  }
  if (!it->second.iface) {
    *why = it->second.error;
    return nullptr;
  }
  for (size_t i = 0; i < it->second.iface->num_algorithms; ++i) {
    const hcomm_algorithm_desc_t& a = it->second.iface->algorithms[i];
    if (a.name == name && (a.colls & (1u << coll))) return &a;
  }
  *why = "plugin " + plugin + " has no algorithm " + name + " for collective " + std::to_string(coll);
  return nullptr;
}

// ---------------------------------------------------------------------------
// Building.

using ChunkRule = uint32_t (*)(uint64_t bytes, size_t elem_size);

struct Chunking {
  const char* name;
  ChunkRule rule;
};

inline const Chunking kChunkings[] = {
    {"whole", [](uint64_t, size_t) { return 1u; }},
    {"24B",
     [](uint64_t bytes, size_t elem) {
       const uint64_t per_chunk = std::max<uint64_t>(1, 24 / elem);
       return static_cast<uint32_t>((bytes / elem + per_chunk - 1) / per_chunk);
     }},
    {"element", [](uint64_t bytes, size_t elem) { return static_cast<uint32_t>(bytes / elem); }},
    {"fixed5", [](uint64_t, size_t) { return 5u; }},
};

struct RankSchedule {
  std::vector<hcomm_step_t> steps;
  uint64_t scratch = 0;
};

class TestBuilder {
 public:
  TestBuilder(RankSchedule& out, ChunkRule rule) : out_(out), rule_(rule) {
    c_.ctx = this;
    c_.add = [](hcomm_schedule_builder_t* b, const hcomm_step_t* step) {
      auto* self = static_cast<TestBuilder*>(b->ctx);
      self->out_.steps.push_back(*step);
      return static_cast<int32_t>(self->out_.steps.size() - 1);
    };
    c_.need_scratch = [](hcomm_schedule_builder_t* b, uint64_t bytes) {
      auto* self = static_cast<TestBuilder*>(b->ctx);
      self->out_.scratch = std::max(self->out_.scratch, bytes);
    };
    c_.chunks_for = [](hcomm_schedule_builder_t* b, uint64_t bytes, size_t elem) {
      return static_cast<TestBuilder*>(b->ctx)->rule_(bytes, elem);
    };
  }
  hcomm_schedule_builder_t* c() { return &c_; }

 private:
  RankSchedule& out_;
  ChunkRule rule_;
  hcomm_schedule_builder_t c_{};
};

inline hcomm_comm_view_t comm_view(int nranks, int rank) {
  return {.size = sizeof(hcomm_comm_view_t),
          .rank = rank,
          .nranks = nranks,
          .link = {.alpha_us = 5.0, .beta_us_per_byte = 1e-4, .gamma_us_per_byte = 2e-5}};
}

// ---------------------------------------------------------------------------
// One call on every rank: its arguments and where SEND and RECV lie in the
// rank's memory (one arena when in place, as the layouts in algorithm.h say).

struct Call {
  hcomm_coll_t coll;
  int nranks;
  uint64_t count = 0;
  hcomm_dtype_t dtype = HCOMM_INT64;
  hcomm_op_t op = HCOMM_SUM;
  int root = 0;
  std::vector<bool> in_place;  // per rank
  // v-collectives, per rank (elements).
  std::vector<std::vector<size_t>> send_counts, send_displs, recv_counts, recv_displs;

  size_t dtype_size() const { return dtype == HCOMM_FLOAT32 ? 4 : 8; }
  bool v() const {
    return coll == HCOMM_COLL_ALLGATHERV || coll == HCOMM_COLL_REDUCE_SCATTER_V || coll == HCOMM_COLL_ALLTOALLV;
  }
  bool rooted() const { return coll == HCOMM_COLL_GATHER || coll == HCOMM_COLL_SCATTER; }
  // In place applies at the root only for the rooted collectives.
  bool in_place_at(int rank) const { return in_place[rank] && (!rooted() || rank == root); }

  hcomm_coll_args_t args(int rank) const {
    hcomm_coll_args_t a = {.size = sizeof(hcomm_coll_args_t),
                           .coll = coll,
                           .count = v() ? 0 : count,
                           .dtype = dtype,
                           .dtype_size = dtype_size(),
                           .op = op,
                           .root = root,
                           .in_place = in_place_at(rank) ? 1 : 0,
                           .mem_kind = HCOMM_MEM_HOST};
    if (!send_counts.empty()) {
      a.send_counts = send_counts[rank].data();
      a.send_displs = send_displs[rank].data();
    }
    if (!recv_counts.empty()) {
      a.recv_counts = recv_counts[rank].data();
      if (!recv_displs.empty()) a.recv_displs = recv_displs[rank].data();
    }
    return a;
  }
  uint64_t send_bytes(int rank) const { return algorithm::send_bytes(args(rank), nranks, rank); }
  uint64_t recv_bytes(int rank) const { return algorithm::recv_bytes(args(rank), nranks, rank); }
  // Elements before rank's block in a packed layout of recv_counts.
  uint64_t packed_offset(int rank) const {
    uint64_t at = 0;
    for (int r = 0; r < rank; ++r) at += recv_counts[rank][r];
    return at;
  }
  // In place: the element offsets of SEND and RECV in the one arena.
  std::pair<uint64_t, uint64_t> in_place_offsets(int rank) const {
    switch (coll) {
      case HCOMM_COLL_ALLGATHER:
        return {rank * count, 0};
      case HCOMM_COLL_ALLGATHERV:
        return {recv_displs[rank][rank], 0};
      case HCOMM_COLL_REDUCE_SCATTER:
        return {0, rank * count};
      case HCOMM_COLL_REDUCE_SCATTER_V:
        return {0, packed_offset(rank)};
      case HCOMM_COLL_GATHER:
        return {root * count, 0};
      case HCOMM_COLL_SCATTER:
        return {0, root * count};
      default:
        return {0, 0};
    }
  }
};

struct RankMemory {
  std::vector<uint8_t> input, output, scratch;  // input is unused when in place
  bool in_place = false;
  uint64_t send_at = 0, recv_at = 0;  // bytes into the arena

  uint8_t* resolve(const hcomm_bufref_t& ref) {
    switch (ref.buffer) {
      case HCOMM_BUF_SEND:
        return (in_place ? output.data() + send_at : input.data()) + ref.offset;
      case HCOMM_BUF_RECV:
        return output.data() + recv_at + ref.offset;
      default:
        return scratch.data() + ref.offset;
    }
  }
};

inline std::vector<RankSchedule> build_all(const hcomm_algorithm_desc_t& algo, const Call& call, ChunkRule rule) {
  std::vector<RankSchedule> out(call.nranks);
  for (int rank = 0; rank < call.nranks; ++rank) {
    TestBuilder builder(out[rank], rule);
    const hcomm_comm_view_t comm = comm_view(call.nranks, rank);
    const hcomm_coll_args_t args = call.args(rank);
    plugin_error_text().clear();
    EXPECT_EQ(algo.build(&args, &comm, builder.c()), HCOMM_SUCCESS)
        << algo.name << " rank " << rank << ": " << plugin_error_text();
  }
  return out;
}

// ---------------------------------------------------------------------------
// Structural rules over all ranks' schedules; one line per broken rule.

inline bool is_transfer(uint32_t kind) { return kind <= HCOMM_STEP_RECV_REDUCE; }

inline std::vector<std::string> check_schedules(const std::vector<RankSchedule>& ranks, const Call& call) {
  std::vector<std::string> problems;
  const int n = call.nranks;
  struct Ends {
    std::vector<const hcomm_step_t*> sends, recvs;
  };
  std::map<std::tuple<int, int, uint32_t>, Ends> transfers;  // from, to, match
  for (int r = 0; r < n; ++r) {
    const std::vector<hcomm_step_t>& steps = ranks[r].steps;
    for (size_t i = 0; i < steps.size(); ++i) {
      const hcomm_step_t& s = steps[i];
      auto fail = [&](const std::string& what) {
        problems.push_back("rank " + std::to_string(r) + " step " + std::to_string(i) + ": " + what);
      };
      auto check_ref = [&](const hcomm_bufref_t& ref, bool written) {
        const uint64_t limit = ref.buffer == HCOMM_BUF_SEND   ? call.send_bytes(r)
                               : ref.buffer == HCOMM_BUF_RECV ? call.recv_bytes(r)
                                                              : ranks[r].scratch;
        if (ref.buffer > HCOMM_BUF_SCRATCH) return fail("unknown buffer " + std::to_string(ref.buffer));
        if (ref.offset > limit || s.bytes > limit - ref.offset)
          fail("[" + std::to_string(ref.offset) + ", +" + std::to_string(s.bytes) + ") outside buffer " +
               std::to_string(ref.buffer) + " of " + std::to_string(limit) + " bytes");
        if (written && ref.buffer == HCOMM_BUF_SEND) fail("writes SEND");
      };
      if (s.kind > HCOMM_STEP_COPY) {
        fail("unknown kind " + std::to_string(s.kind));
        continue;
      }
      if (s.nchunks == 0 || s.nchunks > (1u << 16)) fail("chunk count " + std::to_string(s.nchunks));
      if (s.bytes % call.dtype_size()) fail("bytes not a whole number of elements");
      if (s.flags & ~uint32_t{HCOMM_STEP_FINAL}) fail("unknown flags");
      if ((s.flags & HCOMM_STEP_FINAL) && s.kind != HCOMM_STEP_RECV_REDUCE && s.kind != HCOMM_STEP_REDUCE)
        fail("FINAL on a step that does not reduce");
      if (s.ndeps > HCOMM_STEP_MAX_DEPS) {
        fail("too many dependencies");
        continue;
      }
      if (s.whole_deps >> s.ndeps) fail("whole_deps names missing dependencies");
      for (uint32_t d = 0; d < s.ndeps; ++d) {
        if (s.deps[d] < 0 || static_cast<size_t>(s.deps[d]) >= i) {
          fail("dependency " + std::to_string(s.deps[d]) + " does not point backwards");
        } else if (!(s.whole_deps & (1u << d)) && steps[s.deps[d]].nchunks != s.nchunks) {
          fail("chunk-wise dependency on a step with another chunk count");
        }
      }
      if (is_transfer(s.kind)) {
        if (s.peer < 0 || s.peer >= n || s.peer == r) fail("bad peer " + std::to_string(s.peer));
        if (s.match >= (1u << 24)) fail("match beyond 24 bits");
        Ends& ends = transfers[s.kind == HCOMM_STEP_SEND ? std::make_tuple(r, s.peer, s.match)
                                                         : std::make_tuple(s.peer, r, s.match)];
        (s.kind == HCOMM_STEP_SEND ? ends.sends : ends.recvs).push_back(&s);
      }
      if (s.kind != HCOMM_STEP_RECV) check_ref(s.src, false);
      if (s.kind == HCOMM_STEP_REDUCE) check_ref(s.src2, false);
      if (s.kind != HCOMM_STEP_SEND) check_ref(s.dst, true);
    }
  }
  for (const auto& [key, ends] : transfers) {
    const auto [from, to, match] = key;
    const std::string pair = std::to_string(from) + " -> " + std::to_string(to) + " match " + std::to_string(match);
    if (ends.sends.size() != 1 || ends.recvs.size() != 1) {
      problems.push_back(pair + ": " + std::to_string(ends.sends.size()) + " sends, " +
                         std::to_string(ends.recvs.size()) + " receives");
    } else if (ends.sends[0]->bytes != ends.recvs[0]->bytes || ends.sends[0]->nchunks != ends.recvs[0]->nchunks) {
      problems.push_back(pair + ": send of " + std::to_string(ends.sends[0]->bytes) + " bytes in " +
                         std::to_string(ends.sends[0]->nchunks) + " chunks, receive of " +
                         std::to_string(ends.recvs[0]->bytes) + " in " + std::to_string(ends.recvs[0]->nchunks));
    }
  }
  return problems;
}

inline std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (size_t i = 0; i < lines.size() && i < 20; ++i) out += "\n  " + lines[i];
  if (lines.size() > 20) out += "\n  ... " + std::to_string(lines.size() - 20) + " more";
  return out;
}

// ---------------------------------------------------------------------------
// Typed data and the reductions the executor applies.

template <class T>
T load(const uint8_t* base, uint64_t i) {
  T v;
  std::memcpy(&v, base + i * sizeof(T), sizeof(T));
  return v;
}
template <class T>
void store(uint8_t* base, uint64_t i, T v) {
  std::memcpy(base + i * sizeof(T), &v, sizeof(T));
}

// Integers wrap; AVG sums until its final division.
template <class T>
T combine(hcomm_op_t op, T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    if (op == HCOMM_PROD) return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
    if (op == HCOMM_SUM || op == HCOMM_AVG) return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    if (op == HCOMM_PROD) return a * b;
    if (op == HCOMM_SUM || op == HCOMM_AVG) return a + b;
  }
  return op == HCOMM_MIN ? std::min(a, b) : std::max(a, b);
}

template <class T>
void reduce_as(hcomm_op_t op, uint8_t* dst, const uint8_t* a, const uint8_t* b, uint64_t count, int divisor) {
  for (uint64_t i = 0; i < count; ++i) {
    T v = combine(op, load<T>(a, i), load<T>(b, i));
    if (divisor) v /= static_cast<T>(divisor);
    store(dst, i, v);
  }
}

inline void reduce(hcomm_dtype_t dtype, hcomm_op_t op, uint8_t* dst, const uint8_t* a, const uint8_t* b, uint64_t count,
                   int divisor) {
  if (dtype == HCOMM_FLOAT32)
    reduce_as<float>(op, dst, a, b, count, divisor);
  else
    reduce_as<int64_t>(op, dst, a, b, count, divisor);
}

// ---------------------------------------------------------------------------
// The simulator. A chunk of a step waits for its dependencies and for chunk
// c - 4 of its own step (the executor's in-flight window). A receive chunk is
// posted once those are done and runs once its data has arrived; a send
// chunk reads its source when it runs, which with rendezvous sends is only
// once the receive is posted.

class Simulator {
 public:
  Simulator(const std::vector<RankSchedule>& ranks, const Call& call, std::vector<RankMemory>& memory, uint32_t seed,
            bool rendezvous)
      : ranks_(ranks), call_(call), memory_(memory), rng_(seed), rendezvous_(rendezvous) {
    index();
    link();
    for (size_t c = 0; c < chunks_.size(); ++c)
      if (chunks_[c].pending == 0) unblocked(c);
  }

  void run() {
    while (!ready_.empty()) {
      std::uniform_int_distribution<size_t> pick(0, ready_.size() - 1);
      std::swap(ready_[pick(rng_)], ready_.back());
      const size_t id = ready_.back();
      ready_.pop_back();
      execute(id);
    }
  }

  std::string unfinished() const {
    std::string out;
    for (size_t id = 0; id < chunks_.size() && out.size() < 400; ++id)
      if (!chunks_[id].done)
        out += " rank " + std::to_string(chunks_[id].rank) + " step " + std::to_string(chunks_[id].step) + " chunk " +
               std::to_string(chunks_[id].index) + ";";
    return out;
  }

 private:
  struct Chunk {
    int rank;
    size_t step;
    uint32_t index;
    int pending = 0;              // dependencies not done
    size_t other = SIZE_MAX;      // the matching chunk of the other end (transfers)
    bool posted = false;          // receives: dependencies done
    bool arrived = false;         // receives: the send ran
    bool sender_waiting = false;  // sends: dependencies done, waiting for the receive to be posted
    bool done = false;
    std::vector<size_t> waiters;
    std::vector<uint8_t> payload;
  };

  const hcomm_step_t& step_of(const Chunk& c) const { return ranks_[c.rank].steps[c.step]; }
  size_t chunk_id(int rank, size_t step, uint32_t chunk) const { return first_[rank][step] + chunk; }

  void index() {
    first_.resize(ranks_.size());
    completed_.resize(ranks_.size());
    whole_waiters_.resize(ranks_.size());
    for (size_t r = 0; r < ranks_.size(); ++r) {
      completed_[r].assign(ranks_[r].steps.size(), 0);
      whole_waiters_[r].resize(ranks_[r].steps.size());
      for (size_t s = 0; s < ranks_[r].steps.size(); ++s) {
        first_[r].push_back(chunks_.size());
        for (uint32_t c = 0; c < ranks_[r].steps[s].nchunks; ++c)
          chunks_.push_back({.rank = static_cast<int>(r), .step = s, .index = c});
      }
    }
  }

  void wait(size_t waiter, size_t on) {
    chunks_[on].waiters.push_back(waiter);
    ++chunks_[waiter].pending;
  }

  // A whole dependency counts once per chunk of the waiter, paid when the
  // step it names completes.
  void link() {
    std::map<std::tuple<int, int, uint32_t>, std::pair<int, size_t>> receives;  // from, to, match -> rank, step
    for (size_t r = 0; r < ranks_.size(); ++r)
      for (size_t s = 0; s < ranks_[r].steps.size(); ++s) {
        const hcomm_step_t& st = ranks_[r].steps[s];
        if (st.kind == HCOMM_STEP_RECV || st.kind == HCOMM_STEP_RECV_REDUCE)
          receives[{st.peer, static_cast<int>(r), st.match}] = {static_cast<int>(r), s};
      }
    for (size_t r = 0; r < ranks_.size(); ++r)
      for (size_t s = 0; s < ranks_[r].steps.size(); ++s) {
        const hcomm_step_t& st = ranks_[r].steps[s];
        const int rank = static_cast<int>(r);
        for (uint32_t d = 0; d < st.ndeps; ++d)
          if (st.whole_deps & (1u << d)) whole_waiters_[r][static_cast<size_t>(st.deps[d])].push_back(s);
        for (uint32_t c = 0; c < st.nchunks; ++c) {
          const size_t me = chunk_id(rank, s, c);
          if (c >= 4) wait(me, chunk_id(rank, s, c - 4));
          for (uint32_t d = 0; d < st.ndeps; ++d) {
            if (st.whole_deps & (1u << d))
              ++chunks_[me].pending;
            else
              wait(me, chunk_id(rank, static_cast<size_t>(st.deps[d]), c));
          }
          if (st.kind == HCOMM_STEP_SEND) {
            const auto [peer, peer_step] = receives.at({rank, st.peer, st.match});
            chunks_[me].other = chunk_id(peer, peer_step, c);
            chunks_[chunk_id(peer, peer_step, c)].other = me;
          }
        }
      }
  }

  void satisfy(size_t id) {
    if (--chunks_[id].pending == 0) unblocked(id);
  }

  // A chunk's dependencies are done.
  void unblocked(size_t id) {
    Chunk& c = chunks_[id];
    const uint32_t kind = step_of(c).kind;
    if (kind == HCOMM_STEP_SEND) {
      if (!rendezvous_ || chunks_[c.other].posted)
        ready_.push_back(id);
      else
        c.sender_waiting = true;
    } else if (kind == HCOMM_STEP_RECV || kind == HCOMM_STEP_RECV_REDUCE) {
      c.posted = true;
      if (c.arrived) ready_.push_back(id);
      Chunk& sender = chunks_[c.other];
      if (sender.sender_waiting) {
        sender.sender_waiting = false;
        ready_.push_back(c.other);
      }
    } else {
      ready_.push_back(id);
    }
  }

  void finish(size_t id) {
    Chunk& c = chunks_[id];
    c.done = true;
    for (size_t waiter : c.waiters) satisfy(waiter);
    const hcomm_step_t& s = step_of(c);
    if (++completed_[c.rank][c.step] < s.nchunks) return;
    for (size_t waiter : whole_waiters_[c.rank][c.step])
      for (uint32_t k = 0; k < ranks_[c.rank].steps[waiter].nchunks; ++k) satisfy(chunk_id(c.rank, waiter, k));
  }

  void execute(size_t id) {
    Chunk& c = chunks_[id];
    const hcomm_step_t& s = step_of(c);
    RankMemory& mem = memory_[c.rank];
    const uint64_t es = call_.dtype_size(), elems = s.bytes / es;
    const uint64_t first = elems * c.index / s.nchunks, last = elems * (c.index + 1) / s.nchunks;
    const uint64_t offset = first * es, bytes = (last - first) * es;
    const int divisor = (s.flags & HCOMM_STEP_FINAL) && call_.op == HCOMM_AVG ? call_.nranks : 0;
    switch (s.kind) {
      case HCOMM_STEP_SEND: {
        const uint8_t* src = mem.resolve(s.src) + offset;
        Chunk& receiver = chunks_[c.other];
        receiver.payload.assign(src, src + bytes);
        receiver.arrived = true;
        if (receiver.posted) ready_.push_back(c.other);
        break;
      }
      case HCOMM_STEP_RECV:
        if (bytes) std::memcpy(mem.resolve(s.dst) + offset, c.payload.data(), bytes);
        break;
      case HCOMM_STEP_RECV_REDUCE:
        reduce(call_.dtype, call_.op, mem.resolve(s.dst) + offset, mem.resolve(s.src) + offset, c.payload.data(),
               bytes / es, divisor);
        break;
      case HCOMM_STEP_REDUCE:
        reduce(call_.dtype, call_.op, mem.resolve(s.dst) + offset, mem.resolve(s.src) + offset,
               mem.resolve(s.src2) + offset, bytes / es, divisor);
        break;
      case HCOMM_STEP_COPY:
        if (bytes) std::memmove(mem.resolve(s.dst) + offset, mem.resolve(s.src) + offset, bytes);
        break;
    }
    finish(id);
  }

  const std::vector<RankSchedule>& ranks_;
  const Call& call_;
  std::vector<RankMemory>& memory_;
  std::mt19937 rng_;
  bool rendezvous_;
  std::vector<Chunk> chunks_;
  std::vector<std::vector<size_t>> first_;                       // [rank][step] -> id of its chunk 0
  std::vector<std::vector<uint32_t>> completed_;                 // [rank][step] -> chunks done
  std::vector<std::vector<std::vector<size_t>>> whole_waiters_;  // [rank][step] -> steps waiting for all of it
  std::vector<size_t> ready_;
};

// ---------------------------------------------------------------------------
// Inputs and the serial reference.

// Element i of rank's input. Integers of both signs, distinct per rank;
// floats are small integers, so that sums are exact in any order.
template <class T>
T input_value(int rank, uint64_t i) {
  const int64_t v = static_cast<int64_t>((i * 7919 + static_cast<uint64_t>(rank) * 104729) % 20011) - 10005;
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(v);
  } else {
    return static_cast<T>(v % 101);
  }
}

// What element e of rank's RECV must hold, or false where the call leaves
// it as it was (gaps between blocks).
template <class T>
bool expected_value(const Call& c, int rank, uint64_t e, T* out) {
  const int n = c.nranks;
  auto reduced = [&](uint64_t i) {
    T v = input_value<T>(0, i);
    for (int r = 1; r < n; ++r) v = combine(c.op, v, input_value<T>(r, i));
    return c.op == HCOMM_AVG ? static_cast<T>(v / static_cast<T>(n)) : v;
  };
  switch (c.coll) {
    case HCOMM_COLL_ALLREDUCE:
      *out = reduced(e);
      return true;
    case HCOMM_COLL_ALLGATHER:
    case HCOMM_COLL_GATHER:
      *out = input_value<T>(static_cast<int>(e / c.count), e % c.count);
      return true;
    case HCOMM_COLL_REDUCE_SCATTER:
      *out = reduced(rank * c.count + e);
      return true;
    case HCOMM_COLL_REDUCE_SCATTER_V:
      *out = reduced(c.packed_offset(rank) + e);
      return true;
    case HCOMM_COLL_SCATTER:
      *out = input_value<T>(c.root, rank * c.count + e);
      return true;
    case HCOMM_COLL_ALLTOALL: {
      const int from = static_cast<int>(e / c.count);
      *out = input_value<T>(from, rank * c.count + e % c.count);
      return true;
    }
    case HCOMM_COLL_ALLTOALLV:
      for (int from = 0; from < n; ++from) {
        const uint64_t at = c.recv_displs[rank][from];
        if (e < at || e >= at + c.recv_counts[rank][from]) continue;
        const uint64_t sent_at = c.in_place_at(from) ? c.recv_displs[from][rank] : c.send_displs[from][rank];
        *out = input_value<T>(from, sent_at + (e - at));
        return true;
      }
      return false;
    default:
      return false;
  }
}

// Builds, checks and simulates `c` with `algo` in every chunking, with eager
// and rendezvous sends; every element of every rank's RECV is compared.
template <class T>
void run_case(const hcomm_algorithm_desc_t& algo, const Call& c, uint32_t seed) {
  const uint64_t es = sizeof(T);
  for (const Chunking& chunking : kChunkings) {
    SCOPED_TRACE(::testing::Message() << "chunks " << chunking.name);
    const std::vector<RankSchedule> ranks = build_all(algo, c, chunking.rule);
    if (::testing::Test::HasFailure()) return;
    const std::vector<std::string> problems = check_schedules(ranks, c);
    ASSERT_TRUE(problems.empty()) << joined(problems);
    for (bool rendezvous : {false, true}) {
      SCOPED_TRACE(rendezvous ? "rendezvous sends" : "eager sends");
      std::vector<RankMemory> memory(c.nranks);
      for (int r = 0; r < c.nranks; ++r) {
        RankMemory& m = memory[r];
        m.in_place = c.in_place_at(r);
        m.scratch.assign(ranks[r].scratch, 0xA5);
        const uint64_t send = c.send_bytes(r), recv = c.recv_bytes(r);
        if (m.in_place) {
          const auto [send_at, recv_at] = c.in_place_offsets(r);
          m.send_at = send_at * es;
          m.recv_at = recv_at * es;
          m.output.assign(std::max(m.send_at + send, m.recv_at + recv), 0x5A);
        } else {
          m.output.assign(recv, 0x5A);
          m.input.resize(send);
        }
        uint8_t* input = m.in_place ? m.output.data() + m.send_at : m.input.data();
        for (uint64_t i = 0; i < send / es; ++i) store(input, i, input_value<T>(r, i));
      }
      const std::vector<RankMemory> before = memory;
      Simulator sim(ranks, c, memory, seed, rendezvous);
      sim.run();
      ASSERT_EQ(sim.unfinished(), "") << "deadlock";
      for (int r = 0; r < c.nranks; ++r) {
        int wrong = 0;
        const uint8_t* got = memory[r].output.data() + memory[r].recv_at;
        const uint8_t* was = before[r].output.data() + before[r].recv_at;
        for (uint64_t e = 0; e < c.recv_bytes(r) / es; ++e) {
          T want;
          if (!expected_value<T>(c, r, e, &want)) want = load<T>(was, e);
          const T value = load<T>(got, e);
          if (std::memcmp(&value, &want, sizeof(T)) != 0 && wrong++ < 3)
            ADD_FAILURE() << "rank " << r << " element " << e << ": expected " << want << ", got " << value;
        }
        EXPECT_EQ(wrong, 0) << "rank " << r << " of " << c.nranks;
        if (!memory[r].in_place) {
          EXPECT_TRUE(memory[r].input == before[r].input) << "rank " << r << " changed SEND";
        }
      }
      if (::testing::Test::HasFailure()) return;
    }
  }
}

inline void run_typed(const hcomm_algorithm_desc_t& algo, const Call& c, uint32_t seed) {
  if (c.dtype == HCOMM_FLOAT32)
    run_case<float>(algo, c, seed);
  else
    run_case<int64_t>(algo, c, seed);
}

// In-place patterns across ranks: none, all, and every other rank.
inline std::vector<std::vector<bool>> in_place_patterns(int nranks) {
  std::vector<bool> alternate(nranks);
  for (int r = 0; r < nranks; ++r) alternate[r] = r % 2 == 1;
  return {std::vector<bool>(nranks, false), std::vector<bool>(nranks, true), alternate};
}

inline std::string pattern_name(const std::vector<bool>& in_place) {
  std::string s;
  for (bool b : in_place) s += b ? 'i' : '-';
  return s;
}

}  // namespace hcomm::sim
