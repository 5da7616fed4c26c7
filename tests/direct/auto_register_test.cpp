// Runs under hcomm-run over shm: buffers that peers cannot map, registered by
// the core on their second use where the caller asked for it
// (HCOMM_AUTO_REGISTER, off by default).
//
//   hcomm_auto_register_test [unmoved [LIBRARY]]
//
// Checks, every result element by element: the pages of a buffer move onto
// shared memory on its second call and not before; a buffer freed and mapped
// anew at the same address is read anew, not through its old registration
// (whose pages still hold the old values); a child forked after the move
// gets private pages, and its writes do not reach the parent; a buffer the
// caller registers over an automatic registration; a malloc'd buffer of an
// odd size; a SEND whose slices are pushed (where the caches are apart:
// HCOMM_CACHES_APART=on) stays where it is. Run it with HCOMM_AUTO_REGISTER
// set. With `unmoved` no page of a mapped or malloc'd buffer may move: run
// with the defaults, with HCOMM_AUTO_REGISTER=0, or with it set and a
// LIBRARY named like the CUDA driver, which the test loads before its first
// call (loaded, not preloaded, so that a sanitizer's runtime stays first).
#include <dlfcn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "hcomm/hcomm.h"

namespace {

struct Job {
  hcomm_comm_t comm = nullptr;
  int rank = 0, size = 1;
  int failures = 0;

  void check(hcomm_result_t rc, const std::string& what) const {
    if (rc == HCOMM_SUCCESS) return;
    std::fprintf(stderr, "rank %d of %d: %s failed: %s: %s\n", rank, size, what.c_str(), hcomm_result_string(rc),
                 hcomm_get_last_error());
    std::exit(1);
  }
  void expect(bool ok, const std::string& what) {
    if (ok) return;
    std::fprintf(stderr, "rank %d of %d: WRONG: %s\n", rank, size, what.c_str());
    ++failures;
  }
};

// Small integers, so that float32 sums are exact; `round` changes them all.
float input(int rank, size_t i, int round) { return static_cast<float>((i * 7 + rank * 13 + round * 31) % 1024); }

void fill(const Job& job, float* send, size_t count, int round) {
  for (size_t i = 0; i < count; ++i) send[i] = input(job.rank, i, round);
}

// Allreduces `count` floats of send into recv and checks every element.
void allreduce(Job& job, float* send, float* recv, size_t count, int round, const std::string& what) {
  fill(job, send, count, round);
  std::memset(recv, 0xff, count * sizeof(float));  // NaN: an element not written is wrong
  job.check(hcomm_allreduce(send, recv, count, HCOMM_FLOAT32, HCOMM_SUM, job.comm, nullptr), what);
  size_t wrong = 0, first = 0;
  for (size_t i = 0; i < count; ++i) {
    float expected = 0;
    for (int r = 0; r < job.size; ++r) expected += input(r, i, round);
    if (recv[i] != expected && wrong++ == 0) first = i;
  }
  job.expect(wrong == 0, what + ": " + std::to_string(wrong) + " wrong elements of " + std::to_string(count) +
                             ", the first at " + std::to_string(first));
}

// Whether the page at `p` lies on a memfd the shm transport registered.
bool moved(const void* p) {
  const auto at = reinterpret_cast<uintptr_t>(p);
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    uintptr_t lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx", &lo, &hi) == 2 && lo <= at && at < hi)
      return line.find("/memfd:hcomm-registered") != std::string::npos;
  }
  return false;
}

float* map_floats(size_t count, void* at = nullptr) {
  void* p = ::mmap(at, count * sizeof(float), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | (at ? MAP_FIXED_NOREPLACE : 0), -1, 0);
  if (p == MAP_FAILED || (at && p != at)) {
    std::perror("mmap");
    std::exit(1);
  }
  return static_cast<float*>(p);
}

// A forked child sees the values the parent had and writes over them; the
// parent's stay.
void fork_child(Job& job, float* buffer, size_t count) {
  const std::vector<float> before(buffer, buffer + count);
  const pid_t child = ::fork();
  if (child == 0) {
    const bool same = std::memcmp(buffer, before.data(), count * sizeof(float)) == 0;
    const bool private_pages = !moved(buffer);
    std::memset(buffer, 0x5a, count * sizeof(float));
    ::_exit(same && private_pages ? 0 : 1);
  }
  int status = 0;
  job.expect(child > 0 && ::waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0,
             "the forked child did not find its own private copy of the registered buffer");
  job.expect(std::memcmp(buffer, before.data(), count * sizeof(float)) == 0,
             "a forked child's writes reached the parent's registered buffer");
  job.expect(moved(buffer), "the parent's buffer no longer lies on its registration after the fork");
}

void automatic(Job& job) {
  // Whole pages, so that every byte moves; slices larger than a window half
  // (HCOMM_WINDOW_BYTES=2M in this test's environment) on 2 and 3 ranks, so
  // that they read each other's SEND.
  const size_t count = (size_t{5} << 20) / sizeof(float) + 1024;
  float* send = map_floats(count);
  float* recv = map_floats(count);
  allreduce(job, send, recv, count, 1, "the first call on mapped buffers");
  job.expect(!moved(send) && !moved(recv), "the buffers moved on their first call");
  allreduce(job, send, recv, count, 2, "the second call");
  job.expect(moved(send) && moved(recv), "the buffers did not move on their second call");
  for (int round = 3; round < 7; ++round) allreduce(job, send, recv, count, round, "a call on registered buffers");

  // Freed, and new memory at the same address: the old file still holds
  // round 6's values, which peers must not read.
  void* at = send;
  ::munmap(send, count * sizeof(float));
  send = map_floats(count, at);
  job.expect(!moved(send), "the new memory at the freed buffer's address is not fresh");
  allreduce(job, send, recv, count, 7, "a call on a buffer freed and mapped anew at the same address");
  job.expect(moved(send), "the buffer mapped anew was not registered again");
  allreduce(job, send, recv, count, 8, "the next call on it");

  fork_child(job, send, count);
  allreduce(job, send, recv, count, 9, "a call after a fork");

  // The caller's own registration of the same range takes over.
  void* handle = nullptr;
  job.check(hcomm_mem_register(job.comm, recv, count * sizeof(float), &handle), "hcomm_mem_register");
  allreduce(job, send, recv, count, 10, "a call on a buffer the caller registered over an automatic registration");
  job.check(hcomm_mem_deregister(job.comm, handle), "hcomm_mem_deregister");
  allreduce(job, send, recv, count, 11, "a call after the caller's deregistration");
  ::munmap(send, count * sizeof(float));
  ::munmap(recv, count * sizeof(float));

  // malloc'd, an odd size: the partial pages at the ends are read by address.
  const size_t odd = (size_t{5} << 18) + 5;
  std::vector<float> heap_send(odd), heap_recv(odd);
  for (int round = 12; round < 16; ++round)
    allreduce(job, heap_send.data(), heap_recv.data(), odd, round, "a call on malloc'd buffers of 1M+5 floats");
  job.expect(moved(heap_send.data() + odd / 2), "the malloc'd buffer did not move by its fourth call");

  // Slices that fit a window half are pushed into the peers' windows and
  // RECV where the caches are apart: no peer reads SEND, which then stays
  // where it is.
  const size_t pushed = (size_t{2} << 20) / sizeof(float);
  float* in = map_floats(pushed);
  float* out = map_floats(pushed);
  for (int round = 16; round < 20; ++round) allreduce(job, in, out, pushed, round, "a call whose slices are pushed");
  job.expect(!moved(in), "a SEND no peer reads moved");
  job.expect(moved(out), "a RECV peers store into did not move");
  ::munmap(in, pushed * sizeof(float));
  ::munmap(out, pushed * sizeof(float));
}

void unmoved(Job& job) {
  const size_t count = (size_t{5} << 20) / sizeof(float) + 1024;
  float* send = map_floats(count);
  float* recv = map_floats(count);
  for (int round = 1; round < 5; ++round) allreduce(job, send, recv, count, round, "a call on buffers that stay");
  job.expect(!moved(send) && !moved(recv), "the buffers moved where nothing may register them");
  ::munmap(send, count * sizeof(float));
  ::munmap(recv, count * sizeof(float));

  const size_t odd = (size_t{5} << 18) + 5;
  std::vector<float> heap_send(odd), heap_recv(odd);
  for (int round = 5; round < 9; ++round)
    allreduce(job, heap_send.data(), heap_recv.data(), odd, round, "a call on malloc'd buffers that stay");
  job.expect(!moved(heap_send.data() + odd / 2) && !moved(heap_recv.data() + odd / 2),
             "malloc'd buffers moved where nothing may register them");
}

}  // namespace

int main(int argc, char** argv) {
  const bool stay = argc >= 2 && std::strcmp(argv[1], "unmoved") == 0;
  if (argc > 3 || (argc >= 2 && !stay)) {
    std::fprintf(stderr, "usage: hcomm_auto_register_test [unmoved [LIBRARY]] (under hcomm-run, over shm)\n");
    return 2;
  }
  if (argc == 3 && !::dlopen(argv[2], RTLD_NOW | RTLD_GLOBAL)) {
    std::fprintf(stderr, "hcomm_auto_register_test: cannot load %s: %s\n", argv[2], ::dlerror());
    return 2;
  }
  Job job;
  job.check(hcomm_comm_init_env(&job.comm), "hcomm_comm_init_env");
  job.check(hcomm_comm_rank(job.comm, &job.rank), "hcomm_comm_rank");
  job.check(hcomm_comm_size(job.comm, &job.size), "hcomm_comm_size");
  stay ? unmoved(job) : automatic(job);

  uint64_t mine = static_cast<uint64_t>(job.failures), all = 0;
  job.check(hcomm_allreduce(&mine, &all, 1, HCOMM_UINT64, HCOMM_SUM, job.comm, nullptr), "allreduce of failures");
  if (job.rank == 0)
    std::printf("automatic registration%s on %d ranks: %s\n", stay ? " (none may happen)" : "", job.size,
                all ? (std::to_string(all) + " wrong results (see above)").c_str() : "all correct");
  job.check(hcomm_comm_destroy(job.comm), "hcomm_comm_destroy");
  return all ? 1 : 0;
}
