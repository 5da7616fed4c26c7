// Runs under hcomm-run: an application's allocator, through loops of
// allocate / collectives / free, must keep its promises. HComm must not
// change the semantics of memory it did not allocate: an allocator that
// purges freed memory (madvise(MADV_DONTNEED)) takes it to read as zero
// afterwards and hands it out from calloc without clearing it.
//
//   hcomm_allocator_test ALLOCATOR [--threads N] [--rounds R]
//
// ALLOCATOR is glibc, jemalloc or tcmalloc: the one the process must be
// running with (jemalloc and tcmalloc through LD_PRELOAD); when it is not
// loaded the test says so and exits with 77 (skipped). Every step allocates
// its buffers with malloc, calloc or posix_memalign (sizes from 60 KiB to 9
// MiB), runs an allreduce three times, a broadcast, an allgather and a
// reduce-scatter on them, every result checked element by element, and frees
// them. Checked besides: every calloc'd buffer is all zero, and a canary
// buffer allocated beside them, which HComm never sees, keeps its contents.
// With --threads N the steps are taken in turn by N threads (each thread's
// memory from its own arena or cache), and each thread churns buffers of its
// own while it waits for its turn.
#include <link.h>
#include <stdlib.h>

#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "hcomm/hcomm.h"

namespace {

constexpr int kSkipped = 77;

enum class Alloc { Malloc, Calloc, Memalign };
constexpr Alloc kAllocs[] = {Alloc::Malloc, Alloc::Calloc, Alloc::Memalign};
const char* name(Alloc a) {
  switch (a) {
    case Alloc::Malloc:
      return "malloc";
    case Alloc::Calloc:
      return "calloc";
    case Alloc::Memalign:
      return "posix_memalign";
  }
  return "?";
}

// Bytes of each buffer of a step: below, at and above the 256 KiB that the
// automatic registration once started from, and several MiB; odd sizes
// among them.
constexpr size_t kSizes[] = {60 << 10, (200 << 10) + 12, 256 << 10, (1 << 20) + 20, 4 << 20, (9 << 20) + 44};

struct Totals {
  uint64_t nonzero_calloc = 0;  // non-zero floats found in calloc'd memory
  uint64_t wrong = 0;           // wrong result elements and canary elements
};

class Job {
 public:
  hcomm_comm_t comm = nullptr;
  int rank = 0, size = 1;

  void check(hcomm_result_t rc, const std::string& what) const {
    if (rc == HCOMM_SUCCESS) return;
    std::fprintf(stderr, "rank %d of %d: %s failed: %s: %s\n", rank, size, what.c_str(), hcomm_result_string(rc),
                 hcomm_get_last_error());
    std::exit(1);
  }
  // Counts `bad` under `what` (the first few of each kind are told).
  void expect(uint64_t bad, uint64_t Totals::*counter, const std::string& what) {
    if (bad == 0) return;
    std::lock_guard<std::mutex> lock(mutex_);
    totals_.*counter += bad;
    if (++told_ <= 20) std::fprintf(stderr, "rank %d of %d: WRONG: %s\n", rank, size, what.c_str());
  }
  Totals totals() {
    std::lock_guard<std::mutex> lock(mutex_);
    return totals_;
  }

 private:
  std::mutex mutex_;
  Totals totals_;
  int told_ = 0;
};

void* allocate(Job& job, Alloc kind, size_t bytes) {
  void* p = nullptr;
  switch (kind) {
    case Alloc::Malloc:
      p = std::malloc(bytes);
      break;
    case Alloc::Calloc:
      p = std::calloc(bytes / sizeof(float), sizeof(float));
      break;
    case Alloc::Memalign:
      if (::posix_memalign(&p, 4096, bytes) != 0) p = nullptr;
      break;
  }
  if (!p) {
    std::fprintf(stderr, "rank %d: %s of %zu bytes failed\n", job.rank, name(kind), bytes);
    std::exit(1);
  }
  if (kind == Alloc::Calloc) {
    const auto* f = static_cast<const uint32_t*>(p);
    uint64_t nonzero = 0;
    for (size_t i = 0; i < bytes / sizeof(float); ++i) nonzero += f[i] != 0;
    job.expect(
        nonzero, &Totals::nonzero_calloc,
        "calloc of " + std::to_string(bytes) + " bytes returned " + std::to_string(nonzero) + " non-zero floats");
  }
  return p;
}

// Small integers, so that float32 sums are exact; `step` changes them all.
float input(int rank, size_t i, uint64_t step) { return static_cast<float>((i * 7 + rank * 13 + step * 31) % 1024); }

void fill(float* data, size_t count, int rank, uint64_t step) {
  for (size_t i = 0; i < count; ++i) data[i] = input(rank, i, step);
}

// Counts the elements of [data, data + count) that differ from expected(i).
template <class F>
uint64_t count_wrong(const float* data, size_t count, F&& expected) {
  uint64_t wrong = 0;
  for (size_t i = 0; i < count; ++i) wrong += data[i] != expected(i);
  return wrong;
}

// One step: buffers of `bytes` from `kind`, the collectives on them, freed.
void step(Job& job, Alloc kind, size_t bytes, uint64_t number) {
  const std::string what = std::string(name(kind)) + "'d buffers of " + std::to_string(bytes) + " bytes, step " +
                           std::to_string(number) + ": ";
  const size_t count = bytes / sizeof(float);
  auto* send = static_cast<float*>(allocate(job, kind, bytes));
  auto* recv = static_cast<float*>(allocate(job, kind, bytes));
  auto* canary = static_cast<float*>(allocate(job, kind, bytes));
  fill(canary, count, job.rank + 1000, number);
  const auto sum = [&](uint64_t s) {
    return [&job, s](size_t i) {
      float total = 0;
      for (int r = 0; r < job.size; ++r) total += input(r, i, s);
      return total;
    };
  };
  // Each result starts as NaN, so that an element a call did not write is wrong.
  const auto unset = [&] { std::memset(recv, 0xff, bytes); };
  for (uint64_t call = 0; call < 3; ++call) {
    fill(send, count, job.rank, number + call);
    unset();
    job.check(hcomm_allreduce(send, recv, count, HCOMM_FLOAT32, HCOMM_SUM, job.comm, nullptr), what + "allreduce");
    job.expect(count_wrong(recv, count, sum(number + call)), &Totals::wrong,
               what + "allreduce " + std::to_string(call) + " gave wrong elements");
  }
  const int root = static_cast<int>(number % job.size);
  job.rank == root ? fill(recv, count, root, number) : unset();
  job.check(hcomm_broadcast(recv, recv, count, HCOMM_FLOAT32, root, job.comm, nullptr), what + "broadcast");
  job.expect(count_wrong(recv, count, [&](size_t i) { return input(root, i, number); }), &Totals::wrong,
             what + "broadcast gave wrong elements");
  const size_t block = count / job.size;
  fill(send, block, job.rank, number);
  unset();
  job.check(hcomm_allgather(send, recv, block, HCOMM_FLOAT32, job.comm, nullptr), what + "allgather");
  job.expect(count_wrong(recv, block * job.size,
                         [&](size_t i) { return input(static_cast<int>(i / block), i % block, number); }),
             &Totals::wrong, what + "allgather gave wrong elements");
  fill(send, block * job.size, job.rank, number);
  unset();
  job.check(hcomm_reduce_scatter(send, recv, block, HCOMM_FLOAT32, HCOMM_SUM, job.comm, nullptr),
            what + "reduce_scatter");
  const size_t from = block * job.rank;
  job.expect(count_wrong(recv, block, [&](size_t i) { return sum(number)(from + i); }), &Totals::wrong,
             what + "reduce_scatter gave wrong elements");
  job.expect(count_wrong(canary, count, [&](size_t i) { return input(job.rank + 1000, i, number); }), &Totals::wrong,
             what + "a buffer HComm never saw changed");
  std::free(send);
  std::free(recv);
  std::free(canary);
}

// Steps are taken in turn, step i by thread i mod N, so that every rank
// calls the same collectives in the same order; the communicator is used by
// one thread at a time.
class Turns {
 public:
  explicit Turns(int threads) : threads_(threads) {}
  void wait(uint64_t step) {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return next_ == step; });
  }
  void done() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ++next_;
    }
    changed_.notify_all();
  }
  int threads() const { return threads_; }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  uint64_t next_ = 0;
  int threads_;
};

// A thread's share of the steps; between its turns it allocates, checks and
// frees memory of its own.
void run_thread(Job& job, Turns& turns, int thread, int rounds) {
  uint64_t number = 0;
  for (int round = 0; round < rounds; ++round)
    for (size_t bytes : kSizes)
      for (Alloc kind : kAllocs) {
        if (static_cast<int>(number % turns.threads()) == thread) {
          const size_t churn = kSizes[(number + thread) % std::size(kSizes)];
          std::free(allocate(job, Alloc::Calloc, churn));
          turns.wait(number);
          step(job, kind, bytes, number);
          turns.done();
        }
        ++number;
      }
}

// Whether a library whose file name starts with `prefix` is loaded.
bool loaded(const char* prefix) {
  struct Query {
    const char* prefix;
    bool found;
  } query{prefix, false};
  ::dl_iterate_phdr(
      [](struct dl_phdr_info* info, size_t, void* data) {
        auto* q = static_cast<Query*>(data);
        const char* file = std::strrchr(info->dlpi_name, '/');
        file = file ? file + 1 : info->dlpi_name;
        if (std::strncmp(file, q->prefix, std::strlen(q->prefix)) == 0) q->found = true;
        return 0;
      },
      &query);
  return query.found;
}

int usage() {
  std::fprintf(stderr,
               "usage: hcomm_allocator_test glibc|jemalloc|tcmalloc [--threads N] [--rounds R] (under "
               "hcomm-run; jemalloc and tcmalloc through LD_PRELOAD)\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage();
  const std::string allocator = argv[1];
  int threads = 1, rounds = 2;
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    if ((arg != "--threads" && arg != "--rounds") || i + 1 == argc) return usage();
    const int value = std::atoi(argv[++i]);
    if (value < 1) return usage();
    (arg == "--threads" ? threads : rounds) = value;
  }
  if (allocator == "jemalloc" || allocator == "tcmalloc") {
    const std::string library = "lib" + allocator + ".so";
    if (!loaded(library.c_str())) {
      std::printf("SKIPPED: %s is not loaded (install it and preload it: LD_PRELOAD=%s.N)\n", library.c_str(),
                  library.c_str());
      return kSkipped;
    }
  } else if (allocator != "glibc") {
    return usage();
  }

  Job job;
  job.check(hcomm_comm_init_env(&job.comm), "hcomm_comm_init_env");
  job.check(hcomm_comm_rank(job.comm, &job.rank), "hcomm_comm_rank");
  job.check(hcomm_comm_size(job.comm, &job.size), "hcomm_comm_size");
  Turns turns(threads);
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) workers.emplace_back(run_thread, std::ref(job), std::ref(turns), t, rounds);
  for (std::thread& w : workers) w.join();

  const Totals mine = job.totals();
  uint64_t counts[2] = {mine.nonzero_calloc, mine.wrong}, all[2] = {};
  job.check(hcomm_allreduce(counts, all, 2, HCOMM_UINT64, HCOMM_SUM, job.comm, nullptr), "allreduce of the counts");
  if (job.rank == 0)
    std::printf("%s, %d threads, %d ranks: %llu non-zero floats from calloc, %llu wrong elements: %s\n",
                allocator.c_str(), threads, job.size, static_cast<unsigned long long>(all[0]),
                static_cast<unsigned long long>(all[1]), all[0] || all[1] ? "FAILED" : "all correct");
  job.check(hcomm_comm_destroy(job.comm), "hcomm_comm_destroy");
  return all[0] || all[1] ? 1 : 0;
}
