// The executor running the real algorithm plugins' schedules, one thread per
// rank over in-memory messages, with results checked element by element; and
// the schedule checks that reject broken schedules.
#include <gtest/gtest.h>

#include <deque>
#include <map>
#include <mutex>
#include <thread>
#include <tuple>

#include "core/algorithm/selector.hpp"
#include "core/common/error.hpp"
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
  MemoryIO(Mailbox& box, int rank) : box_(box), rank_(rank) {}
  void* isend(int peer, const void* buf, size_t len, uint64_t tag) override {
    box_.put(rank_, peer, tag, buf, len);
    return new Request{true, nullptr, len, tag};
  }
  void* irecv(int, void* buf, size_t len, uint64_t tag) override { return new Request{false, buf, len, tag}; }
  bool test(int peer, void* request) override {
    auto* r = static_cast<Request*>(request);
    if (!r->send && !box_.take(peer, rank_, r->tag, r->buf, r->len)) return false;
    delete r;
    return true;
  }
  void progress() override {}
  void wait(int64_t) override { std::this_thread::yield(); }
  void check_peers() override {}

 private:
  struct Request {
    bool send;
    void* buf;
    size_t len;
    uint64_t tag;
  };
  Mailbox& box_;
  int rank_;
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
        algorithm::Selector sel(view, {}, algorithm::registry(), c.chunk_bytes);
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

hcomm_step_t step(hcomm_step_kind_t kind, uint64_t bytes) {
  hcomm_step_t s{};
  s.kind = kind;
  s.bytes = bytes;
  s.nchunks = 1;
  s.src = {HCOMM_BUF_SEND, 0};
  s.dst = {HCOMM_BUF_RECV, 0};
  return s;
}

void expect_rejected(Schedule s, const char* why) {
  try {
    finalize_schedule(s, 64, 64);
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
