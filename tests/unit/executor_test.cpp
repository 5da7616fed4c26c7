// The executor running the real algorithm plugins' schedules, one thread per
// rank over in-memory messages and in-process windows, with results checked
// element by element; and the schedule checks that reject broken schedules.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <random>
#include <stdexcept>
#include <thread>
#include <tuple>

#include "core/algorithm/selector.hpp"
#include "core/algorithm/tune.hpp"
#include "core/common/error.hpp"
#include "core/exec/mapped_call.hpp"
#include "core/exec/mapped_io.hpp"
#include "core/exec/operation.hpp"
#include "hcomm/hcomm.h"
#include "tools/hcomm-perf/values.hpp"

namespace hcomm::exec {
namespace {

using perf::DataSpec;

// Messages between the threads of one job: eager sends, tag-matched receives.
class Mailbox {
 public:
  void put(int src, int dst, uint64_t tag, const void* buf, size_t len) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto* p = static_cast<const uint8_t*>(buf);
    queues_[{src, dst, tag}].emplace_back(p, p + len);
  }
  bool take(int src, int dst, uint64_t tag, void* buf, size_t len) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = queues_.find({src, dst, tag});
    if (it == queues_.end() || it->second.empty()) return false;
    std::vector<uint8_t>& m = it->second.front();
    if (m.size() != len) HCOMM_THROW(HCOMM_ERR_INTERNAL, "message of %zu bytes for a receive of %zu", m.size(), len);
    std::copy(m.begin(), m.end(), static_cast<uint8_t*>(buf));
    it->second.pop_front();
    return true;
  }

 private:
  std::mutex mutex_;
  std::map<std::tuple<int, int, uint64_t>, std::deque<std::vector<uint8_t>>> queues_;
};

class MemoryIO final : public PeerIO {
 public:
  MemoryIO(Mailbox& box, int rank, MappedIO* mapped = nullptr) : box_(box), rank_(rank), mapped_(mapped) {}
  void* isend(int peer, const void* buf, size_t len, uint64_t tag) override {
    box_.put(rank_, peer, tag, buf, len);
    return new Request{true, nullptr, len, tag};
  }
  void* irecv(int, void* buf, size_t len, uint64_t tag) override { return new Request{false, buf, len, tag}; }
  bool test(int peer, void* request, size_t* bytes) override {
    auto* r = static_cast<Request*>(request);
    *bytes = r->len;
    if (!r->send && !box_.take(peer, rank_, r->tag, r->buf, r->len)) return false;
    delete r;
    return true;
  }
  void progress() override {}
  void wait(int64_t) override { std::this_thread::yield(); }
  void check_peers() override {}
  MappedIO* mapped() override { return mapped_; }

 private:
  struct Request {
    bool send;
    void* buf;
    size_t len;
    uint64_t tag;
  };
  Mailbox& box_;
  int rank_;
  MappedIO* mapped_;
};

struct Case {
  hcomm_coll_t coll;
  int nranks;
  size_t count;
  hcomm_dtype_t dtype;
  hcomm_op_t op;
  int root;
  bool in_place;
  uint64_t chunk_bytes;
};

// Runs one collective on every rank and checks every rank's receive buffer.
void run(const Case& c) {
  Mailbox box;
  const size_t es = hcomm_dtype_size(c.dtype), bytes = c.count * es;
  std::vector<std::vector<uint8_t>> send(c.nranks, std::vector<uint8_t>(bytes)), recv = send, expected = send;
  std::vector<std::string> errors(c.nranks);
  std::vector<std::thread> threads;
  for (int r = 0; r < c.nranks; ++r) {
    void* in = c.in_place ? recv[r].data() : send[r].data();
    DataSpec spec{c.dtype, c.op, c.nranks, r, c.root};
    if (c.coll == HCOMM_COLL_BROADCAST) perf::fill_broadcast(spec, in, expected[r].data(), c.count);
    else perf::fill_reduction(spec, in, expected[r].data(), c.count);
    if (!c.in_place) perf::write_complement(recv[r].data(), expected[r].data(), bytes);
    threads.emplace_back([&, r, in] {
      try {
        hcomm_comm_view_t view{.size = sizeof view, .rank = r, .nranks = c.nranks, .link = {1, 1e-4, 1e-5}};
        view.chunk_bytes = c.chunk_bytes;
        algorithm::Selector sel(view, {}, algorithm::registry());
        bool in_place = c.in_place || (c.coll == HCOMM_COLL_BROADCAST && r != c.root);
        hcomm_coll_args_t args{.size = sizeof args, .coll = c.coll, .count = c.count, .dtype = c.dtype,
                               .dtype_size = es, .op = c.op, .root = c.root, .in_place = in_place,
                               .mem_kind = HCOMM_MEM_HOST};
        auto schedule = sel.build(args);
        std::vector<uint8_t> scratch(schedule->scratch_bytes);
        MemoryIO io(box, r);
        Operation op(schedule, Buffers{in_place ? recv[r].data() : in, recv[r].data(), scratch.data()}, 7, collective_tag_base(7), c.nranks);
        while (!op.advance(io)) std::this_thread::yield();
      } catch (const std::exception& e) {
        errors[r] = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int r = 0; r < c.nranks; ++r) {
    EXPECT_EQ(errors[r], "") << "rank " << r;
    perf::Mismatch m = perf::compare_elements(recv[r].data(), expected[r].data(), c.count, es);
    EXPECT_EQ(m.wrong, 0u) << "n=" << c.nranks << " count=" << c.count << " " << hcomm_dtype_name(c.dtype) << " "
                           << hcomm_op_name(c.op) << " root=" << c.root << " chunk=" << c.chunk_bytes
                           << (c.in_place ? " in place" : "") << ": rank " << r << ", first wrong element "
                           << m.first_index;
  }
}

TEST(Executor, AllreduceEveryRankCountAndChunking) {
  for (int n : {1, 2, 3, 4, 5, 7, 8, 9, 16})
    for (size_t count : {size_t{0}, size_t{1}, size_t{7}, size_t{1027}})
      for (uint64_t chunk : {uint64_t{64}, uint64_t{512} * 1024})
        for (bool in_place : {false, true}) {
          run(Case{HCOMM_COLL_ALLREDUCE, n, count, HCOMM_FLOAT32, HCOMM_SUM, 0, in_place, chunk});
        }
}

TEST(Executor, AllreduceEveryDtypeAndOp) {
  for (int t = 0; t < HCOMM_NUM_DTYPES; ++t)
    for (int o = 0; o < HCOMM_NUM_OPS; ++o) {
      run(Case{HCOMM_COLL_ALLREDUCE, 5, 333, static_cast<hcomm_dtype_t>(t), static_cast<hcomm_op_t>(o), 0, false, 128});
    }
}

TEST(Executor, BroadcastEveryRoot) {
  for (int n : {1, 2, 3, 5, 8, 9})
    for (int root = 0; root < n; ++root)
      for (size_t count : {size_t{0}, size_t{1}, size_t{1027}})
        for (bool in_place : {false, true}) {
          run(Case{HCOMM_COLL_BROADCAST, n, count, HCOMM_INT32, HCOMM_SUM, root, in_place, 256});
        }
}

TEST(Executor, BarrierCompletesOnEveryRankCount) {
  for (int n : {1, 2, 3, 7, 16}) run(Case{HCOMM_COLL_BARRIER, n, 0, HCOMM_UINT8, HCOMM_SUM, 0, true, 64});
}

// ---------------------------------------------------------------------------
// Mapped memory in one process: every rank's window is plain memory here, and
// each rank's MappedIO sees all of them, as a host-mapped communicator does.

// Every rank's window of a communicator of `n` ranks.
class Windows {
 public:
  Windows(int n, uint64_t window_bytes) : layout_{n, window_bytes} {
    for (int r = 0; r < n; ++r) {
      // aligned_alloc takes a size that is a multiple of the alignment.
      const uint64_t bytes = (layout_.total_bytes() + window::kPage - 1) / window::kPage * window::kPage;
      memory_.emplace_back(static_cast<uint8_t*>(std::aligned_alloc(window::kPage, bytes)), std::free);
      std::memset(memory_.back().get(), 0, layout_.total_bytes());
      window::initialise(memory_.back().get(), layout_, r);
    }
  }
  uint8_t* base(int r) const { return memory_[r].get(); }
  window::Header& header(int r) const { return *reinterpret_cast<window::Header*>(base(r)); }
  uint64_t window_bytes() const { return layout_.window_bytes; }

 private:
  window::Layout layout_;
  std::vector<std::unique_ptr<uint8_t, decltype(&std::free)>> memory_;
};

// One rank's view of the windows. Its buffers count as mapped, but for 64
// bytes at each end, on odd ranks, and as copied by address on even ones,
// and ranks of the other parity as under another last-level cache, so that
// every way of reading and writing a peer's buffer runs.
class MemoryMapped final : public MappedIO {
 public:
  MemoryMapped(const Windows& w, int rank, int nranks) : MappedIO(rank, nranks, w.window_bytes()) {
    for (int r = 0; r < nranks; ++r) {
      attach(r, w.base(r), w.window_bytes());
      set_caches_apart(r, (r + rank) % 2 == 1);
    }
  }
  const uint8_t* map(int, const hcomm_mem_desc_t& desc) override {
    ++maps;
    return reinterpret_cast<const uint8_t*>(desc.address);
  }
  void read(int, uint64_t address, void* local, size_t bytes) override {
    ++copies;
    std::memcpy(local, reinterpret_cast<const void*>(address), bytes);
  }
  void write(int, uint64_t address, const void* local, size_t bytes) override {
    ++copies;
    std::memcpy(reinterpret_cast<void*>(address), local, bytes);
  }
  void describe(const void* ptr, size_t bytes, hcomm_mem_desc_t* out) override {
    out->bytes = rank() % 2 && bytes > 128 ? bytes - 128 : 0;
    out->address = reinterpret_cast<uintptr_t>(ptr) + 64;
  }
  int maps = 0, copies = 0;
};

struct MappedCase {
  const char* algorithm;
  int nranks;
  size_t count;
  hcomm_dtype_t dtype = HCOMM_FLOAT32;
  hcomm_op_t op = HCOMM_SUM;
  bool in_place = false;
  uint64_t chunk_bytes = 512 * 1024;
  uint32_t flags = HCOMM_VIEW_MAPPED | HCOMM_VIEW_PEER_BUFFERS | HCOMM_VIEW_SIGNAL_PAYLOAD;  // as the core's
};

std::string describe(const MappedCase& c) {
  return format("%s n=%d count=%zu %s %s chunk=%llu flags=%u%s", c.algorithm, c.nranks, c.count,
                hcomm_dtype_name(c.dtype), hcomm_op_name(c.op), static_cast<unsigned long long>(c.chunk_bytes),
                c.flags, c.in_place ? " in place" : "");
}

// A communicator's worth of ranks in one process, over windows that persist
// from call to call as a communicator's do.
class MappedJob {
 public:
  MappedJob(int nranks, uint64_t window_bytes) : nranks_(nranks), windows_(nranks, window_bytes) {
    for (int r = 0; r < nranks; ++r) mapped_.push_back(std::make_unique<MemoryMapped>(windows_, r, nranks));
  }

  // Runs one allreduce on every rank, inputs given by `fill(rank, input)`;
  // returns every rank's receive buffer (empty on failure, with the failure added).
  template <class Fill>
  std::vector<std::vector<uint8_t>> allreduce(const MappedCase& c, Fill fill) {
    Mailbox box;
    const size_t es = hcomm_dtype_size(c.dtype), bytes = c.count * es;
    std::vector<std::vector<uint8_t>> send(nranks_, std::vector<uint8_t>(bytes)), recv = send;
    std::vector<std::string> errors(nranks_);
    std::vector<std::string> algorithms(nranks_);
    std::vector<std::thread> threads;
    for (int r = 0; r < nranks_; ++r) {
      fill(r, c.in_place ? recv[r].data() : send[r].data());
      threads.emplace_back([&, r] {
        try {
          hcomm_comm_view_t view{.size = sizeof view, .rank = r, .nranks = nranks_, .link = {1, 1e-4, 1e-5},
                                 .flags = c.flags, .window_bytes = c.flags ? windows_.window_bytes() : 0,
                                 .mapped = {0.3, 1e-4, 5e-5}};
          view.chunk_bytes = c.chunk_bytes;
          algorithm::Selector sel(view, algorithm::parse_tune(std::string("allreduce:@") + c.algorithm),
                                  algorithm::registry());
          hcomm_coll_args_t args{.size = sizeof args, .coll = HCOMM_COLL_ALLREDUCE, .count = c.count,
                                 .dtype = c.dtype, .dtype_size = es, .op = c.op, .root = 0, .in_place = c.in_place,
                                 .mem_kind = HCOMM_MEM_HOST};
          auto schedule = sel.build(args);
          algorithms[r] = schedule->algorithm;
          std::vector<uint8_t> scratch(schedule->scratch_bytes);
          MemoryIO io(box, r, mapped_[r].get());
          void* in = c.in_place ? recv[r].data() : send[r].data();
          run_to_end(schedule, Buffers{in, recv[r].data(), scratch.data()}, io);
        } catch (const std::exception& e) {
          errors[r] = e.what();
        }
      });
    }
    for (auto& t : threads) t.join();
    for (int r = 0; r < nranks_; ++r) {
      EXPECT_EQ(errors[r], "") << describe(c) << ": rank " << r;
      if (c.count && c.flags) {
        EXPECT_EQ(algorithms[r], c.algorithm) << describe(c);
      }
      if (!errors[r].empty()) return {};
    }
    return recv;
  }

  // One allreduce of the exactly known values, checked element by element.
  void check(const MappedCase& c) {
    const size_t es = hcomm_dtype_size(c.dtype);
    std::vector<std::vector<uint8_t>> expected(nranks_, std::vector<uint8_t>(c.count * es));
    auto recv = allreduce(c, [&](int r, void* input) {
      perf::fill_reduction(DataSpec{c.dtype, c.op, nranks_, r, 0}, input, expected[r].data(), c.count);
    });
    for (size_t r = 0; r < recv.size(); ++r) {
      perf::Mismatch m = perf::compare_elements(recv[r].data(), expected[r].data(), c.count, es);
      EXPECT_EQ(m.wrong, 0u) << describe(c) << ": rank " << r << ", first wrong element " << m.first_index;
    }
  }

  // Runs schedules[r] on every rank r over buffers[r].
  void run(const std::vector<std::shared_ptr<Schedule>>& schedules, const std::vector<Buffers>& buffers) {
    Mailbox box;
    std::vector<std::string> errors(nranks_);
    std::vector<std::thread> threads;
    for (int r = 0; r < nranks_; ++r)
      threads.emplace_back([&, r] {
        try {
          MemoryIO io(box, r, mapped_[r].get());
          run_to_end(schedules[r], buffers[r], io);
        } catch (const std::exception& e) {
          errors[r] = e.what();
        }
      });
    for (auto& t : threads) t.join();
    for (int r = 0; r < nranks_; ++r) EXPECT_EQ(errors[r], "") << "rank " << r;
  }

  const MemoryMapped& mapped(int r) const { return *mapped_[r]; }

 private:
  // As the communicator does, finished operations are advanced again.
  void run_to_end(std::shared_ptr<const Schedule> schedule, Buffers buffers, MemoryIO& io) {
    Operation op(std::move(schedule), buffers, 7, collective_tag_base(7), nranks_);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!op.advance(io)) {
      if (std::chrono::steady_clock::now() > deadline) throw std::runtime_error("no progress in 20 s");
      std::this_thread::yield();
    }
    for (int i = 0; i < 3; ++i) EXPECT_TRUE(op.advance(io));
  }

  int nranks_;
  Windows windows_;
  std::vector<std::unique_ptr<MemoryMapped>> mapped_;
};

TEST(ExecutorMapped, DirectAllreduceEveryRankCountAndWindow) {
  for (const char* algorithm : {"one_shot", "two_shot"})
    for (int n : {2, 3, 5, 7})
      for (uint64_t window : {uint64_t{256}, uint64_t{1} << 16}) {
        MappedJob job(n, window);
        // 14 floats fill a flag's line, 15 take two, 64 the most one_shot sends in signals; 65 go through the window.
        for (size_t count :
             {size_t{0}, size_t{1}, size_t{7}, size_t{14}, size_t{15}, size_t{64}, size_t{65}, size_t{1027}})
          for (uint64_t chunk : {uint64_t{128}, uint64_t{512} * 1024})
            for (uint32_t flags : {uint32_t{HCOMM_VIEW_MAPPED},
                                   uint32_t{HCOMM_VIEW_MAPPED | HCOMM_VIEW_PEER_BUFFERS | HCOMM_VIEW_SIGNAL_PAYLOAD}})
              for (bool in_place : {false, true})
                job.check({.algorithm = algorithm, .nranks = n, .count = count, .in_place = in_place,
                           .chunk_bytes = chunk, .flags = flags});
      }
}

TEST(ExecutorMapped, DirectAllreduceEveryDtypeAndOp) {
  for (const char* algorithm : {"one_shot", "two_shot"}) {
    MappedJob job(5, 1024);
    for (int t = 0; t < HCOMM_NUM_DTYPES; ++t)
      for (int o = 0; o < HCOMM_NUM_OPS; ++o)
        // 7: in a line for every type; 13: two lines of 8-byte types; 61: the window for them, signals for others
        for (size_t count : {size_t{7}, size_t{13}, size_t{61}, size_t{333}})
          job.check({.algorithm = algorithm, .nranks = 5, .count = count, .dtype = static_cast<hcomm_dtype_t>(t),
                     .op = static_cast<hcomm_op_t>(o), .chunk_bytes = 200});
  }
}

// Calls in a row on the same windows take the halves in turn; one-shot reads
// peers' buffers where they exceed the window, mapped or copied by address.
TEST(ExecutorMapped, CallsInARowShareTheWindows) {
  MappedJob job(4, 4096);
  const size_t counts[] = {1, 5000, 1024, 3, 20000, 1027, 1};
  for (int i = 0; i < 14; ++i)
    job.check({.algorithm = i % 3 ? "one_shot" : "two_shot", .nranks = 4, .count = counts[i % 7],
               .dtype = i % 2 ? HCOMM_INT64 : HCOMM_FLOAT32, .op = i % 4 ? HCOMM_SUM : HCOMM_MAX, .in_place = i % 5 == 0});
  int maps = 0, copies = 0;
  for (int r = 0; r < 4; ++r) maps += job.mapped(r).maps, copies += job.mapped(r).copies;
  EXPECT_GT(maps, 0);
  EXPECT_GT(copies, 0);
}

// Every rank gets the same bits, those of the inputs combined in rank order,
// with values whose sums round.
TEST(ExecutorMapped, DirectAllreduceGivesEveryRankTheSameBits) {
  for (const char* algorithm : {"one_shot", "two_shot"})
    for (size_t count : {size_t{1}, size_t{999}, size_t{3000}}) {
      const int n = 5;
      MappedJob job(n, 2048);
      std::vector<std::vector<float>> inputs(n, std::vector<float>(count));
      std::mt19937 rng(42);
      std::uniform_real_distribution<float> value(-1e3f, 1e3f);
      for (auto& in : inputs)
        for (float& v : in) v = value(rng);
      const MappedCase c{.algorithm = algorithm, .nranks = n, .count = count};
      auto recv = job.allreduce(c, [&](int r, void* input) { std::memcpy(input, inputs[r].data(), count * 4); });
      ASSERT_EQ(recv.size(), static_cast<size_t>(n));
      std::vector<float> expected = inputs[0];
      for (int r = 1; r < n; ++r)
        for (size_t i = 0; i < count; ++i) expected[i] += inputs[r][i];
      for (int r = 0; r < n; ++r) {
        perf::Mismatch m = perf::compare_elements(recv[r].data(), expected.data(), count, 4);
        EXPECT_EQ(m.wrong, 0u) << describe(c) << ": rank " << r << ", first wrong element " << m.first_index;
      }
    }
}

hcomm_step_t mapped_step(hcomm_step_kind_t kind, int peer, uint32_t match, uint64_t bytes) {
  hcomm_step_t s{};
  s.kind = kind;
  s.peer = peer;
  s.match = match;
  s.bytes = bytes;
  s.nchunks = 1;
  return s;
}

void wait_for(hcomm_step_t& s, std::initializer_list<int32_t> deps) {
  for (int32_t d : deps) {
    s.whole_deps |= 1u << s.ndeps;
    s.deps[s.ndeps++] = d;
  }
}

// A schedule of an int32 sum allreduce of `count` elements, to write steps into by hand.
std::shared_ptr<Schedule> hand_written(size_t count) {
  auto s = std::make_shared<Schedule>();
  s->algorithm = "hand-written";
  s->args = {.size = sizeof(hcomm_coll_args_t), .coll = HCOMM_COLL_ALLREDUCE, .count = count, .dtype = HCOMM_INT32,
             .dtype_size = 4, .op = HCOMM_SUM, .mem_kind = HCOMM_MEM_HOST};
  return s;
}

hcomm_bufref_t ref(uint32_t buffer, uint64_t offset) { return {buffer, offset}; }

// A COPY (peer -1) or LOAD of `bytes` from src to dst, after steps `deps`.
hcomm_step_t moving(hcomm_step_kind_t kind, int peer, uint64_t bytes, hcomm_bufref_t src, hcomm_bufref_t dst,
                    std::initializer_list<int32_t> deps = {}) {
  hcomm_step_t s = mapped_step(kind, peer, 0, bytes);
  s.src = src;
  s.dst = dst;
  wait_for(s, deps);
  return s;
}

// Two ranks that run hand-written schedules over mapped windows: SEND holds
// count int32 r * 100000 + i on rank r; add() finalizes a rank's schedule for
// a RECV of recv_count elements.
struct HandWrittenPair {
  static constexpr int n = 2;
  HandWrittenPair(size_t elements, uint64_t window_bytes)
      : count(elements), job(n, window_bytes), send(n, std::vector<int32_t>(elements)), recv(n) {
    for (int r = 0; r < n; ++r)
      for (size_t i = 0; i < count; ++i) send[r][i] = static_cast<int32_t>(r * 100000 + i);
  }
  void add(int r, const std::shared_ptr<Schedule>& s, size_t recv_count) {
    finalize_schedule(*s, count * 4, recv_count * 4);
    recv[r].resize(recv_count);
    schedules.push_back(s);
    buffers.push_back({.send = send[r].data(), .recv = recv[r].data(), .scratch = nullptr});
  }
  void run() { job.run(schedules, buffers); }

  size_t count;
  MappedJob job;
  std::vector<std::vector<int32_t>> send, recv;
  std::vector<std::shared_ptr<Schedule>> schedules;
  std::vector<Buffers> buffers;
};

// The steps no direct algorithm uses yet, written by hand: a load-reduce of
// the peer's SEND into a RECV other than SEND, a store into the peer's RECV,
// and signals of several chunks; peers' buffers mapped one way and copied by
// address the other way.
TEST(ExecutorMapped, HandWrittenStepsOnPeersBuffers) {
  const size_t count = 3000, bytes = count * 4;
  HandWrittenPair pair(count, 1024);
  for (int r = 0; r < pair.n; ++r) {
    const int p = 1 - r;
    auto s = hand_written(count);
    s->steps.push_back(mapped_step(HCOMM_STEP_SIGNAL, p, 0, 0));  // 0: SEND is exposed
    s->steps.push_back(mapped_step(HCOMM_STEP_WAIT, p, 0, 0));    // 1
    hcomm_step_t sum = mapped_step(HCOMM_STEP_LOAD_REDUCE, p, 0, bytes);  // 2: RECV = SEND + the peer's SEND
    sum.src = {HCOMM_BUF_SEND, 0};
    sum.src2 = {HCOMM_BUF_SEND, 0};
    sum.dst = {HCOMM_BUF_RECV, 0};
    sum.nchunks = 5;
    wait_for(sum, {1});
    s->steps.push_back(sum);
    hcomm_step_t store = mapped_step(HCOMM_STEP_STORE, p, 0, bytes);  // 3: the peer's RECV[count..] = SEND
    store.src = {HCOMM_BUF_SEND, 0};
    store.dst = {HCOMM_BUF_RECV, bytes};
    wait_for(store, {1});
    s->steps.push_back(store);
    hcomm_step_t done = mapped_step(HCOMM_STEP_SIGNAL, p, 1, 0);  // 4: done with the peer's buffers, in 3 signals
    done.nchunks = 3;
    wait_for(done, {2, 3});
    s->steps.push_back(done);
    hcomm_step_t peer_done = mapped_step(HCOMM_STEP_WAIT, p, 1, 0);  // 5
    peer_done.nchunks = 3;
    s->steps.push_back(peer_done);
    pair.add(r, s, 2 * count);
    EXPECT_TRUE(s->mapped);
  }
  for (int call = 0; call < 3; ++call) {
    for (auto& v : pair.recv) std::fill(v.begin(), v.end(), -1);
    pair.run();
    for (int r = 0; r < pair.n; ++r)
      for (size_t i = 0; i < count; ++i) {
        ASSERT_EQ(pair.recv[r][i], pair.send[0][i] + pair.send[1][i]) << "call " << call << " rank " << r << " element " << i;
        ASSERT_EQ(pair.recv[r][count + i], pair.send[1 - r][i]) << "call " << call << " rank " << r << " element " << i;
      }
  }
}

// A RECV published in the window (HCOMM_STEP_PUBLISH) is read there by peers
// that cannot map it, and in place by peers that can, whose owner skips the
// copy; from MappedCall::kWindowCopiesBelow bytes of RECV on, peers that
// cannot map it copy it by address instead, and its owner skips the copy
// too. To tell these apart each rank publishes marks instead of its RECV:
// rank 1 reads rank 0's marks (even ranks map nothing here), or its RECV by
// address, and rank 0 reads rank 1's RECV itself.
void read_published_recv(size_t count, bool through_window) {
  const size_t bytes = count * 4;
  HandWrittenPair pair(count, bytes);
  for (int r = 0; r < pair.n; ++r) {
    const int p = 1 - r;
    auto s = hand_written(count);
    // 0: RECV[0..] = SEND; 1: the marks in RECV[2 bytes..] published for it
    s->steps.push_back(moving(HCOMM_STEP_COPY, -1, bytes, ref(HCOMM_BUF_SEND, 0), ref(HCOMM_BUF_RECV, 0)));
    hcomm_step_t publish =
        moving(HCOMM_STEP_COPY, -1, bytes, ref(HCOMM_BUF_RECV, 2 * bytes), ref(HCOMM_BUF_WINDOW, 0), {0});
    publish.flags = HCOMM_STEP_PUBLISH;
    s->steps.push_back(publish);
    hcomm_step_t ready = mapped_step(HCOMM_STEP_SIGNAL, p, 0, 0);  // 2
    wait_for(ready, {1});
    s->steps.push_back(ready);
    s->steps.push_back(mapped_step(HCOMM_STEP_WAIT, p, 0, 0));  // 3
    // 4: the peer's RECV[0..] into RECV[bytes..]
    s->steps.push_back(moving(HCOMM_STEP_LOAD, p, bytes, ref(HCOMM_BUF_RECV, 0), ref(HCOMM_BUF_RECV, bytes), {3}));
    hcomm_step_t done = mapped_step(HCOMM_STEP_SIGNAL, p, 1, 0);  // 5
    wait_for(done, {4});
    s->steps.push_back(done);
    s->steps.push_back(mapped_step(HCOMM_STEP_WAIT, p, 1, 0));  // 6
    pair.add(r, s, 3 * count);
    EXPECT_TRUE(s->publishes_recv);
  }
  for (int call = 0; call < 3; ++call) {
    for (int r = 0; r < pair.n; ++r) {
      std::fill(pair.recv[r].begin(), pair.recv[r].end(), -1);
      std::fill(pair.recv[r].begin() + 2 * count, pair.recv[r].end(), -2 - r - call);
    }
    const int copies = pair.job.mapped(1).copies;
    pair.run();
    EXPECT_EQ(pair.job.mapped(1).copies, copies + (through_window ? 0 : 1)) << "rank 1's copies by address";
    for (size_t i = 0; i < count; ++i) {
      ASSERT_EQ(pair.recv[1][count + i], through_window ? -2 - call : pair.send[0][i])
          << "call " << call << ": rank 0's " << (through_window ? "window" : "RECV") << ", element " << i;
      ASSERT_EQ(pair.recv[0][count + i], pair.send[1][i]) << "call " << call << ": rank 1's RECV, element " << i;
    }
  }
}

TEST(ExecutorMapped, RecvPublishedInTheWindowIsReadThereOnlyWherePeersCannotMapIt) {
  read_published_recv(1024, true);
}

TEST(ExecutorMapped, ALargeRecvPublishedInTheWindowIsReadByAddress) {
  const size_t smallest = MappedCall::kWindowCopiesBelow / 12 + 1;  // RECV: 3 * 4 bytes an element
  read_published_recv(smallest - 1, true);
  read_published_recv(smallest, false);
}

// PUBLISH is a COPY into the window of bytes that stand for RECV's.
TEST(ExecutorMapped, PublishOutsideACopyIntoTheWindowIsRejected) {
  const size_t count = 16, bytes = count * 4;
  auto rejected = [&](hcomm_step_t step, uint64_t recv_bytes) {
    auto s = hand_written(count);
    step.flags = HCOMM_STEP_PUBLISH;
    s->steps.push_back(step);
    try {
      finalize_schedule(*s, bytes, recv_bytes);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  const hcomm_bufref_t send = ref(HCOMM_BUF_SEND, 0), window = ref(HCOMM_BUF_WINDOW, 0);
  const hcomm_step_t into_recv = moving(HCOMM_STEP_COPY, -1, bytes, send, ref(HCOMM_BUF_RECV, 0));
  const hcomm_step_t past_end = moving(HCOMM_STEP_COPY, -1, bytes, send, ref(HCOMM_BUF_WINDOW, 4));
  const hcomm_step_t load = moving(HCOMM_STEP_LOAD, 1, bytes, ref(HCOMM_BUF_RECV, 0), window);
  EXPECT_NE(rejected(into_recv, bytes).find("dst is not the WINDOW"), std::string::npos);
  EXPECT_NE(rejected(past_end, bytes).find("past its end"), std::string::npos);
  EXPECT_NE(rejected(load, bytes).find("not a COPY"), std::string::npos);
  EXPECT_EQ(rejected(moving(HCOMM_STEP_COPY, -1, bytes, send, window), bytes), "accepted");
}

// A SEND that peers cannot map is copied into its owner's window around the
// bytes the owner's own steps use there (Schedule::own_window_lo/hi): peers
// load the rest of it from the window, the part in that hole by address (it
// still holds the input in SEND, not in the window), and the hole itself as
// the owner wrote it. Rank 0's SEND is copied (MemoryMapped: even ranks map
// nothing), rank 1's is mapped. From MappedCall::kWindowCopiesBelow bytes of
// SEND on, it is not copied: rank 1 loads all of it by address.
void load_send_around_a_hole(size_t count, bool copied) {
  const size_t bytes = count * 4, hole = 1024, after = 2 * hole;  // the hole: bytes [hole, after)
  HandWrittenPair pair(count, std::max<uint64_t>(bytes, 1 << 16));
  for (int r = 0; r < pair.n; ++r) {
    const int p = 1 - r;
    auto s = hand_written(count);
    // 0: RECV's first bytes into the hole
    s->steps.push_back(moving(HCOMM_STEP_COPY, -1, hole, ref(HCOMM_BUF_RECV, 0), ref(HCOMM_BUF_WINDOW, hole)));
    hcomm_step_t ready = mapped_step(HCOMM_STEP_SIGNAL, p, 0, 0);  // 1: the peer may read SEND
    ready.flags = HCOMM_STEP_SEND_READY;
    wait_for(ready, {0});
    s->steps.push_back(ready);
    s->steps.push_back(mapped_step(HCOMM_STEP_WAIT, p, 0, 0));  // 2
    // 3-5: the peer's SEND before, in and after the hole into RECV[bytes..]; 6: its hole into RECV[2 bytes..]
    for (auto [src, at, size] : {std::tuple{ref(HCOMM_BUF_SEND, 0), bytes, hole},
                                 std::tuple{ref(HCOMM_BUF_SEND, hole), bytes + hole, after - hole},
                                 std::tuple{ref(HCOMM_BUF_SEND, after), bytes + after, bytes - after},
                                 std::tuple{ref(HCOMM_BUF_WINDOW, hole), 2 * bytes, after - hole}})
      s->steps.push_back(moving(HCOMM_STEP_LOAD, p, size, src, ref(HCOMM_BUF_RECV, at), {2}));
    hcomm_step_t done = mapped_step(HCOMM_STEP_SIGNAL, p, 1, 0);  // 7
    wait_for(done, {3, 4, 5, 6});
    s->steps.push_back(done);
    s->steps.push_back(mapped_step(HCOMM_STEP_WAIT, p, 1, 0));  // 8
    // Loading the peer's SEND says nothing of this rank's own: the signal does.
    Schedule unflagged = *s;
    unflagged.steps[1].flags = 0;
    finalize_schedule(unflagged, bytes, (2 * count + hole / 4) * 4);
    EXPECT_FALSE(unflagged.peers_read_send);
    pair.add(r, s, 2 * count + hole / 4);
    EXPECT_TRUE(s->peers_read_send);
    EXPECT_EQ(s->own_window_lo, hole);
    EXPECT_EQ(s->own_window_hi, after);
    EXPECT_FALSE(s->stores_to_windows);
    EXPECT_LT(s->window_base, bytes);  // the peer's window is read below the end of SEND
  }
  for (int call = 0; call < 3; ++call) {
    for (int r = 0; r < pair.n; ++r) {
      std::fill(pair.recv[r].begin(), pair.recv[r].end(), -1);
      std::fill_n(pair.recv[r].begin(), hole / 4, -2 - r);  // what rank r writes into its hole
    }
    const int copies = pair.job.mapped(1).copies;
    pair.run();
    EXPECT_EQ(pair.job.mapped(1).copies, copies + (copied ? 1 : 3))
        << "rank 1 loads rank 0's SEND by address " << (copied ? "only in the hole" : "in each of its three loads");
    for (int r = 0; r < pair.n; ++r) {
      const int p = 1 - r;
      for (size_t i = 0; i < count; ++i)
        ASSERT_EQ(pair.recv[r][count + i], pair.send[p][i]) << "call " << call << " rank " << r << " element " << i;
      for (size_t i = 0; i < hole / 4; ++i)
        ASSERT_EQ(pair.recv[r][2 * count + i], -2 - p) << "call " << call << " rank " << r << " hole element " << i;
    }
  }
}

TEST(ExecutorMapped, SendCopiedAroundTheWindowBytesItsOwnerUses) { load_send_around_a_hole(1024, true); }

TEST(ExecutorMapped, ALargeSendIsLoadedByAddress) {
  load_send_around_a_hole(MappedCall::kWindowCopiesBelow / 4 - 1, true);
  load_send_around_a_hole(MappedCall::kWindowCopiesBelow / 4, false);
}

// Direct allreduces run in order (Schedule::in_order) unless they go through
// the windows in pieces, where round j + 1 signals before round j's waits
// end; the tests above run both kinds.
TEST(ExecutorMapped, DirectAllreducesRunInOrderUnlessInPieces) {
  const uint32_t through_windows = HCOMM_VIEW_MAPPED,
                 every_path = HCOMM_VIEW_MAPPED | HCOMM_VIEW_PEER_BUFFERS | HCOMM_VIEW_SIGNAL_PAYLOAD;
  for (const char* algorithm : {"one_shot", "two_shot"})
    for (int n : {2, 3, 5})
      for (uint32_t flags : {through_windows, every_path})
        for (size_t count : {size_t{7}, size_t{100}, size_t{3000}, size_t{100000}}) {
          hcomm_comm_view_t view{.size = sizeof view, .rank = n - 1, .nranks = n, .link = {1, 1e-4, 1e-5},
                                 .flags = flags, .window_bytes = 4096, .mapped = {1, 1e-4, 1e-5}};
          view.chunk_bytes = 1 << 20;
          algorithm::Selector sel(view, algorithm::parse_tune(std::string("allreduce:@") + algorithm),
                                  algorithm::registry());
          hcomm_coll_args_t args{.size = sizeof args, .coll = HCOMM_COLL_ALLREDUCE, .count = count,
                                 .dtype = HCOMM_FLOAT32, .dtype_size = 4, .op = HCOMM_SUM, .mem_kind = HCOMM_MEM_HOST};
          const bool pieces = flags == through_windows && count * 4 > 4096;
          EXPECT_EQ(sel.build(args)->in_order, !pieces) << algorithm << ", " << n << " ranks, " << count << " floats";
        }
}

// Ranks store their result into each other's RECV from 256 KiB on, and,
// where their caches are apart (HCOMM_VIEW_CACHES_APART), push their input's
// slices into each other's windows where the slices fit a window (stores in
// place of loads, in order); every element right, in place too, mapped or
// copied by address, on 2, 3 and 5 ranks.
TEST(ExecutorMapped, RanksPushSlicesThatFitTheWindow) {
  const uint64_t window = 1 << 20;
  const uint32_t shared = HCOMM_VIEW_MAPPED | HCOMM_VIEW_PEER_BUFFERS | HCOMM_VIEW_SIGNAL_PAYLOAD,
                 apart = shared | HCOMM_VIEW_CACHES_APART;
  for (int n : {2, 3, 5}) {
    MappedJob job(n, window);
    for (size_t count : {size_t{65535}, size_t{65536}, size_t{65536 + 7}, size_t{300001}, size_t{600001}})
      for (bool in_place : {false, true})
        for (uint64_t chunk : {uint64_t{100000}, uint64_t{512} * 1024})
          for (auto [dtype, op] : {std::pair{HCOMM_FLOAT32, HCOMM_SUM}, std::pair{HCOMM_INT64, HCOMM_MAX},
                                   std::pair{HCOMM_FLOAT16, HCOMM_AVG}})
            for (uint32_t flags : {shared, apart})
              job.check({.algorithm = "two_shot", .nranks = n, .count = count, .dtype = dtype, .op = op,
                         .in_place = in_place, .chunk_bytes = chunk, .flags = flags});
  }
  for (int n : {2, 3})
    for (uint32_t flags : {shared, apart})
      for (size_t count : {size_t{65535}, size_t{65536}, size_t{n * window / 4 / (n - 1)},
                           size_t{n * window / 4 / (n - 1) + 16}, size_t{4 * window}}) {
        hcomm_comm_view_t view{.size = sizeof view, .rank = 0, .nranks = n, .link = {1, 1e-4, 1e-5},
                               .flags = flags, .window_bytes = window, .mapped = {1, 1e-4, 1e-5}};
        view.chunk_bytes = 1 << 20;
        algorithm::Selector sel(view, algorithm::parse_tune("allreduce:@two_shot"), algorithm::registry());
        hcomm_coll_args_t args{.size = sizeof args, .coll = HCOMM_COLL_ALLREDUCE, .count = count,
                               .dtype = HCOMM_FLOAT32, .dtype_size = 4, .op = HCOMM_SUM, .mem_kind = HCOMM_MEM_HOST};
        const auto schedule = sel.build(args);
        const auto stores_into = [&](uint32_t buffer) {
          return std::any_of(schedule->steps.begin(), schedule->steps.end(), [&](const hcomm_step_t& s) {
            return s.kind == HCOMM_STEP_STORE && s.dst.buffer == buffer;
          });
        };
        // Results from 256 KiB; inputs, where caches are apart, up to the
        // largest count whose n - 1 slots fill the window exactly, and no more.
        EXPECT_EQ(stores_into(HCOMM_BUF_RECV), count >= 65536) << n << " ranks, " << count << " floats";
        EXPECT_EQ(stores_into(HCOMM_BUF_WINDOW), flags == apart && count >= 65536 && count <= n * window / 4 / (n - 1))
            << n << " ranks, " << count << " floats, flags " << flags;
        EXPECT_TRUE(schedule->in_order) << n << " ranks, " << count << " floats";
      }
}

// The selector's choice for small calls on one host: one_shot, except for
// the rooted collectives on more ranks than cores (HCOMM_VIEW_OVERSUBSCRIBED),
// where their ranks that run ahead would hold the CPUs the others need.
TEST(ExecutorMapped, RootedOneShotIsLeftToOthersOnMoreRanksThanCores) {
  for (bool oversubscribed : {false, true})
    for (hcomm_coll_t coll : {HCOMM_COLL_ALLREDUCE, HCOMM_COLL_BROADCAST, HCOMM_COLL_REDUCE, HCOMM_COLL_ALLGATHER,
                              HCOMM_COLL_BARRIER}) {
      const uint32_t flags = HCOMM_VIEW_MAPPED | HCOMM_VIEW_PEER_BUFFERS | HCOMM_VIEW_SIGNAL_PAYLOAD |
                             (oversubscribed ? uint32_t{HCOMM_VIEW_OVERSUBSCRIBED} : 0u);
      hcomm_comm_view_t view{.size = sizeof view, .rank = 0, .nranks = 4, .link = {2, 1e-4, 1e-5}, .flags = flags,
                             .window_bytes = 1 << 20, .mapped = {0.2, 1e-4, 1e-5}};
      view.chunk_bytes = 1 << 20;
      algorithm::Selector sel(view, algorithm::parse_tune(""), algorithm::registry());
      hcomm_coll_args_t args{.size = sizeof args, .coll = coll, .count = coll == HCOMM_COLL_BARRIER ? 0u : 2u,
                             .dtype = HCOMM_FLOAT32, .dtype_size = 4, .op = HCOMM_SUM, .mem_kind = HCOMM_MEM_HOST};
      const bool rooted = coll == HCOMM_COLL_BROADCAST || coll == HCOMM_COLL_REDUCE;
      const std::string chosen = sel.build(args)->algorithm;
      if (oversubscribed && rooted)
        EXPECT_NE(chosen, "one_shot") << "collective " << coll;
      else
        EXPECT_EQ(chosen, "one_shot") << "collective " << coll << (oversubscribed ? ", oversubscribed" : "");
    }
}

// A signal that waits for nothing is raised while a WAIT before it is still
// open: each rank waits for the other's signal, which comes after its wait.
TEST(ExecutorMapped, SignalAfterAnOpenWaitIsRaisedAtOnce) {
  const int n = 2;
  MappedJob job(n, 1024);
  std::vector<std::shared_ptr<Schedule>> schedules;
  std::vector<Buffers> buffers;
  std::vector<std::vector<int32_t>> send(n, std::vector<int32_t>(4)), recv(n, std::vector<int32_t>(4, -1));
  for (int r = 0; r < n; ++r) {
    send[r] = {r, r + 10, r + 20, r + 30};
    auto s = std::make_shared<Schedule>();
    s->algorithm = "hand-written";
    s->args = {.size = sizeof(hcomm_coll_args_t), .coll = HCOMM_COLL_ALLREDUCE, .count = 4, .dtype = HCOMM_INT32,
               .dtype_size = 4, .op = HCOMM_SUM, .mem_kind = HCOMM_MEM_HOST};
    hcomm_step_t wait = mapped_step(HCOMM_STEP_WAIT, 1 - r, 0, 16);  // 0: the peer's input, in RECV
    wait.dst = {HCOMM_BUF_RECV, 0};
    hcomm_step_t signal = mapped_step(HCOMM_STEP_SIGNAL, 1 - r, 0, 16);  // 1: this rank's, waiting for nothing
    signal.src = {HCOMM_BUF_SEND, 0};
    s->steps = {wait, signal};
    finalize_schedule(*s, 16, 16);
    EXPECT_FALSE(s->in_order);
    schedules.push_back(s);
    buffers.push_back({.send = send[r].data(), .recv = recv[r].data(), .scratch = nullptr});
  }
  job.run(schedules, buffers);
  for (int r = 0; r < n; ++r) EXPECT_EQ(recv[r], send[1 - r]) << "rank " << r;
}

// A call whose steps only signal may begin while a peer is up to
// window::kLaps - 1 calls behind (its flags' lines and publication are its
// lap's); one that uses a window half waits until every peer finished the
// call 2 before it, which read that half.
TEST(ExecutorMapped, CallsThatOnlySignalRunLapsAhead) {
  Windows windows(2, 1024);
  MemoryMapped rank0(windows, 0, 2);
  std::vector<int32_t> send(2, 7), recv(2, 0);
  const Buffers buffers{.send = send.data(), .recv = recv.data(), .scratch = nullptr};
  const auto schedule = [](bool half) {
    Schedule s;
    s.algorithm = "hand-written";
    s.args = {.size = sizeof(hcomm_coll_args_t), .coll = HCOMM_COLL_BROADCAST, .count = 2, .dtype = HCOMM_INT32,
              .dtype_size = 4, .mem_kind = HCOMM_MEM_HOST};
    hcomm_step_t signal = mapped_step(HCOMM_STEP_SIGNAL, 1, 0, 8);  // the data in the signal
    signal.src = {HCOMM_BUF_SEND, 0};
    hcomm_step_t copy = {.kind = HCOMM_STEP_COPY, .src = {HCOMM_BUF_SEND, 0}, .dst = {HCOMM_BUF_WINDOW, 0},
                         .bytes = 8, .nchunks = 1};
    if (half)
      s.steps = {copy, mapped_step(HCOMM_STEP_SIGNAL, 1, 0, 0)};
    else
      s.steps = {signal};
    finalize_schedule(s, 8, 8);
    return s;
  };
  const Schedule signals = schedule(false), halves = schedule(true);
  EXPECT_FALSE(signals.uses_halves);
  EXPECT_TRUE(halves.uses_halves);
  // Rank 1 finished nothing: rank 0 begins calls 1..kLaps, not the next.
  // A call that may not begin yet is tried again, as the executor does.
  auto call = std::make_unique<MappedCall>();
  auto begins = [&](const Schedule& s) {
    if (!call->begin(&rank0, s, buffers, 0)) return false;
    call->end();
    call = std::make_unique<MappedCall>();
    return true;
  };
  for (uint64_t c = 1; c <= window::kLaps; ++c) EXPECT_TRUE(begins(signals)) << "call " << c;
  EXPECT_FALSE(begins(signals)) << "call " << window::kLaps + 1 << " reuses the lines of call 1";
  std::atomic<uint64_t>& completed = windows.header(1).completed;
  completed.store(1);
  EXPECT_TRUE(begins(signals)) << "rank 1 finished call 1";
  // Call kLaps + 2 uses a half: rank 1 must have finished call kLaps.
  EXPECT_FALSE(begins(halves));
  completed.store(window::kLaps - 1);
  EXPECT_FALSE(begins(halves));
  completed.store(window::kLaps);
  EXPECT_TRUE(begins(halves));
}

// A payload over several flags' lines arrives whole, whatever its last
// line holds (a part of a line, or a full one), call after call, through
// every lap's lines and again once calls come back to a lap's lines.
TEST(ExecutorMapped, PayloadOverSeveralLinesArrivesWhole) {
  const int n = 2;
  const uint32_t first_match = 3;
  for (size_t count : {size_t{15}, size_t{28}, size_t{29}, size_t{HCOMM_SIGNAL_MAX_PAYLOAD_BYTES / 4}}) {
    MappedJob job(n, 1024);
    const uint64_t bytes = count * 4;
    std::vector<std::shared_ptr<Schedule>> schedules;
    std::vector<Buffers> buffers;
    std::vector<std::vector<int32_t>> send(n, std::vector<int32_t>(count)), recv(n, std::vector<int32_t>(count));
    for (int r = 0; r < n; ++r) {
      auto s = hand_written(count);
      hcomm_step_t signal = mapped_step(HCOMM_STEP_SIGNAL, 1 - r, first_match, bytes);  // 0: this rank's input
      signal.src = {HCOMM_BUF_SEND, 0};
      hcomm_step_t wait = mapped_step(HCOMM_STEP_WAIT, 1 - r, first_match, bytes);  // 1: the peer's, into RECV
      wait.dst = {HCOMM_BUF_RECV, 0};
      s->steps = {signal, wait};
      finalize_schedule(*s, bytes, bytes);
      schedules.push_back(s);
      buffers.push_back({.send = send[r].data(), .recv = recv[r].data(), .scratch = nullptr});
    }
    for (int call = 0; call < static_cast<int>(window::kLaps) + 2; ++call) {
      for (int r = 0; r < n; ++r) {
        for (size_t i = 0; i < count; ++i) send[r][i] = static_cast<int32_t>(call * 1000000 + r * 1000 + i);
        std::fill(recv[r].begin(), recv[r].end(), -1);
      }
      job.run(schedules, buffers);
      for (int r = 0; r < n; ++r)
        for (size_t i = 0; i < count; ++i)
          ASSERT_EQ(recv[r][i], send[1 - r][i])
              << count << " elements, call " << call << ", rank " << r << ", element " << i;
    }
  }
}

// A wait for a payload over several lines ends only once every line is
// raised: the writer raises them in turn, and its reader may see the first
// while the others are still being written.
TEST(ExecutorMapped, PayloadWaitEndsOnceEveryLineIsRaised) {
  const Windows windows(2, 1024);
  MemoryMapped mapped(windows, 1, 2);
  Mailbox box;
  MemoryIO io(box, 1, &mapped);
  const uint32_t match = 5, lines = 3;
  const size_t count = (lines * HCOMM_SIGNAL_PAYLOAD_BYTES - 4) / 4;  // the last line not full
  auto s = hand_written(count);
  hcomm_step_t wait = mapped_step(HCOMM_STEP_WAIT, 0, match, count * 4);
  wait.dst = {HCOMM_BUF_RECV, 0};
  s->steps = {wait};
  finalize_schedule(*s, count * 4, count * 4);
  std::vector<int32_t> send(count), recv(count, -1);
  Operation op(s, Buffers{send.data(), recv.data(), nullptr}, 7, collective_tag_base(7), 2);
  EXPECT_FALSE(op.advance(io)) << "nothing raised yet";
  // Rank 0 raises the lines of this rank's first mapped call (call 1) in turn.
  const auto raise = [&](uint32_t j) {
    window::FlagLine& line = mapped.flag(1, 0, match + j, 1);
    for (size_t b = 0; b < window::kPayloadBytes; ++b) line.payload[b] = static_cast<uint8_t>(j * 64 + b);
    line.value.store(window::flag_value(1, 1), std::memory_order_release);
  };
  for (uint32_t j = 0; j + 1 < lines; ++j) {
    raise(j);
    EXPECT_FALSE(op.advance(io)) << "lines 0.." << j << " of " << lines << " raised";
  }
  raise(lines - 1);
  EXPECT_TRUE(op.advance(io));
  const auto* got = reinterpret_cast<const uint8_t*>(recv.data());
  for (size_t b = 0; b < count * 4; ++b)
    ASSERT_EQ(got[b], static_cast<uint8_t>(b / window::kPayloadBytes * 64 + b % window::kPayloadBytes)) << "byte " << b;
}

// Without mapped memory the direct algorithms decline and the selector's
// next choice serves the call.
TEST(ExecutorMapped, DirectAlgorithmsDeclineWithoutMappedMemory) {
  MappedJob job(3, 1024);
  for (const char* algorithm : {"one_shot", "two_shot"}) {
    const MappedCase c{.algorithm = algorithm, .nranks = 3, .count = 100, .flags = 0};
    job.check(c);
    hcomm_comm_view_t view{.size = sizeof view, .rank = 0, .nranks = 3, .link = {1, 1e-4, 1e-5}};
    view.chunk_bytes = 1024;
    algorithm::Selector sel(view, algorithm::parse_tune(std::string("allreduce:@") + algorithm), algorithm::registry());
    hcomm_coll_args_t args{.size = sizeof args, .coll = HCOMM_COLL_ALLREDUCE, .count = 100, .dtype = HCOMM_FLOAT32,
                           .dtype_size = 4, .op = HCOMM_SUM, .mem_kind = HCOMM_MEM_HOST};
    EXPECT_NE(sel.build(args)->algorithm, algorithm);
  }
}

hcomm_step_t step(hcomm_step_kind_t kind, uint64_t bytes) {
  hcomm_step_t s{};
  s.kind = kind;
  s.bytes = bytes;
  s.nchunks = 1;
  s.src = {HCOMM_BUF_SEND, 0};
  s.dst = {HCOMM_BUF_RECV, 0};
  return s;
}

void expect_rejected(Schedule s, const char* why, uint64_t buffer_bytes = 64) {
  try {
    finalize_schedule(s, buffer_bytes, buffer_bytes);
    ADD_FAILURE() << "accepted a schedule with " << why;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), HCOMM_ERR_INTERNAL);
    EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
  }
}

TEST(Schedule, BrokenSchedulesAreRejected) {
  Schedule base;
  base.algorithm = "test";
  base.args.dtype_size = 4;
  Schedule s = base;
  s.steps = {step(HCOMM_STEP_COPY, 128)};
  expect_rejected(s, "out of range");
  s.steps = {step(HCOMM_STEP_COPY, 6)};
  expect_rejected(s, "whole number of elements");
  s.steps = {step(HCOMM_STEP_COPY, 8), step(HCOMM_STEP_COPY, 8)};
  s.steps[0].ndeps = 1, s.steps[0].deps[0] = 1;
  expect_rejected(s, "backwards");
  s.steps = {step(HCOMM_STEP_COPY, 8), step(HCOMM_STEP_COPY, 8)};
  s.steps[0].nchunks = 2, s.steps[1].ndeps = 1, s.steps[1].deps[0] = 0;
  expect_rejected(s, "another chunk count");
  s.steps = {step(HCOMM_STEP_SEND, 8)};
  s.steps[0].match = 1u << 24;
  expect_rejected(s, "24 bits");
  s.steps = {step(HCOMM_STEP_SIGNAL, 0)};
  s.steps[0].peer = 1, s.steps[0].match = HCOMM_MAX_SIGNALS;
  expect_rejected(s, "HCOMM_MAX_SIGNALS");
  s.steps = {step(HCOMM_STEP_LOAD, 8)};
  s.steps[0].peer = -1;
  expect_rejected(s, "names no peer");
  s.steps = {step(HCOMM_STEP_LOAD, 8)};
  s.steps[0].peer = 1, s.steps[0].src = {HCOMM_BUF_SCRATCH, 0};
  expect_rejected(s, "a peer's buffer");
  s.steps = {step(HCOMM_STEP_STORE, 8)};
  s.steps[0].peer = 1, s.steps[0].dst = {7, 0};
  expect_rejected(s, "a peer's buffer");
}

// A payload fits in the lines of HCOMM_SIGNAL_MAX_LINES flags below
// HCOMM_MAX_SIGNALS, travels in one chunk, and is the only signal of its
// peer and of every match it spans in the call (ExecutorMapped's one-shot
// calls carry payloads through the executor).
TEST(Schedule, SignalPayloadsAreChecked) {
  Schedule s;
  s.algorithm = "test";
  s.args.dtype_size = 4;
  s.steps = {step(HCOMM_STEP_SIGNAL, HCOMM_SIGNAL_MAX_PAYLOAD_BYTES + 4)};
  s.steps[0].peer = 1;
  expect_rejected(s, "exceeds HCOMM_SIGNAL_MAX_PAYLOAD_BYTES", 512);
  s.steps = {step(HCOMM_STEP_WAIT, 2 * HCOMM_SIGNAL_PAYLOAD_BYTES + 4)};  // three lines
  s.steps[0].peer = 1, s.steps[0].match = HCOMM_MAX_SIGNALS - 2;
  expect_rejected(s, "at or above HCOMM_MAX_SIGNALS", 256);
  s.steps[0].match = HCOMM_MAX_SIGNALS - 3;
  EXPECT_NO_THROW(finalize_schedule(s, 256, 256));
  s.steps = {step(HCOMM_STEP_SIGNAL, 2 * HCOMM_SIGNAL_PAYLOAD_BYTES + 4), step(HCOMM_STEP_SIGNAL, 0)};
  s.steps[0].peer = s.steps[1].peer = 1, s.steps[1].match = 2;  // the payload's third line
  expect_rejected(s, "the only one of its peer and match", 256);
  s.steps[1].match = 3;  // past the payload: fine
  EXPECT_NO_THROW(finalize_schedule(s, 256, 256));
  s.steps = {step(HCOMM_STEP_WAIT, 0), step(HCOMM_STEP_WAIT, 2 * HCOMM_SIGNAL_PAYLOAD_BYTES)};
  s.steps[0].peer = s.steps[1].peer = 1, s.steps[0].match = 1;  // the second line of the payload after it
  expect_rejected(s, "the only one of its peer and match", 256);
  s.steps = {step(HCOMM_STEP_SIGNAL, 8)};
  s.steps[0].peer = 1, s.steps[0].nchunks = 2;
  expect_rejected(s, "more than one chunk");
  s.steps = {step(HCOMM_STEP_SIGNAL, 8), step(HCOMM_STEP_SIGNAL, 0)};
  s.steps[0].peer = s.steps[1].peer = 1;
  expect_rejected(s, "the only one of its peer and match");
  s.steps = {step(HCOMM_STEP_WAIT, 0), step(HCOMM_STEP_WAIT, 8)};
  s.steps[0].peer = s.steps[1].peer = 1;
  expect_rejected(s, "the only one of its peer and match");
  s.steps = {step(HCOMM_STEP_SIGNAL, 8), step(HCOMM_STEP_SIGNAL, 8)};
  s.steps[0].peer = 1, s.steps[1].peer = 1, s.steps[1].match = 1;  // another match: fine
  EXPECT_NO_THROW(finalize_schedule(s, 64, 64));
}

// A schedule of `steps` over 64-byte buffers, finalised.
Schedule finalized(std::vector<hcomm_step_t> steps) {
  Schedule s;
  s.algorithm = "test";
  s.args.dtype_size = 4;
  s.steps = std::move(steps);
  finalize_schedule(s, 64, 64);
  return s;
}

// The steps may run in index order where every signal waits, through its
// dependencies (or the signal before it of its pair), for every WAIT before it.
TEST(Schedule, InOrderWhereEverySignalFollowsTheWaitsBeforeIt) {
  auto in_order = [](std::vector<hcomm_step_t> steps) { return finalized(std::move(steps)).in_order; };
  const hcomm_step_t signal = mapped_step(HCOMM_STEP_SIGNAL, 1, 0, 0), wait = mapped_step(HCOMM_STEP_WAIT, 1, 0, 0);
  hcomm_step_t after_wait = signal;
  wait_for(after_wait, {0});
  EXPECT_TRUE(in_order({signal, wait, step(HCOMM_STEP_COPY, 8)}));
  EXPECT_FALSE(in_order({wait, signal}));
  EXPECT_TRUE(in_order({wait, after_wait}));
  EXPECT_FALSE(in_order({step(HCOMM_STEP_SEND, 8), signal}));
  // The second signal of a pair is raised after the first, which waited.
  EXPECT_TRUE(in_order({wait, after_wait, signal}));
  hcomm_step_t other_match = signal;
  other_match.match = 1;
  EXPECT_FALSE(in_order({wait, after_wait, other_match}));
  // Waits beyond one word of bits: a chain of copies, each after one wait.
  for (int skipped : {-1, 3, 64, 69}) {
    std::vector<hcomm_step_t> steps;
    int32_t chain = -1;
    for (int w = 0; w < 70; ++w) {
      hcomm_step_t wait_w = mapped_step(HCOMM_STEP_WAIT, 1, 0, 0);
      steps.push_back(wait_w);
      hcomm_step_t link = step(HCOMM_STEP_COPY, 8);
      if (w != skipped) wait_for(link, {static_cast<int32_t>(steps.size() - 1)});
      if (chain >= 0) wait_for(link, {chain});
      chain = static_cast<int32_t>(steps.size());
      steps.push_back(link);
    }
    hcomm_step_t last = signal;
    wait_for(last, {chain});
    steps.push_back(last);
    EXPECT_EQ(in_order(steps), skipped < 0) << "wait " << skipped << " left out of the chain";
  }
}

// Data steps of several chunks, each combining the chunk the one before it
// made, run chunk by chunk (Schedule::chain_end), with the WAITs among them
// first, as reduce_from_all builds them; anything else ends the chain.
TEST(Schedule, ChunkwiseChainsOfDataStepsRunChunkByChunk) {
  const auto chunks = [](hcomm_step_t s, std::initializer_list<int32_t> chunkwise = {}) {
    s.nchunks = 4;
    for (int32_t d : chunkwise) s.deps[s.ndeps++] = d;
    return s;
  };
  const auto ends = [](std::vector<hcomm_step_t> steps) { return finalized(std::move(steps)).chain_end; };
  const hcomm_step_t load = mapped_step(HCOMM_STEP_LOAD_REDUCE, 1, 0, 64), wait = mapped_step(HCOMM_STEP_WAIT, 2, 0, 0);
  hcomm_step_t second = chunks(load, {0}), third = chunks(load, {2});
  second.peer = third.peer = 2;
  wait_for(second, {1});
  wait_for(third, {1});
  hcomm_step_t signal = mapped_step(HCOMM_STEP_SIGNAL, 1, 0, 0);
  wait_for(signal, {3});
  using Ends = std::vector<uint32_t>;
  EXPECT_EQ(ends({chunks(load), wait, second, third, signal}), (Ends{4, 2, 4, 4, 5}));
  // A step of one chunk starts none.
  hcomm_step_t single = second;
  single.nchunks = 1, single.ndeps = 0, single.whole_deps = 0;
  EXPECT_EQ(ends({load, wait, single}), (Ends{1, 2, 3}));
  // A whole dependency on a data step of the chain, a WAIT that depends on
  // one, or a step that does not depend chunkwise on the one before it.
  hcomm_step_t whole = second;
  wait_for(whole, {0});
  EXPECT_EQ(ends({chunks(load), wait, whole}), (Ends{1, 2, 3}));
  hcomm_step_t late_wait = wait;
  wait_for(late_wait, {0});
  EXPECT_EQ(ends({chunks(load), late_wait, second}), (Ends{1, 2, 3}));
  EXPECT_EQ(ends({chunks(load), wait, chunks(load)}), (Ends{1, 2, 3}));
  hcomm_step_t skips = chunks(load, {0});
  EXPECT_EQ(ends({chunks(load), chunks(load, {0}), skips}), (Ends{2, 2, 3}));
}

TEST(Schedule, ChunksCoverTheStepExactly) {
  hcomm_step_t s = step(HCOMM_STEP_SEND, 4 * 1027);
  for (uint32_t n : {1u, 2u, 3u, 7u, 1027u}) {
    s.nchunks = n;
    uint64_t next = 0;
    for (uint32_t c = 0; c < n; ++c) {
      uint64_t off, bytes;
      Schedule::chunk_range(s, 4, c, &off, &bytes);
      EXPECT_EQ(off, next);
      EXPECT_EQ(bytes % 4, 0u);
      next = off + bytes;
    }
    EXPECT_EQ(next, s.bytes);
  }
}

}  // namespace
}  // namespace hcomm::exec
