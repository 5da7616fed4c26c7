// The algorithm plugins, loaded from their shared libraries as the core
// loads them. For each communicator size every rank's schedule is built,
// checked against the rules the executor relies on (matched transfers,
// backward dependencies, buffer bounds), then run in process on real data by
// a data-flow simulator that executes ready chunks in random order; every
// element of every rank's output is compared with a serial reference.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "hcomm/plugin/algorithm.h"

namespace {

// ---------------------------------------------------------------------------
// The algorithm plugins (libhcomm_algorithm_*.so), found in the folders of
// HCOMM_PLUGIN_PATH, else in the build tree's plugin folder, each loaded as
// the core loads it.

std::string& plugin_error_text() {
  static std::string text;
  return text;
}

const hcomm_plugin_services_t kServices = {
    .size = sizeof(hcomm_plugin_services_t),
    .log = [](hcomm_log_level_t, const char*, const char*) {},
    .log_enabled = [](hcomm_log_level_t, const char*) { return 0; },
    .get_setting = [](const char*) { return ""; },
    .set_error = [](const char* message) { plugin_error_text() = message; },
};

std::vector<std::string> plugin_folders() {
  std::vector<std::string> folders;
  if (const char* path = std::getenv("HCOMM_PLUGIN_PATH")) {
    std::stringstream list(path);
    std::string folder;
    while (std::getline(list, folder, ':'))
      if (!folder.empty()) folders.push_back(folder);
  }
#ifdef HCOMM_PLUGIN_BUILD_DIR
  folders.push_back(HCOMM_PLUGIN_BUILD_DIR);
#endif
  return folders;
}

class AlgorithmPlugins {
 public:
  static const AlgorithmPlugins& get() {
    static const AlgorithmPlugins plugins;
    return plugins;
  }

  const std::vector<const hcomm_plugin_header_t*>& headers() const { return headers_; }
  const std::string& load_error() const { return load_error_; }
  static const hcomm_algorithm_v1_t* iface(const hcomm_plugin_header_t* h) {
    return static_cast<const hcomm_algorithm_v1_t*>(h->iface);
  }
  const hcomm_algorithm_desc_t* find(const char* name, hcomm_coll_t coll) const {
    for (const hcomm_plugin_header_t* h : headers_)
      for (size_t i = 0; i < iface(h)->num_algorithms; ++i) {
        const hcomm_algorithm_desc_t& a = iface(h)->algorithms[i];
        if (std::string(a.name) == name && (a.colls & (1u << coll))) return &a;
      }
    return nullptr;
  }

 private:
  AlgorithmPlugins() {
    std::map<std::string, std::string> files;  // file name -> first path that holds it
    for (const std::string& folder : plugin_folders()) {
      std::error_code ec;
      for (const auto& entry : std::filesystem::directory_iterator(folder, ec)) {
        const std::string name = entry.path().filename().string();
        if (name.rfind("libhcomm_algorithm_", 0) == 0 && entry.path().extension() == ".so")
          files.emplace(name, entry.path().string());
      }
    }
    if (files.empty()) load_error_ = "no libhcomm_algorithm_*.so found: set HCOMM_PLUGIN_PATH";
    for (const auto& [name, path] : files) load(path);
  }

  void load(const std::string& path) {
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      load_error_ += "dlopen " + path + ": " + dlerror() + "; ";
      return;
    }
    auto entry = reinterpret_cast<hcomm_plugin_v1_fn>(dlsym(handle, HCOMM_PLUGIN_SYMBOL));
    const hcomm_plugin_header_t* header = entry ? entry() : nullptr;
    if (!header || header->kind != HCOMM_PLUGIN_ALGORITHM || !header->iface) {
      load_error_ += path + " is not an algorithm plugin; ";
      return;
    }
    if (iface(header)->init(&kServices) != HCOMM_SUCCESS) {
      load_error_ += path + ": init failed: " + plugin_error_text() + "; ";
      return;
    }
    headers_.push_back(header);
  }

  std::vector<const hcomm_plugin_header_t*> headers_;
  std::string load_error_;
};

// ---------------------------------------------------------------------------
// A builder as the core's: records steps and scratch; chunk counts by rule.

using ChunkRule = uint32_t (*)(uint64_t bytes, size_t elem_size);

struct Chunking {
  const char* name;
  ChunkRule rule;
};

const Chunking kChunkings[] = {
    {"whole", [](uint64_t, size_t) { return 1u; }},
    {"24B",
     [](uint64_t bytes, size_t elem) {
       uint64_t per_chunk = std::max<uint64_t>(1, 24 / elem);
       return static_cast<uint32_t>((bytes / elem + per_chunk - 1) / per_chunk);
     }},
    {"element", [](uint64_t bytes, size_t elem) { return static_cast<uint32_t>(bytes / elem); }},
    // More chunks than small blocks have elements.
    {"fixed5", [](uint64_t, size_t) { return 5u; }},
};

struct RankSchedule {
  std::vector<hcomm_step_t> steps;
  uint64_t scratch = 0;
};

class TestBuilder {
 public:
  TestBuilder(RankSchedule& out, ChunkRule rule, bool reject = false) : out_(out), rule_(rule), reject_(reject) {
    c_.ctx = this;
    c_.add = [](hcomm_schedule_builder_t* b, const hcomm_step_t* step) {
      auto* self = static_cast<TestBuilder*>(b->ctx);
      if (self->reject_) return int32_t{-1};
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
  bool reject_;
  hcomm_schedule_builder_t c_{};
};

hcomm_comm_view_t comm_view(int nranks, int rank) {
  return {.size = sizeof(hcomm_comm_view_t),
          .rank = rank,
          .nranks = nranks,
          .link = {.alpha_us = 5.0, .beta_us_per_byte = 1e-4, .gamma_us_per_byte = 2e-5}};
}

hcomm_coll_args_t coll_args(hcomm_coll_t coll, uint64_t count, hcomm_dtype_t dtype, hcomm_op_t op, int root,
                            bool in_place) {
  const size_t dtype_size = coll == HCOMM_COLL_BARRIER ? 0 : dtype == HCOMM_FLOAT32 ? 4 : 8;
  return {.size = sizeof(hcomm_coll_args_t),
          .coll = coll,
          .count = count,
          .dtype = dtype,
          .dtype_size = dtype_size,
          .op = op,
          .root = root,
          .in_place = in_place ? 1 : 0,
          .mem_kind = HCOMM_MEM_HOST};
}

void build_all(const hcomm_algorithm_desc_t& algo, const hcomm_coll_args_t& args, int nranks, ChunkRule rule,
               std::vector<RankSchedule>& out) {
  out.assign(nranks, RankSchedule{});
  for (int rank = 0; rank < nranks; ++rank) {
    TestBuilder builder(out[rank], rule);
    const hcomm_comm_view_t comm = comm_view(nranks, rank);
    plugin_error_text().clear();
    ASSERT_EQ(algo.build(&args, &comm, builder.c()), HCOMM_SUCCESS)
        << algo.name << " rank " << rank << ": " << plugin_error_text();
  }
}

// ---------------------------------------------------------------------------
// Structural rules, for all ranks' schedules together.

bool is_transfer(uint32_t kind) { return kind <= HCOMM_STEP_RECV_REDUCE; }

class ScheduleChecker {
 public:
  // send_bytes[r] and recv_bytes are the sizes of rank r's user buffers.
  ScheduleChecker(const std::vector<RankSchedule>& ranks, std::vector<uint64_t> send_bytes, uint64_t recv_bytes,
                  size_t dtype_size)
      : ranks_(ranks), send_bytes_(std::move(send_bytes)), recv_bytes_(recv_bytes), dtype_size_(dtype_size) {}

  // One line per broken rule; empty when the schedules are sound.
  std::vector<std::string> problems() {
    for (int r = 0; r < static_cast<int>(ranks_.size()); ++r)
      for (size_t i = 0; i < ranks_[r].steps.size(); ++i) check_step(r, i);
    check_matching();
    return problems_;
  }

 private:
  using Key = std::tuple<int, int, uint32_t>;  // from, to, match
  struct Ends {
    std::vector<const hcomm_step_t*> sends, recvs;
  };

  void fail(int rank, size_t step, const std::string& what) {
    problems_.push_back("rank " + std::to_string(rank) + " step " + std::to_string(step) + ": " + what);
  }

  void check_ref(int rank, size_t i, const hcomm_bufref_t& ref, uint64_t bytes, bool written) {
    const uint64_t limit = ref.buffer == HCOMM_BUF_SEND   ? send_bytes_[rank]
                           : ref.buffer == HCOMM_BUF_RECV ? recv_bytes_
                                                          : ranks_[rank].scratch;
    if (ref.buffer > HCOMM_BUF_SCRATCH) return fail(rank, i, "unknown buffer " + std::to_string(ref.buffer));
    if (ref.offset > limit || bytes > limit - ref.offset)
      fail(rank, i,
           "range [" + std::to_string(ref.offset) + ", +" + std::to_string(bytes) + ") outside buffer " +
               std::to_string(ref.buffer) + " of " + std::to_string(limit) + " bytes");
    if (written && ref.buffer == HCOMM_BUF_SEND) fail(rank, i, "writes the user's send buffer");
  }

  void check_step(int rank, size_t i) {
    const std::vector<hcomm_step_t>& steps = ranks_[rank].steps;
    const hcomm_step_t& s = steps[i];
    const int nranks = static_cast<int>(ranks_.size());
    if (s.kind > HCOMM_STEP_COPY) return fail(rank, i, "unknown kind " + std::to_string(s.kind));
    if (s.nchunks == 0) fail(rank, i, "no chunks");
    if (dtype_size_ && s.bytes % dtype_size_) fail(rank, i, "bytes not a whole number of elements");
    if (s.flags & ~uint32_t{HCOMM_STEP_FINAL}) fail(rank, i, "unknown flags");
    if ((s.flags & HCOMM_STEP_FINAL) && s.kind != HCOMM_STEP_RECV_REDUCE && s.kind != HCOMM_STEP_REDUCE)
      fail(rank, i, "FINAL on a step that does not reduce");
    if (s.ndeps > HCOMM_STEP_MAX_DEPS) return fail(rank, i, "too many dependencies");
    if (s.whole_deps >> s.ndeps) fail(rank, i, "whole_deps names missing dependencies");
    for (uint32_t d = 0; d < s.ndeps; ++d) {
      if (s.deps[d] < 0 || static_cast<size_t>(s.deps[d]) >= i) {
        fail(rank, i, "dependency " + std::to_string(s.deps[d]) + " does not point backwards");
        continue;
      }
      if (!(s.whole_deps & (1u << d)) && steps[s.deps[d]].nchunks != s.nchunks)
        fail(rank, i, "chunk-wise dependency on a step with another chunk count");
    }
    if (is_transfer(s.kind)) {
      if (s.peer < 0 || s.peer >= nranks || s.peer == rank) fail(rank, i, "bad peer " + std::to_string(s.peer));
      Ends& ends = transfers_[s.kind == HCOMM_STEP_SEND ? Key{rank, s.peer, s.match} : Key{s.peer, rank, s.match}];
      (s.kind == HCOMM_STEP_SEND ? ends.sends : ends.recvs).push_back(&s);
    }
    const bool reads_src = s.kind != HCOMM_STEP_RECV;
    const bool writes_dst = s.kind != HCOMM_STEP_SEND;
    if (reads_src) check_ref(rank, i, s.src, s.bytes, false);
    if (s.kind == HCOMM_STEP_REDUCE) check_ref(rank, i, s.src2, s.bytes, false);
    if (writes_dst) check_ref(rank, i, s.dst, s.bytes, true);
  }

  void check_matching() {
    for (const auto& [key, ends] : transfers_) {
      const auto [from, to, match] = key;
      const std::string pair =
          std::to_string(from) + " -> " + std::to_string(to) + " match " + std::to_string(match) + ": ";
      if (ends.sends.size() != 1 || ends.recvs.size() != 1) {
        problems_.push_back(pair + std::to_string(ends.sends.size()) + " sends, " + std::to_string(ends.recvs.size()) +
                            " receives");
        continue;
      }
      const hcomm_step_t& send = *ends.sends[0];
      const hcomm_step_t& recv = *ends.recvs[0];
      if (send.bytes != recv.bytes || send.nchunks != recv.nchunks)
        problems_.push_back(pair + "send of " + std::to_string(send.bytes) + " bytes in " +
                            std::to_string(send.nchunks) + " chunks, receive of " + std::to_string(recv.bytes) +
                            " bytes in " + std::to_string(recv.nchunks));
    }
  }

  const std::vector<RankSchedule>& ranks_;
  std::vector<uint64_t> send_bytes_;
  uint64_t recv_bytes_;
  size_t dtype_size_;
  std::map<Key, Ends> transfers_;
  std::vector<std::string> problems_;
};

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (size_t i = 0; i < lines.size() && i < 20; ++i) out += "\n  " + lines[i];
  if (lines.size() > 20) out += "\n  ... " + std::to_string(lines.size() - 20) + " more";
  return out;
}

// ---------------------------------------------------------------------------
// Typed data: inputs, the reduction the executor applies, and the reference.

template <class T>
T input_value(int rank, uint64_t i);
// Signed values of both signs, distinct per rank.
template <>
int64_t input_value<int64_t>(int rank, uint64_t i) {
  return static_cast<int64_t>((i * 7919 + static_cast<uint64_t>(rank) * 104729) % 20011) - 10005;
}
// Small integers, so that sums are exact in any order.
template <>
float input_value<float>(int rank, uint64_t i) {
  return static_cast<float>(static_cast<int>((i * 31 + static_cast<uint64_t>(rank) * 17) % 101) - 50);
}

template <class T>
T combine(hcomm_op_t op, T a, T b) {
  switch (op) {
    case HCOMM_PROD:
      return a * b;
    case HCOMM_MIN:
      return std::min(a, b);
    case HCOMM_MAX:
      return std::max(a, b);
    default:
      return a + b;  // SUM, and AVG until its final division
  }
}

template <class T>
T load(const uint8_t* base, size_t i) {
  T v;
  std::memcpy(&v, base + i * sizeof(T), sizeof(T));
  return v;
}
template <class T>
void store(uint8_t* base, size_t i, T v) {
  std::memcpy(base + i * sizeof(T), &v, sizeof(T));
}

// dst = a op b over `count` elements; dst may alias a or b.
template <class T>
void reduce_as(hcomm_op_t op, uint8_t* dst, const uint8_t* a, const uint8_t* b, size_t count, int avg_divisor) {
  for (size_t i = 0; i < count; ++i) {
    T v = combine(op, load<T>(a, i), load<T>(b, i));
    if (avg_divisor) v /= static_cast<T>(avg_divisor);
    store(dst, i, v);
  }
}

void reduce(hcomm_dtype_t dtype, hcomm_op_t op, uint8_t* dst, const uint8_t* a, const uint8_t* b, size_t count,
            int avg_divisor) {
  if (dtype == HCOMM_FLOAT32)
    reduce_as<float>(op, dst, a, b, count, avg_divisor);
  else
    reduce_as<int64_t>(op, dst, a, b, count, avg_divisor);
}

template <class T>
T reduced_value(hcomm_op_t op, int nranks, uint64_t i) {
  T v = input_value<T>(0, i);
  for (int r = 1; r < nranks; ++r) v = combine(op, v, input_value<T>(r, i));
  return op == HCOMM_AVG ? v / static_cast<T>(nranks) : v;
}

// ---------------------------------------------------------------------------
// The simulator: each rank's buffers, and chunks run in random order once
// their dependencies (and, for receives, the matching send chunk) are done.
// A send reads its source when it runs, as a transport would copy it.

struct RankMemory {
  std::vector<uint8_t> send, recv, scratch;
  bool in_place = false;

  uint8_t* resolve(const hcomm_bufref_t& ref) {
    std::vector<uint8_t>& buffer = ref.buffer == HCOMM_BUF_SEND   ? (in_place ? recv : send)
                                   : ref.buffer == HCOMM_BUF_RECV ? recv
                                                                  : scratch;
    return buffer.data() + ref.offset;
  }
};

class DataFlowSimulator {
 public:
  DataFlowSimulator(const std::vector<RankSchedule>& ranks, const hcomm_coll_args_t& args,
                    std::vector<RankMemory>& memory, uint32_t seed)
      : ranks_(ranks), args_(args), memory_(memory), held_(ranks.size(), false), rng_(seed) {
    index_chunks();
    link_dependencies();
    for (size_t id = 0; id < chunks_.size(); ++id)
      if (chunks_[id].pending == 0) ready_.push_back(id);
  }

  // A held rank runs nothing: it has not entered the call yet.
  void hold(int rank) { held_[rank] = true; }
  void release(int rank) {
    held_[rank] = false;
    std::erase_if(parked_, [&](size_t id) {
      if (chunks_[id].rank != rank) return false;
      ready_.push_back(id);
      return true;
    });
  }

  // Runs ready chunks, picked at random, until none is left.
  void run() {
    while (!ready_.empty()) {
      std::uniform_int_distribution<size_t> pick(0, ready_.size() - 1);
      std::swap(ready_[pick(rng_)], ready_.back());
      const size_t id = ready_.back();
      ready_.pop_back();
      if (held_[chunks_[id].rank]) {
        parked_.push_back(id);
        continue;
      }
      execute(id);
      complete(id);
    }
  }

  bool finished(int rank) const {
    for (size_t s = 0; s < ranks_[rank].steps.size(); ++s)
      if (completed_[rank][s] < ranks_[rank].steps[s].nchunks) return false;
    return true;
  }

  std::string unfinished() const {
    std::string out;
    for (size_t r = 0; r < ranks_.size(); ++r)
      for (size_t s = 0; s < ranks_[r].steps.size(); ++s)
        if (completed_[r][s] < ranks_[r].steps[s].nchunks)
          out += " rank " + std::to_string(r) + " step " + std::to_string(s) + " (" + std::to_string(completed_[r][s]) +
                 "/" + std::to_string(ranks_[r].steps[s].nchunks) + " chunks)";
    return out;
  }

 private:
  struct Chunk {
    int rank;
    size_t step;
    uint32_t index;
    int pending = 0;             // dependencies (and the send, for receives) not done yet
    size_t receiver = SIZE_MAX;  // for send chunks: the matching receive chunk
  };

  const hcomm_step_t& step_of(size_t id) const { return ranks_[chunks_[id].rank].steps[chunks_[id].step]; }
  size_t chunk_id(int rank, size_t step, uint32_t chunk) const { return first_[rank][step] + chunk; }

  void index_chunks() {
    first_.resize(ranks_.size());
    completed_.resize(ranks_.size());
    whole_waiters_.resize(ranks_.size());
    for (size_t r = 0; r < ranks_.size(); ++r) {
      completed_[r].assign(ranks_[r].steps.size(), 0);
      whole_waiters_[r].resize(ranks_[r].steps.size());
      for (size_t s = 0; s < ranks_[r].steps.size(); ++s) {
        first_[r].push_back(chunks_.size());
        for (uint32_t c = 0; c < ranks_[r].steps[s].nchunks; ++c)
          chunks_.push_back(Chunk{.rank = static_cast<int>(r), .step = s, .index = c});
      }
    }
    chunk_waiters_.resize(chunks_.size());
    in_flight_.resize(chunks_.size());
  }

  void link_dependencies() {
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
        for (uint32_t d = 0; d < st.ndeps; ++d) {
          const size_t dep = static_cast<size_t>(st.deps[d]);
          if (st.whole_deps & (1u << d)) {
            whole_waiters_[r][dep].push_back(s);
            for (uint32_t c = 0; c < st.nchunks; ++c)
              chunks_[chunk_id(rank, s, c)].pending += ranks_[r].steps[dep].nchunks;
          } else {
            for (uint32_t c = 0; c < st.nchunks; ++c) {
              chunk_waiters_[chunk_id(rank, dep, c)].push_back(chunk_id(rank, s, c));
              ++chunks_[chunk_id(rank, s, c)].pending;
            }
          }
        }
        if (st.kind != HCOMM_STEP_SEND) continue;
        const auto [peer, peer_step] = receives.at({rank, st.peer, st.match});
        for (uint32_t c = 0; c < st.nchunks; ++c) {
          chunks_[chunk_id(rank, s, c)].receiver = chunk_id(peer, peer_step, c);
          ++chunks_[chunk_id(peer, peer_step, c)].pending;
        }
      }
  }

  void satisfy(size_t id) {
    if (--chunks_[id].pending == 0) ready_.push_back(id);
  }

  // The bytes of a step that chunk `index` covers, as the executor cuts them.
  std::pair<uint64_t, uint64_t> range(const hcomm_step_t& s, uint32_t index) const {
    const uint64_t elem = args_.dtype_size ? args_.dtype_size : 1;
    const uint64_t elems = s.bytes / elem;
    const uint64_t first = elems * index / s.nchunks, last = elems * (index + 1) / s.nchunks;
    return {first * elem, (last - first) * elem};
  }

  void execute(size_t id) {
    const Chunk& chunk = chunks_[id];
    const hcomm_step_t& s = step_of(id);
    RankMemory& mem = memory_[chunk.rank];
    const auto [offset, bytes] = range(s, chunk.index);
    const size_t count = args_.dtype_size ? bytes / args_.dtype_size : 0;
    const int divisor = (s.flags & HCOMM_STEP_FINAL) && args_.op == HCOMM_AVG ? static_cast<int>(ranks_.size()) : 0;
    switch (s.kind) {
      case HCOMM_STEP_SEND: {
        const uint8_t* src = mem.resolve(s.src) + offset;
        in_flight_[chunk.receiver].assign(src, src + bytes);
        break;
      }
      case HCOMM_STEP_RECV:
      case HCOMM_STEP_RECV_REDUCE: {
        const std::vector<uint8_t> payload = std::move(in_flight_[id]);
        EXPECT_EQ(payload.size(), bytes) << "rank " << chunk.rank << " step " << chunk.step;
        if (payload.size() != bytes || bytes == 0) break;
        if (s.kind == HCOMM_STEP_RECV)
          std::memcpy(mem.resolve(s.dst) + offset, payload.data(), bytes);
        else
          reduce(args_.dtype, args_.op, mem.resolve(s.dst) + offset, mem.resolve(s.src) + offset, payload.data(), count,
                 divisor);
        break;
      }
      case HCOMM_STEP_REDUCE:
        reduce(args_.dtype, args_.op, mem.resolve(s.dst) + offset, mem.resolve(s.src) + offset,
               mem.resolve(s.src2) + offset, count, divisor);
        break;
      case HCOMM_STEP_COPY:
        if (bytes) std::memmove(mem.resolve(s.dst) + offset, mem.resolve(s.src) + offset, bytes);
        break;
    }
  }

  void complete(size_t id) {
    const Chunk& chunk = chunks_[id];
    for (size_t waiter : chunk_waiters_[id]) satisfy(waiter);
    if (chunk.receiver != SIZE_MAX) satisfy(chunk.receiver);
    const hcomm_step_t& s = step_of(id);
    if (++completed_[chunk.rank][chunk.step] < s.nchunks) return;
    for (size_t waiter : whole_waiters_[chunk.rank][chunk.step])
      for (uint32_t c = 0; c < ranks_[chunk.rank].steps[waiter].nchunks; ++c) satisfy(chunk_id(chunk.rank, waiter, c));
  }

  const std::vector<RankSchedule>& ranks_;
  const hcomm_coll_args_t args_;
  std::vector<RankMemory>& memory_;
  std::vector<bool> held_;
  std::mt19937 rng_;
  std::vector<Chunk> chunks_;
  std::vector<std::vector<size_t>> first_;                       // [rank][step] -> id of its chunk 0
  std::vector<std::vector<uint32_t>> completed_;                 // [rank][step] -> chunks done
  std::vector<std::vector<size_t>> chunk_waiters_;               // chunk id -> chunks waiting chunk-wise
  std::vector<std::vector<std::vector<size_t>>> whole_waiters_;  // [rank][step] -> steps waiting for all of it
  std::vector<std::vector<uint8_t>> in_flight_;                  // receive chunk id -> payload
  std::vector<size_t> ready_, parked_;
};

// ---------------------------------------------------------------------------
// One data collective on every rank: build, check, simulate, compare.

struct Shape {
  int nranks;
  uint64_t count;
  const Chunking* chunking;
  bool in_place;
};

std::string shape_name(const ::testing::TestParamInfo<Shape>& info) {
  const Shape& s = info.param;
  return "n" + std::to_string(s.nranks) + "_count" + std::to_string(s.count) + "_chunks" + s.chunking->name +
         (s.in_place ? "_inplace" : "");
}

std::vector<Shape> shapes() {
  std::vector<Shape> out;
  for (int n : {1, 2, 3, 4, 5, 6, 7, 8, 9, 16, 17}) {
    std::vector<uint64_t> counts = {0, 1, 7, static_cast<uint64_t>(n - 1), 1027};
    std::sort(counts.begin(), counts.end());
    counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
    for (uint64_t count : counts)
      for (const Chunking& chunking : kChunkings)
        for (bool in_place : {false, true}) out.push_back({n, count, &chunking, in_place});
  }
  return out;
}

struct DataCase {
  const hcomm_algorithm_desc_t* algorithm;
  hcomm_coll_args_t args;
  int nranks;
  ChunkRule chunks;
  uint32_t seed;
};

// Builds, checks and runs `c`; `expected(rank, i)` is element i of rank's
// output. Inputs are input_value<T>(rank, i) in every rank's send buffer
// (its receive buffer when in place); outputs start as a sentinel pattern.
template <class T, class Expected>
void run_data_case(const DataCase& c, Expected expected) {
  const hcomm_coll_args_t& args = c.args;
  const uint64_t bytes = args.count * sizeof(T);
  const bool rooted = args.coll == HCOMM_COLL_BROADCAST;
  std::vector<RankSchedule> ranks;
  ASSERT_NO_FATAL_FAILURE(build_all(*c.algorithm, args, c.nranks, c.chunks, ranks));
  std::vector<uint64_t> send_bytes(c.nranks, bytes);
  if (rooted)
    for (int r = 0; r < c.nranks; ++r)
      if (r != args.root) send_bytes[r] = 0;
  const std::vector<std::string> problems = ScheduleChecker(ranks, send_bytes, bytes, sizeof(T)).problems();
  ASSERT_TRUE(problems.empty()) << joined(problems);

  std::vector<RankMemory> memory(c.nranks);
  for (int r = 0; r < c.nranks; ++r) {
    RankMemory& m = memory[r];
    m.in_place = args.in_place;
    m.scratch.assign(ranks[r].scratch, 0xA5);
    m.recv.assign(bytes, 0x5A);
    if (!m.in_place) m.send.resize(send_bytes[r]);
    std::vector<uint8_t>& input = m.in_place ? m.recv : m.send;
    for (uint64_t i = 0; i < send_bytes[r] / sizeof(T); ++i) store(input.data(), i, input_value<T>(r, i));
  }
  const std::vector<RankMemory> before = memory;
  DataFlowSimulator sim(ranks, args, memory, c.seed);
  sim.run();
  ASSERT_EQ(sim.unfinished(), "") << "deadlock";
  for (int r = 0; r < c.nranks; ++r) {
    int mismatches = 0;
    for (uint64_t i = 0; i < args.count; ++i) {
      const T want = expected(r, i);
      const T got = load<T>(memory[r].recv.data(), i);
      if (got != want && mismatches++ < 3)
        ADD_FAILURE() << "rank " << r << " element " << i << ": expected " << want << ", got " << got;
    }
    EXPECT_EQ(mismatches, 0) << "rank " << r << " of " << c.nranks;
    if (!args.in_place) {
      EXPECT_TRUE(memory[r].send == before[r].send) << "rank " << r << " changed its send buffer";
    }
  }
}

struct Workload {
  hcomm_dtype_t dtype;
  hcomm_op_t op;
};

const Workload kAllreduceWorkloads[] = {
    {HCOMM_INT64, HCOMM_SUM}, {HCOMM_INT64, HCOMM_MAX}, {HCOMM_INT64, HCOMM_AVG}, {HCOMM_FLOAT32, HCOMM_SUM}};

const hcomm_algorithm_desc_t* algorithm(const char* name, hcomm_coll_t coll) {
  return AlgorithmPlugins::get().find(name, coll);
}

#define ASSERT_ALGORITHM(var, name, coll)                    \
  const hcomm_algorithm_desc_t* var = algorithm(name, coll); \
  ASSERT_NE(var, nullptr) << "no algorithm " << name << " in the plugin: " << AlgorithmPlugins::get().load_error()

class RingAllreduce : public ::testing::TestWithParam<Shape> {};

TEST_P(RingAllreduce, EveryRankHoldsTheReduction) {
  ASSERT_ALGORITHM(ring, "ring", HCOMM_COLL_ALLREDUCE);
  const Shape& shape = GetParam();
  for (const Workload& w : kAllreduceWorkloads)
    for (uint32_t seed : {1u, 2u}) {
      SCOPED_TRACE(::testing::Message() << "dtype " << w.dtype << " op " << w.op << " seed " << seed);
      const DataCase c = {.algorithm = ring,
                          .args = coll_args(HCOMM_COLL_ALLREDUCE, shape.count, w.dtype, w.op, 0, shape.in_place),
                          .nranks = shape.nranks,
                          .chunks = shape.chunking->rule,
                          .seed = seed};
      const int n = shape.nranks;
      if (w.dtype == HCOMM_FLOAT32)
        run_data_case<float>(c, [&](int, uint64_t i) { return reduced_value<float>(w.op, n, i); });
      else
        run_data_case<int64_t>(c, [&](int, uint64_t i) { return reduced_value<int64_t>(w.op, n, i); });
    }
}

INSTANTIATE_TEST_SUITE_P(Shapes, RingAllreduce, ::testing::ValuesIn(shapes()), shape_name);

class BinomialBroadcast : public ::testing::TestWithParam<Shape> {};

TEST_P(BinomialBroadcast, EveryRankHoldsTheRootsData) {
  ASSERT_ALGORITHM(binomial, "binomial", HCOMM_COLL_BROADCAST);
  const Shape& shape = GetParam();
  for (int root = 0; root < shape.nranks; ++root)
    for (hcomm_dtype_t dtype : {HCOMM_INT64, HCOMM_FLOAT32}) {
      SCOPED_TRACE(::testing::Message() << "root " << root << " dtype " << dtype);
      const DataCase c = {.algorithm = binomial,
                          .args = coll_args(HCOMM_COLL_BROADCAST, shape.count, dtype, HCOMM_SUM, root, shape.in_place),
                          .nranks = shape.nranks,
                          .chunks = shape.chunking->rule,
                          .seed = static_cast<uint32_t>(root + 1)};
      if (dtype == HCOMM_FLOAT32)
        run_data_case<float>(c, [&](int, uint64_t i) { return input_value<float>(root, i); });
      else
        run_data_case<int64_t>(c, [&](int, uint64_t i) { return input_value<int64_t>(root, i); });
    }
}

INSTANTIATE_TEST_SUITE_P(Shapes, BinomialBroadcast, ::testing::ValuesIn(shapes()), shape_name);

// ---------------------------------------------------------------------------
// The barrier: no rank leaves before the last one has arrived.

class DisseminationBarrier : public ::testing::TestWithParam<int> {};

TEST_P(DisseminationBarrier, NoRankLeavesBeforeTheLastArrives) {
  ASSERT_ALGORITHM(barrier, "dissemination", HCOMM_COLL_BARRIER);
  const int n = GetParam();
  const hcomm_coll_args_t args = coll_args(HCOMM_COLL_BARRIER, 0, HCOMM_INT8, HCOMM_SUM, 0, false);
  std::vector<RankSchedule> ranks;
  ASSERT_NO_FATAL_FAILURE(build_all(*barrier, args, n, kChunkings[0].rule, ranks));
  const std::vector<std::string> problems = ScheduleChecker(ranks, std::vector<uint64_t>(n, 0), 0, 0).problems();
  ASSERT_TRUE(problems.empty()) << joined(problems);
  int rounds = 0;
  while ((1 << rounds) < n) ++rounds;
  for (int r = 0; r < n; ++r) {
    EXPECT_EQ(ranks[r].steps.size(), 2u * rounds) << "rank " << r;
    for (const hcomm_step_t& s : ranks[r].steps) EXPECT_EQ(s.bytes, 0u) << "rank " << r;
  }
  for (int late = 0; late < n; ++late) {
    std::vector<RankMemory> memory(n);
    DataFlowSimulator sim(ranks, args, memory, static_cast<uint32_t>(late));
    sim.hold(late);
    sim.run();
    for (int r = 0; r < n; ++r) {
      if (r != late) {
        EXPECT_FALSE(sim.finished(r)) << "rank " << r << " left while rank " << late << " was away";
      }
    }
    sim.release(late);
    sim.run();
    EXPECT_EQ(sim.unfinished(), "") << "late rank " << late;
  }
}

std::string rank_count_name(const ::testing::TestParamInfo<int>& param) { return "n" + std::to_string(param.param); }

INSTANTIATE_TEST_SUITE_P(Ranks, DisseminationBarrier, ::testing::Range(1, 34), rank_count_name);

// ---------------------------------------------------------------------------
// Schedule shapes the executor's performance relies on.

std::vector<RankSchedule> built(const hcomm_algorithm_desc_t& algo, const hcomm_coll_args_t& args, int nranks,
                                ChunkRule rule) {
  std::vector<RankSchedule> ranks;
  build_all(algo, args, nranks, rule, ranks);
  return ranks;
}

TEST(RingAllreduceSchedule, PipelinesEveryTransferChunkWise) {
  ASSERT_ALGORITHM(ring, "ring", HCOMM_COLL_ALLREDUCE);
  const int n = 5;
  const auto ranks =
      built(*ring, coll_args(HCOMM_COLL_ALLREDUCE, 1027, HCOMM_INT64, HCOMM_SUM, 0, false), n, kChunkings[1].rule);
  ASSERT_EQ(ranks.size(), static_cast<size_t>(n));
  for (int r = 0; r < n; ++r) {
    const std::vector<hcomm_step_t>& steps = ranks[r].steps;
    ASSERT_EQ(steps.size(), 4u * (n - 1)) << "rank " << r;
    int finals = 0, sends = 0;
    for (size_t i = 0; i < steps.size(); ++i) {
      const hcomm_step_t& s = steps[i];
      EXPECT_NE(s.kind, HCOMM_STEP_COPY) << "rank " << r << " step " << i;
      EXPECT_EQ(s.nchunks, steps[0].nchunks) << "rank " << r << " step " << i;
      finals += (s.flags & HCOMM_STEP_FINAL) != 0;
      if (s.kind != HCOMM_STEP_SEND) continue;
      if (sends++ == 0) {
        EXPECT_EQ(s.src.buffer, static_cast<uint32_t>(HCOMM_BUF_SEND)) << "the first send reads the user's input";
        EXPECT_EQ(s.ndeps, 0u);
        continue;
      }
      ASSERT_EQ(s.ndeps, 1u) << "rank " << r << " step " << i;
      EXPECT_EQ(s.whole_deps, 0u) << "rank " << r << " step " << i << " waits for a whole step";
      EXPECT_EQ(s.src.buffer, static_cast<uint32_t>(HCOMM_BUF_RECV));
      EXPECT_EQ(steps[s.deps[0]].dst.offset, s.src.offset) << "forwards the block it received";
    }
    EXPECT_GT(steps[0].nchunks, 1u);
    EXPECT_EQ(finals, 1) << "rank " << r;
  }
}

TEST(RingAllreduceSchedule, LoneRankCopiesUnlessInPlace) {
  ASSERT_ALGORITHM(ring, "ring", HCOMM_COLL_ALLREDUCE);
  auto copy = built(*ring, coll_args(HCOMM_COLL_ALLREDUCE, 9, HCOMM_INT64, HCOMM_SUM, 0, false), 1, kChunkings[0].rule);
  ASSERT_EQ(copy.size(), 1u);
  ASSERT_EQ(copy[0].steps.size(), 1u);
  EXPECT_EQ(copy[0].steps[0].kind, static_cast<uint32_t>(HCOMM_STEP_COPY));
  EXPECT_EQ(copy[0].steps[0].bytes, 72u);
  auto in_place =
      built(*ring, coll_args(HCOMM_COLL_ALLREDUCE, 9, HCOMM_INT64, HCOMM_SUM, 0, true), 1, kChunkings[0].rule);
  ASSERT_EQ(in_place.size(), 1u);
  EXPECT_TRUE(in_place[0].steps.empty());
}

TEST(BinomialBroadcastSchedule, RanksForwardChunksAsTheyArrive) {
  ASSERT_ALGORITHM(binomial, "binomial", HCOMM_COLL_BROADCAST);
  const int n = 7, root = 3;
  for (bool in_place : {false, true}) {
    const auto ranks = built(*binomial, coll_args(HCOMM_COLL_BROADCAST, 100, HCOMM_INT64, HCOMM_SUM, root, in_place), n,
                             kChunkings[1].rule);
    ASSERT_EQ(ranks.size(), static_cast<size_t>(n));
    const std::vector<hcomm_step_t>& at_root = ranks[root].steps;
    ASSERT_FALSE(at_root.empty());
    EXPECT_EQ(at_root[0].kind == HCOMM_STEP_COPY, !in_place) << "the root copies its input unless in place";
    for (const hcomm_step_t& s : at_root) {
      if (s.kind == HCOMM_STEP_SEND) {
        EXPECT_EQ(s.src.buffer, static_cast<uint32_t>(HCOMM_BUF_SEND));
      }
    }
    for (int r = 0; r < n; ++r) {
      if (r == root) continue;
      const std::vector<hcomm_step_t>& steps = ranks[r].steps;
      ASSERT_FALSE(steps.empty());
      EXPECT_EQ(steps[0].kind, static_cast<uint32_t>(HCOMM_STEP_RECV)) << "rank " << r;
      EXPECT_GT(steps[0].nchunks, 1u);
      for (size_t i = 1; i < steps.size(); ++i) {
        EXPECT_EQ(steps[i].kind, static_cast<uint32_t>(HCOMM_STEP_SEND)) << "rank " << r << " step " << i;
        ASSERT_EQ(steps[i].ndeps, 1u);
        EXPECT_EQ(steps[i].deps[0], 0);
        EXPECT_EQ(steps[i].whole_deps, 0u) << "rank " << r << " step " << i << " waits for the whole message";
      }
    }
  }
}

// ---------------------------------------------------------------------------
// Bad input: a clear error naming the argument, nothing built.

struct BadCall {
  const char* what;
  const char* algorithm;
  hcomm_coll_t coll;
  std::function<void(hcomm_coll_args_t&, hcomm_comm_view_t&)> spoil;
  const char* named;  // the text the error must contain
};

TEST(Algorithms, RejectBadArgumentsByName) {
  const BadCall cases[] = {
      {"negative root", "binomial", HCOMM_COLL_BROADCAST, [](auto& a, auto&) { a.root = -1; }, "args->root"},
      {"root past the end", "binomial", HCOMM_COLL_BROADCAST, [](auto& a, auto&) { a.root = 4; }, "args->root"},
      {"rank past the end", "ring", HCOMM_COLL_ALLREDUCE, [](auto&, auto& c) { c.rank = 4; }, "comm->rank"},
      {"no ranks", "dissemination", HCOMM_COLL_BARRIER, [](auto&, auto& c) { c.nranks = 0; }, "comm->nranks"},
      {"wrong collective", "ring", HCOMM_COLL_ALLREDUCE, [](auto& a, auto&) { a.coll = HCOMM_COLL_BROADCAST; },
       "args->coll"},
      {"short args", "ring", HCOMM_COLL_ALLREDUCE, [](auto& a, auto&) { a.size = 8; }, "args of 8 bytes"},
      {"zero dtype size", "ring", HCOMM_COLL_ALLREDUCE, [](auto& a, auto&) { a.dtype_size = 0; }, "args->dtype_size"},
      {"size overflow", "binomial", HCOMM_COLL_BROADCAST, [](auto& a, auto&) { a.count = SIZE_MAX / 4; }, "overflows"},
  };
  for (const BadCall& bad : cases) {
    SCOPED_TRACE(bad.what);
    ASSERT_ALGORITHM(algo, bad.algorithm, bad.coll);
    hcomm_coll_args_t args = coll_args(bad.coll, 10, HCOMM_INT64, HCOMM_SUM, 0, false);
    hcomm_comm_view_t comm = comm_view(4, 1);
    bad.spoil(args, comm);
    RankSchedule out;
    TestBuilder builder(out, kChunkings[0].rule);
    plugin_error_text().clear();
    EXPECT_EQ(algo->build(&args, &comm, builder.c()), HCOMM_ERR_INVALID_ARGUMENT);
    EXPECT_NE(plugin_error_text().find(bad.named), std::string::npos) << plugin_error_text();
    EXPECT_TRUE(out.steps.empty());
  }
}

TEST(Algorithms, NullPointersAreRejected) {
  ASSERT_ALGORITHM(ring, "ring", HCOMM_COLL_ALLREDUCE);
  const hcomm_coll_args_t args = coll_args(HCOMM_COLL_ALLREDUCE, 10, HCOMM_INT64, HCOMM_SUM, 0, false);
  const hcomm_comm_view_t comm = comm_view(2, 0);
  EXPECT_EQ(ring->build(&args, &comm, nullptr), HCOMM_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(ring->build(nullptr, &comm, nullptr), HCOMM_ERR_INVALID_ARGUMENT);
}

// A refused step ends the build with an error; the builder's own text stays.
TEST(Algorithms, RefusedStepEndsTheBuild) {
  const char* names[] = {"ring", "binomial", "dissemination"};
  const hcomm_coll_t colls[] = {HCOMM_COLL_ALLREDUCE, HCOMM_COLL_BROADCAST, HCOMM_COLL_BARRIER};
  for (int i = 0; i < 3; ++i) {
    ASSERT_ALGORITHM(algo, names[i], colls[i]);
    const hcomm_coll_args_t args = coll_args(colls[i], 10, HCOMM_INT64, HCOMM_SUM, 0, false);
    const hcomm_comm_view_t comm = comm_view(4, 0);
    RankSchedule out;
    TestBuilder builder(out, kChunkings[0].rule, true);
    plugin_error_text() = "builder's reason";
    EXPECT_EQ(algo->build(&args, &comm, builder.c()), HCOMM_ERR_INTERNAL) << names[i];
    EXPECT_EQ(plugin_error_text(), "builder's reason") << names[i];
  }
}

// ---------------------------------------------------------------------------
// Registration and cost model.

TEST(AlgorithmPluginHeaders, DescribeTheirAlgorithms) {
  const AlgorithmPlugins& plugins = AlgorithmPlugins::get();
  EXPECT_EQ(plugins.load_error(), "");
  std::set<std::string> names;
  for (const hcomm_plugin_header_t* header : plugins.headers()) {
    const hcomm_plugin_header_t& h = *header;
    SCOPED_TRACE(h.name);
    names.insert(h.name);
    EXPECT_EQ(h.size, sizeof(hcomm_plugin_header_t));
    EXPECT_EQ(h.abi_major, HCOMM_PLUGIN_ABI_MAJOR);
    EXPECT_EQ(h.abi_minor, HCOMM_PLUGIN_ABI_MINOR);
    EXPECT_EQ(h.kind, HCOMM_PLUGIN_ALGORITHM);
    EXPECT_STREQ(h.vendor, "HComm");
    EXPECT_NE(std::string(h.version), "");
    const hcomm_algorithm_v1_t& iface = *AlgorithmPlugins::iface(header);
    EXPECT_EQ(iface.size, sizeof(hcomm_algorithm_v1_t));
    EXPECT_GE(iface.num_algorithms, 1u);
    for (size_t i = 0; i < iface.num_algorithms; ++i) {
      const hcomm_algorithm_desc_t& a = iface.algorithms[i];
      SCOPED_TRACE(a.name);
      EXPECT_EQ(a.size, sizeof(hcomm_algorithm_desc_t));
      EXPECT_GE(a.min_ranks, 1);
      EXPECT_LE(a.min_bytes, a.max_bytes);
      EXPECT_TRUE(a.mem_kinds & HCOMM_MEM_HOST);
      EXPECT_NE(a.cost, nullptr);
      EXPECT_NE(a.build, nullptr);
    }
  }
  for (const char* expected : {"ring", "tree", "recursive"}) EXPECT_TRUE(names.count(expected)) << expected;
  EXPECT_NE(plugins.find("ring", HCOMM_COLL_ALLREDUCE), nullptr);
  EXPECT_NE(plugins.find("binomial", HCOMM_COLL_BROADCAST), nullptr);
  EXPECT_NE(plugins.find("dissemination", HCOMM_COLL_BARRIER), nullptr);
}

double cost(const hcomm_algorithm_desc_t& algo, hcomm_coll_t coll, uint64_t count, int nranks, bool in_place) {
  const hcomm_coll_args_t args = coll_args(coll, count, HCOMM_INT64, HCOMM_SUM, 0, in_place);
  const hcomm_comm_view_t comm = comm_view(nranks, 0);
  return algo.cost(&args, &comm);
}

TEST(Algorithms, CostsFollowTheLinkModel) {
  ASSERT_ALGORITHM(ring, "ring", HCOMM_COLL_ALLREDUCE);
  ASSERT_ALGORITHM(binomial, "binomial", HCOMM_COLL_BROADCAST);
  ASSERT_ALGORITHM(barrier, "dissemination", HCOMM_COLL_BARRIER);
  const hcomm_link_model_t link = comm_view(1, 0).link;
  // Ring: 2(n-1) messages of bytes/n, (n-1)/n of the bytes reduced.
  EXPECT_DOUBLE_EQ(cost(*ring, HCOMM_COLL_ALLREDUCE, 1000, 4, false),
                   6 * (link.alpha_us + 2000 * link.beta_us_per_byte) + 3 * 2000 * link.gamma_us_per_byte);
  EXPECT_DOUBLE_EQ(cost(*ring, HCOMM_COLL_ALLREDUCE, 1000, 1, true), 0.0);
  // Binomial: ceil(log2 n) sends of the whole message at the root.
  EXPECT_DOUBLE_EQ(cost(*binomial, HCOMM_COLL_BROADCAST, 1000, 5, true),
                   3 * (link.alpha_us + 8000 * link.beta_us_per_byte));
  EXPECT_DOUBLE_EQ(cost(*barrier, HCOMM_COLL_BARRIER, 0, 9, false), 4 * link.alpha_us);
  EXPECT_DOUBLE_EQ(cost(*barrier, HCOMM_COLL_BARRIER, 0, 1, false), 0.0);
}

}  // namespace
