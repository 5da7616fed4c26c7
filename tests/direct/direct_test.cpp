// Runs under hcomm-run, with HCOMM_TUNE forcing one direct algorithm:
//
//   hcomm_direct_test ALGORITHM [blocks]
//
// Allreduces of every size class (0, 1, 7 and 1027 elements, a quarter of the
// window, just under and over it, several windows, 1M+5 elements) on buffers
// from malloc, from hcomm_mem_alloc, registered with hcomm_mem_register, and
// from malloc on even ranks and hcomm_mem_alloc on odd ones, in place and not,
// over a spread of dtypes and ops; each call runs twice (the second finds the
// registrations and mappings of the first). Every element of every result is
// checked against the exactly known values of values.hpp, and each
// call must have run ALGORITHM. With `blocks`: reduce_scatter(_v) and
// allgather(v) instead, with blocks where the selector takes ALGORITHM for
// them. Exits non-zero if anything was wrong.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "hcomm/hcomm.h"
#include "tools/hcomm-perf/values.hpp"

namespace {

// kMixed: malloc on even ranks, hcomm_mem_alloc on odd ones, so that peers
// read some ranks' buffers in place and others' through their windows.
enum class Memory { kMalloc, kAllocated, kRegistered, kMixed };
const char* memory_name(Memory m) {
  return m == Memory::kMalloc      ? "malloc"
         : m == Memory::kAllocated ? "hcomm_mem_alloc"
         : m == Memory::kRegistered ? "registered"
                                    : "mixed (malloc on even ranks, hcomm_mem_alloc on odd)";
}

struct Job {
  hcomm_comm_t comm = nullptr;
  int rank = 0, size = 1;
  int failures = 0;

  [[noreturn]] void fatal(const std::string& what, hcomm_result_t rc) const {
    std::fprintf(stderr, "rank %d of %d: %s failed: %s: %s\n", rank, size, what.c_str(), hcomm_result_string(rc),
                 hcomm_get_last_error());
    std::exit(1);
  }
  void check(hcomm_result_t rc, const std::string& what) const {
    if (rc != HCOMM_SUCCESS) fatal(what, rc);
  }
  void wrong(const std::string& what) {
    std::fprintf(stderr, "rank %d of %d: WRONG: %s\n", rank, size, what.c_str());
    ++failures;
  }
};

// A buffer of one kind of memory; registered buffers are deregistered and
// freed when it goes.
class Buffer {
 public:
  Buffer(Job& job, Memory memory, size_t bytes)
      : job_(job), memory_(memory == Memory::kMixed ? (job.rank % 2 ? Memory::kAllocated : Memory::kMalloc) : memory) {
    const size_t at_least = bytes ? bytes : 1;
    if (memory_ == Memory::kAllocated) {
      job.check(hcomm_mem_alloc(&data_, at_least), "hcomm_mem_alloc");
      return;
    }
    data_ = std::malloc(at_least);
    if (!data_) job.fatal("malloc", HCOMM_ERR_SYSTEM);
    if (memory_ == Memory::kRegistered)
      job.check(hcomm_mem_register(job.comm, data_, at_least, &handle_), "hcomm_mem_register");
  }
  ~Buffer() {
    if (memory_ == Memory::kAllocated) {
      job_.check(hcomm_mem_free(data_), "hcomm_mem_free");
      return;
    }
    if (handle_) job_.check(hcomm_mem_deregister(job_.comm, handle_), "hcomm_mem_deregister");
    std::free(data_);
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  void* data() const { return data_; }

 private:
  Job& job_;
  Memory memory_;
  void* data_ = nullptr;
  void* handle_ = nullptr;
};

struct Work {
  hcomm_dtype_t dtype;
  hcomm_op_t op;
};

void run_case(Job& job, const char* algorithm, Memory memory, size_t count, Work w, bool in_place) {
  const size_t es = hcomm_dtype_size(w.dtype), bytes = count * es;
  const std::string what = std::string(algorithm) + " allreduce of " + std::to_string(count) + " " +
                           hcomm_dtype_name(w.dtype) + " " + hcomm_op_name(w.op) + " on " + memory_name(memory) +
                           " buffers" + (in_place ? ", in place" : "");
  if (count) {
    const char* used = nullptr;
    job.check(hcomm_comm_query_algorithm(job.comm, HCOMM_COLL_ALLREDUCE, count, w.dtype, &used),
              "hcomm_comm_query_algorithm");
    if (!used || std::strcmp(used, algorithm) != 0) job.wrong(what + ": the selector chose " + (used ? used : "none"));
  }
  Buffer recv(job, memory, bytes), send(job, memory, in_place ? 0 : bytes);
  void* input = in_place ? recv.data() : send.data();
  std::vector<uint8_t> expected(bytes), original(bytes);
  hcomm::perf::fill_reduction({w.dtype, w.op, job.size, job.rank, 0}, input, expected.data(), count);
  if (bytes) std::memcpy(original.data(), input, bytes);
  for (int repeat = 0; repeat < 2; ++repeat) {
    if (in_place && repeat && bytes) std::memcpy(input, original.data(), bytes);
    if (!in_place) hcomm::perf::write_complement(recv.data(), expected.data(), bytes);
    job.check(hcomm_allreduce(input, recv.data(), count, w.dtype, w.op, job.comm, nullptr), what);
    const hcomm::perf::Mismatch m = hcomm::perf::compare_elements(recv.data(), expected.data(), count, es);
    if (m.wrong)
      job.wrong(what + " (call " + std::to_string(repeat + 1) + "): " + std::to_string(m.wrong) +
                " wrong elements, the first at " + std::to_string(m.first_index));
    if (!in_place && bytes && std::memcmp(send.data(), original.data(), bytes) != 0) job.wrong(what + ": the input changed");
  }
}

// A collective of per-rank blocks that ALGORITHM reads from the peers'
// buffers (reduce_scatter(_v), allgather(v)) with blocks of about
// `block_bytes`, in place or not. The v forms' blocks differ in size (on
// more than 2 ranks rank 1's is empty), and allgatherv's lie apart, with
// the gaps checked untouched.
void run_blocks_case(Job& job, const char* algorithm, Memory memory, hcomm_coll_t coll, size_t block_bytes, Work w,
                     bool in_place) {
  const size_t es = hcomm_dtype_size(w.dtype), n = static_cast<size_t>(job.size), me = static_cast<size_t>(job.rank);
  const bool variable = coll == HCOMM_COLL_REDUCE_SCATTER_V || coll == HCOMM_COLL_ALLGATHERV;
  const bool reduces = coll == HCOMM_COLL_REDUCE_SCATTER || coll == HCOMM_COLL_REDUCE_SCATTER_V;
  const size_t count = block_bytes / es + 3;
  // The v forms' blocks as many elements in all: rank 1's empty on more than
  // 2 ranks (rank 0's twice as large), the others 3r shorter (rank 0's longer).
  std::vector<size_t> counts(n, count), displs(n);
  for (size_t r = 1; r < n && variable; ++r) {
    const size_t less = n > 2 && r == 1 ? count : 3 * r;
    counts[r] -= less;
    counts[0] += less;
  }
  size_t extent = 0;
  for (size_t r = 0; r < n; ++r) {
    displs[r] = extent + (coll == HCOMM_COLL_ALLGATHERV ? 3 * r : 0);  // gaps of 3 elements before block r > 0
    extent = displs[r] + counts[r];
  }
  const char* names[] = {"reduce_scatter", "reduce_scatter_v", "allgather", "allgatherv"};
  const std::string what = std::string(algorithm) + " " + names[reduces ? variable : 2 + variable] + " of blocks of " +
                           std::to_string(count) + " " + hcomm_dtype_name(w.dtype) +
                           (reduces ? std::string(" ") + hcomm_op_name(w.op) : "") + " on " + memory_name(memory) +
                           " buffers" + (in_place ? ", in place" : "");
  {
    // The v forms' blocks hold n * count elements in all, as the equal
    // blocks of count the query asks about: the selector's choice for both.
    const char* used = nullptr;
    job.check(hcomm_comm_query_algorithm(job.comm, coll, count, w.dtype, &used), "hcomm_comm_query_algorithm");
    if (!used || std::strcmp(used, algorithm) != 0) job.wrong(what + ": the selector chose " + (used ? used : "none"));
  }
  // The whole input of a reduce-scatter (the blocks packed) or the whole
  // result of an allgather; the expected values of each.
  const size_t whole = reduces ? displs[n - 1] + counts[n - 1] : extent;
  const size_t mine = counts[me];
  std::vector<uint8_t> expected(whole * es), input(reduces ? whole * es : mine * es);
  const hcomm::perf::DataSpec spec{w.dtype, w.op, job.size, job.rank, 0};
  if (reduces) {
    hcomm::perf::write_reduction_input(spec, input.data(), whole);
    hcomm::perf::write_reduction_result(spec, expected.data(), displs[me], mine);  // this rank's block, at 0
  } else {
    for (size_t r = 0; r < n; ++r)
      hcomm::perf::write_block(w.dtype, expected.data() + displs[r] * es, counts[r],
                               hcomm::perf::block_key(static_cast<int>(r), 0, job.size));
    if (mine) std::memcpy(input.data(), expected.data() + displs[me] * es, mine * es);
  }
  const size_t result_elems = reduces ? mine : extent;
  Buffer recv(job, memory, (reduces && in_place ? whole : result_elems) * es);
  Buffer send(job, memory, in_place ? 0 : input.size());
  auto* base = static_cast<uint8_t*>(recv.data());
  // In place, the input lies in RECV: a reduce-scatter's whole, an
  // allgather's own block where the result puts it.
  uint8_t* input_at = !in_place ? static_cast<uint8_t*>(send.data()) : reduces ? base : base + displs[me] * es;
  uint8_t* result_at = in_place && reduces ? base + displs[me] * es : base;
  for (int repeat = 0; repeat < 2; ++repeat) {
    if (reduces) {
      if (!in_place) hcomm::perf::write_complement(result_at, expected.data(), mine * es);
    } else {
      // Every element unlike the result; the gaps' bytes, which the call must
      // leave, expected as they are.
      hcomm::perf::write_complement(base, expected.data(), extent * es);
      for (size_t r = 1; r < n; ++r) {
        const size_t gap = displs[r - 1] + counts[r - 1];
        if (displs[r] > gap) std::memcpy(expected.data() + gap * es, base + gap * es, (displs[r] - gap) * es);
      }
    }
    if (!input.empty()) std::memcpy(input_at, input.data(), input.size());
    hcomm_result_t rc = HCOMM_SUCCESS;
    switch (coll) {
      case HCOMM_COLL_REDUCE_SCATTER:
        rc = hcomm_reduce_scatter(input_at, result_at, count, w.dtype, w.op, job.comm, nullptr);
        break;
      case HCOMM_COLL_REDUCE_SCATTER_V:
        rc = hcomm_reduce_scatter_v(input_at, result_at, counts.data(), w.dtype, w.op, job.comm, nullptr);
        break;
      case HCOMM_COLL_ALLGATHER: rc = hcomm_allgather(input_at, base, count, w.dtype, job.comm, nullptr); break;
      default: rc = hcomm_allgatherv(input_at, base, counts.data(), displs.data(), w.dtype, job.comm, nullptr); break;
    }
    job.check(rc, what);
    const std::string call = what + " (call " + std::to_string(repeat + 1) + ")";
    const size_t checked = reduces ? mine : extent;
    const hcomm::perf::Mismatch m =
        hcomm::perf::compare_elements(reduces ? result_at : base, expected.data(), checked, es);
    if (m.wrong) job.wrong(call + ": " + std::to_string(m.wrong) + " wrong elements, the first at " +
                           std::to_string(m.first_index));
    if (!in_place && !input.empty() && std::memcmp(send.data(), input.data(), input.size()) != 0)
      job.wrong(call + ": the input changed");
  }
}

size_t window_bytes() {
  const char* text = std::getenv("HCOMM_WINDOW_BYTES");
  if (!text || !*text) return size_t{1} << 20;
  char* unit = nullptr;
  size_t n = std::strtoull(text, &unit, 10);
  return *unit == 'K' || *unit == 'k' ? n << 10 : *unit == 'M' || *unit == 'm' ? n << 20 : n;
}

// Allreduces of every size class (see the top).
void run_allreduces(Job& job, const char* algorithm) {
  const size_t window = window_bytes();
  const Work works[] = {{HCOMM_FLOAT32, HCOMM_SUM}, {HCOMM_INT32, HCOMM_MAX}, {HCOMM_FLOAT64, HCOMM_AVG},
                        {HCOMM_UINT8, HCOMM_PROD}, {HCOMM_BFLOAT16, HCOMM_MIN}, {HCOMM_INT64, HCOMM_SUM}};
  for (Memory memory : {Memory::kMalloc, Memory::kAllocated, Memory::kRegistered, Memory::kMixed}) {
    for (const Work& w : works) {
      const size_t per_window = window / hcomm_dtype_size(w.dtype);
      // 25 and 61 elements travel in one_shot's signals (one flag's line to five) for most types.
      for (size_t count : {size_t{0}, size_t{1}, size_t{7}, size_t{25}, size_t{61}, size_t{1027}, per_window / 4 + 3,
                           per_window - 1, per_window + 1, 3 * per_window + 5})
        for (bool in_place : {false, true}) run_case(job, algorithm, memory, count, w, in_place);
    }
    for (bool in_place : {false, true})
      run_case(job, algorithm, memory, (size_t{1} << 20) + 5, {HCOMM_FLOAT32, HCOMM_SUM}, in_place);
  }
}

// The collectives of blocks at sizes where the selector takes one_shot for
// them: a reduce-scatter's blocks up to 256 bytes in the signals, and it
// reads larger ones from the peers' buffers (from 8 KiB on 2 ranks), an
// allgather's from 256 KiB
// (plugins/algorithm/direct/one_shot.cpp); a call takes the choice for the
// power of two of bytes at or below its own, so blocks twice those sizes
// (and 100 bytes, whose v forms' largest block is 200), and 2 MiB.
void run_blocks(Job& job, const char* algorithm) {
  const Work works[] = {{HCOMM_FLOAT32, HCOMM_SUM}, {HCOMM_INT64, HCOMM_MAX}, {HCOMM_UINT8, HCOMM_PROD}};
  const size_t reduced[] = {100, size_t{16} << 10, size_t{2} << 20};
  for (Memory memory : {Memory::kMalloc, Memory::kAllocated, Memory::kRegistered, Memory::kMixed})
    for (const Work& w : works)
      for (bool in_place : {false, true}) {
        for (hcomm_coll_t coll : {HCOMM_COLL_REDUCE_SCATTER, HCOMM_COLL_REDUCE_SCATTER_V})
          for (size_t block : reduced) run_blocks_case(job, algorithm, memory, coll, block, w, in_place);
        if (w.op != HCOMM_MAX)  // the reduction's op means nothing to a gather
          for (hcomm_coll_t coll : {HCOMM_COLL_ALLGATHER, HCOMM_COLL_ALLGATHERV})
            for (size_t block : {size_t{512} << 10, size_t{2} << 20})
              run_blocks_case(job, algorithm, memory, coll, block, w, in_place);
      }
}

}  // namespace

int main(int argc, char** argv) {
  const bool blocks = argc == 3 && std::strcmp(argv[2], "blocks") == 0;
  if (argc != 2 && !blocks) {
    std::fprintf(stderr, "usage: hcomm_direct_test ALGORITHM [blocks] (under hcomm-run, with HCOMM_TUNE forcing it)\n");
    return 2;
  }
  const char* algorithm = argv[1];
  Job job;
  job.check(hcomm_comm_init_env(&job.comm), "hcomm_comm_init_env");
  job.check(hcomm_comm_rank(job.comm, &job.rank), "hcomm_comm_rank");
  job.check(hcomm_comm_size(job.comm, &job.size), "hcomm_comm_size");
  if (blocks)
    run_blocks(job, algorithm);
  else
    run_allreduces(job, algorithm);

  uint64_t mine = static_cast<uint64_t>(job.failures), all = 0;
  job.check(hcomm_allreduce(&mine, &all, 1, HCOMM_UINT64, HCOMM_SUM, job.comm, nullptr), "allreduce of failures");
  if (job.rank == 0)
    std::printf("%s %s on %d ranks: %s\n", algorithm, blocks ? "reduce_scatter(_v) and allgather(v)" : "allreduce",
                job.size, all ? (std::to_string(all) + " wrong results (see above)").c_str() : "all correct");
  job.check(hcomm_comm_destroy(job.comm), "hcomm_comm_destroy");
  return all ? 1 : 0;
}
