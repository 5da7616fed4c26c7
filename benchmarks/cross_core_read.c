/* What one process pays to take another process's buffer, the three ways
 * HComm's shm paths do it: process_vm_readv (cross-memory attach, the shm
 * transport's single copy and copies by address), memcpy out of a shared
 * copy the owner made (the FIFO's receiving half), and memcpy of the owner's
 * buffer mapped into the reader (hcomm_mem_alloc or registered memory). The
 * owner either rewrites every line of its buffer before each read ("fresh",
 * as a training step writes its gradients) or leaves it ("reused"). Owner and
 * reader are pinned to CPUs 1 and 0 and take turns through a shared flag;
 * only the reader's copy is timed.
 *
 *   hcomm_cross_core_read [BYTES...]   (default 16384 32768 262144)
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { kIterations = 2000, kWarmup = 100 };
enum Way { kProcessVmReadv, kSharedCopy, kMapped };
static const char* const kWayNames[] = {"process_vm_readv", "memcpy of a shared copy", "memcpy of the mapped buffer"};

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static void pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0) perror("sched_setaffinity (the figures mix CPUs)");
}

static void* shared_bytes(size_t bytes) {
  void* p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    perror("mmap");
    exit(1);
  }
  memset(p, 1, bytes);
  return p;
}

/* The reader's median and best copy, in us. */
static int measure(size_t bytes, int fresh, enum Way way, double* median_us, double* best_us) {
  _Atomic long* turn = shared_bytes(sizeof(long));
  char** owner_address = shared_bytes(sizeof(char*));
  char* copy = shared_bytes(bytes);   /* kSharedCopy: what the owner copies out */
  char* mapped = shared_bytes(bytes); /* kMapped: the owner's buffer, in both processes */
  char* local = malloc(bytes);
  memset(local, 0, bytes);
  atomic_store(turn, -1);
  pid_t owner = fork();
  if (owner < 0) return perror("fork"), 1;
  if (owner == 0) {
    pin(1);
    char* buffer = way == kMapped ? mapped : malloc(bytes);
    memset(buffer, 2, bytes);
    *owner_address = buffer;
    for (long i = 0; i < kIterations; ++i) {
      while (atomic_load(turn) != 2 * i) {
      }
      if (fresh)
        for (size_t k = 0; k < bytes; k += 64) buffer[k] = (char)i;
      if (way == kSharedCopy) memcpy(copy, buffer, bytes);
      atomic_store(turn, 2 * i + 1);
    }
    _exit(0);
  }
  pin(0);
  static double times[kIterations];
  for (long i = 0; i < kIterations; ++i) {
    atomic_store(turn, 2 * i);
    while (atomic_load(turn) != 2 * i + 1) {
    }
    const double start = now_us();
    if (way == kProcessVmReadv) {
      struct iovec into = {local, bytes}, from = {*owner_address, bytes};
      if (process_vm_readv(owner, &into, 1, &from, 1, 0) != (ssize_t)bytes) return perror("process_vm_readv"), 1;
    } else {
      memcpy(local, way == kSharedCopy ? copy : mapped, bytes);
    }
    times[i] = now_us() - start;
  }
  waitpid(owner, NULL, 0);
  const int n = kIterations - kWarmup;
  double* t = times + kWarmup;
  for (int a = 1; a < n; ++a) /* insertion sort: small and run once */
    for (int b = a; b > 0 && t[b] < t[b - 1]; --b) {
      const double x = t[b];
      t[b] = t[b - 1], t[b - 1] = x;
    }
  *median_us = t[n / 2], *best_us = t[0];
  free(local);
  munmap(mapped, bytes), munmap(copy, bytes), munmap(owner_address, sizeof(char*)), munmap((void*)turn, sizeof(long));
  return 0;
}

int main(int argc, char** argv) {
  const size_t defaults[] = {16384, 32768, 262144};
  const int nsizes = argc > 1 ? argc - 1 : 3;
  printf("%9s  %-6s  %-28s  %10s  %8s\n", "bytes", "owner", "reader", "median us", "best us");
  for (int s = 0; s < nsizes; ++s) {
    char* end = NULL;
    const size_t bytes = argc > 1 ? strtoull(argv[s + 1], &end, 0) : defaults[s];
    if (argc > 1 && (*end || bytes == 0)) {
      fprintf(stderr, "hcomm_cross_core_read: '%s' is not a byte count above 0\n", argv[s + 1]);
      return 2;
    }
    for (int fresh = 0; fresh < 2; ++fresh)
      for (enum Way way = kProcessVmReadv; way <= kMapped; ++way) {
        double median = 0, best = 0;
        if (measure(bytes, fresh, way, &median, &best)) return 1;
        printf("%9zu  %-6s  %-28s  %10.2f  %8.2f\n", bytes, fresh ? "fresh" : "reused", kWayNames[way], median, best);
      }
  }
  return 0;
}
