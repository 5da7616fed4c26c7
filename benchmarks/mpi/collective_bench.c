/* One collective of float32 (sum where it reduces) over a sweep of sizes,
 * one program for MPI and HComm so that both are timed by the same loop:
 * powers of 2 from MIN to MAX bytes, WARMUP untimed calls, then ITERS calls
 * timed one by one, back to back. Sizes count as hcomm-perf counts them: the
 * whole message for allreduce, broadcast and reduce; each rank's block for
 * reduce_scatter, allgather, alltoall, gather and scatter. Roots are ROOT
 * (rank 0 unless given); broadcast is in place (one buffer, as MPI_Bcast
 * has). Per size, rank 0 prints the size in bytes, the median and the mean
 * of the timed calls in microseconds (each the largest over the ranks).
 * Buffers are allocated and touched once, and the ranks settle for a second
 * of small calls, before the sweep; after the timed calls of each size one
 * more call is checked element by element.
 *
 * INPUTS says what the input holds at each call: `reused`, the same data
 * every time (as the OSU benchmarks and most MPI benchmarks keep it), or
 * `fresh`, rewritten before each call outside the timed part (as a training
 * step's gradients are), or `step`, rewritten inside it: the time of a step
 * that writes its input and reduces it. They differ for a library that reads
 * its peers' inputs where they lie: an input that never changes stays in the
 * reader's cache from one call to the next, a rewritten one comes from the
 * writer's; and the writer's next rewrite of lines a peer read takes them
 * back from the peer's cache, a cost that lands outside the call (`fresh`)
 * but inside the step (`step`).
 *
 * BUFFERS says where the buffers come from: `malloc`, or `alloc_mem`, the
 * library's own allocator for communication buffers (MPI_Alloc_mem;
 * hcomm_mem_alloc, memory the ranks of a host map, HComm's zero-copy path).
 *
 *   mpicc collective_bench.c; mpirun -n 2 a.out [MIN MAX WARMUP ITERS INPUTS BUFFERS COLL ROOT]
 *   cc -DBENCH_HCOMM collective_bench.c -lhcomm; hcomm-run -n 2 a.out [...]
 *
 * Defaults 8 64M 10 50 reused malloc allreduce 0; sizes take K, M, G
 * suffixes (powers of 1024).
 */
#define _POSIX_C_SOURCE 199309L /* clock_gettime */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The few calls the benchmark makes, for each library; quit ends every rank.
 * The rooted ones use `root`. */
static void quit(int code) __attribute__((noreturn));
static int root;
#ifdef BENCH_HCOMM
#include <hcomm/hcomm.h>
#include <time.h>

static hcomm_comm_t comm;

static void checked(hcomm_result_t rc, const char* call) {
  if (rc == HCOMM_SUCCESS) return;
  fprintf(stderr, "%s failed: %s: %s\n", call, hcomm_result_string(rc), hcomm_get_last_error());
  exit(1);
}
static void start(int* argc, char*** argv, int* rank, int* nranks) {
  (void)argc, (void)argv;
  checked(hcomm_comm_init_env(&comm), "hcomm_comm_init_env");
  checked(hcomm_comm_rank(comm, rank), "hcomm_comm_rank");
  checked(hcomm_comm_size(comm, nranks), "hcomm_comm_size");
}
static void allreduce_floats(const float* send, float* recv, size_t count) {
  checked(hcomm_allreduce(send, recv, count, HCOMM_FLOAT32, HCOMM_SUM, comm, NULL), "hcomm_allreduce");
}
static void reduce_scatter_floats(const float* send, float* recv, size_t count) {
  checked(hcomm_reduce_scatter(send, recv, count, HCOMM_FLOAT32, HCOMM_SUM, comm, NULL), "hcomm_reduce_scatter");
}
static void allgather_floats(const float* send, float* recv, size_t count) {
  checked(hcomm_allgather(send, recv, count, HCOMM_FLOAT32, comm, NULL), "hcomm_allgather");
}
static void alltoall_floats(const float* send, float* recv, size_t count) {
  checked(hcomm_alltoall(send, recv, count, HCOMM_FLOAT32, comm, NULL), "hcomm_alltoall");
}
static void broadcast_floats(const float* send, float* recv, size_t count) {
  (void)send;
  checked(hcomm_broadcast(recv, recv, count, HCOMM_FLOAT32, root, comm, NULL), "hcomm_broadcast");
}
static void reduce_floats(const float* send, float* recv, size_t count) {
  checked(hcomm_reduce(send, recv, count, HCOMM_FLOAT32, HCOMM_SUM, root, comm, NULL), "hcomm_reduce");
}
static void gather_floats(const float* send, float* recv, size_t count) {
  checked(hcomm_gather(send, recv, count, HCOMM_FLOAT32, root, comm, NULL), "hcomm_gather");
}
static void scatter_floats(const float* send, float* recv, size_t count) {
  checked(hcomm_scatter(send, recv, count, HCOMM_FLOAT32, root, comm, NULL), "hcomm_scatter");
}
static void max_doubles(const double* in, double* out, int n) {
  checked(hcomm_allreduce(in, out, (size_t)n, HCOMM_FLOAT64, HCOMM_MAX, comm, NULL), "hcomm_allreduce");
}
static void sum_longs(const long* in, long* out) {
  checked(hcomm_allreduce(in, out, 1, HCOMM_INT64, HCOMM_SUM, comm, NULL), "hcomm_allreduce");
}
static void barrier(void) { checked(hcomm_barrier(comm, NULL), "hcomm_barrier"); }
static double seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
static void* alloc_mem(size_t bytes) {
  void* p = NULL;
  return hcomm_mem_alloc(&p, bytes) == HCOMM_SUCCESS ? p : NULL;
}
static void free_mem(void* p) { checked(hcomm_mem_free(p), "hcomm_mem_free"); }
static void stop(void) { checked(hcomm_comm_destroy(comm), "hcomm_comm_destroy"); }
static void quit(int code) { exit(code); }
#else
#include <mpi.h>

static void start(int* argc, char*** argv, int* rank, int* nranks) {
  MPI_Init(argc, argv);
  MPI_Comm_rank(MPI_COMM_WORLD, rank);
  MPI_Comm_size(MPI_COMM_WORLD, nranks);
}
static void allreduce_floats(const float* send, float* recv, size_t count) {
  MPI_Allreduce(send, recv, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
}
static void reduce_scatter_floats(const float* send, float* recv, size_t count) {
  MPI_Reduce_scatter_block(send, recv, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
}
static void allgather_floats(const float* send, float* recv, size_t count) {
  MPI_Allgather(send, (int)count, MPI_FLOAT, recv, (int)count, MPI_FLOAT, MPI_COMM_WORLD);
}
static void alltoall_floats(const float* send, float* recv, size_t count) {
  MPI_Alltoall(send, (int)count, MPI_FLOAT, recv, (int)count, MPI_FLOAT, MPI_COMM_WORLD);
}
static void broadcast_floats(const float* send, float* recv, size_t count) {
  (void)send;
  MPI_Bcast(recv, (int)count, MPI_FLOAT, root, MPI_COMM_WORLD);
}
static void reduce_floats(const float* send, float* recv, size_t count) {
  MPI_Reduce(send, recv, (int)count, MPI_FLOAT, MPI_SUM, root, MPI_COMM_WORLD);
}
static void gather_floats(const float* send, float* recv, size_t count) {
  MPI_Gather(send, (int)count, MPI_FLOAT, recv, (int)count, MPI_FLOAT, root, MPI_COMM_WORLD);
}
static void scatter_floats(const float* send, float* recv, size_t count) {
  MPI_Scatter(send, (int)count, MPI_FLOAT, recv, (int)count, MPI_FLOAT, root, MPI_COMM_WORLD);
}
static void max_doubles(const double* in, double* out, int n) {
  MPI_Allreduce(in, out, n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
}
static void sum_longs(const long* in, long* out) { MPI_Allreduce(in, out, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD); }
static void barrier(void) { MPI_Barrier(MPI_COMM_WORLD); }
static double seconds(void) { return MPI_Wtime(); }
static void* alloc_mem(size_t bytes) {
  void* p = NULL;
  return MPI_Alloc_mem((MPI_Aint)bytes, MPI_INFO_NULL, &p) == MPI_SUCCESS ? p : NULL;
}
static void free_mem(void* p) { MPI_Free_mem(p); }
static void stop(void) { MPI_Finalize(); }
static void quit(int code) {
  MPI_Abort(MPI_COMM_WORLD, code);
  exit(code);
}
#endif

/* A buffer from the library's allocator (library_memory) or from malloc. */
static void* acquire(size_t bytes, int library_memory) { return library_memory ? alloc_mem(bytes) : malloc(bytes); }
static void release(void* p, int library_memory) {
  if (library_memory)
    free_mem(p);
  else
    free(p);
}

static int compare_doubles(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static double median(double* v, int n) {
  qsort(v, (size_t)n, sizeof *v, compare_doubles);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Argument i as a number with an optional K, M or G suffix; -1 if it is not one. */
static long arg(int argc, char** argv, int i, long fallback) {
  if (argc <= i) return fallback;
  char* end = NULL;
  const long v = strtol(argv[i], &end, 10);
  switch (*end) {
    case 'K': return v << 10;
    case 'M': return v << 20;
    case 'G': return v << 30;
    case '\0': return end == argv[i] ? -1 : v;
    default: return -1;
  }
}

/* Calls of one element for at least `duration` seconds (the slowest rank's
 * clock decides), so that the sweep measures processes that the scheduler has
 * settled on their cores: on a busy host, ranks may share a core for their
 * first fraction of a second. */
static void settle(double duration) {
  const float x = 1;
  float y;
  const double start = seconds();
  for (double more = 1; more > 0;) {
    for (int i = 0; i < 100; ++i) allreduce_floats(&x, &y, 1);
    const double mine = seconds() - start < duration;
    max_doubles(&mine, &more, 1);
  }
}

/* Writes every element of the input, so that its cache lines are this rank's. */
static void rewrite(float* send, size_t count, long it) {
  for (size_t i = 0; i < count; ++i) send[i] = (float)(it & 7);
}

typedef void (*collective_fn)(const float* send, float* recv, size_t count);

/* A collective and its buffers, in blocks of `count` elements. Its result
 * follows from them: element j of a rank's result is input element
 * (its block of the input, where the input has one per rank) + j mod count
 * of every rank combined (`reduces`), or of the owner of block j / count
 * (where the result has one per rank), or of the root. */
typedef struct {
  const char* name;
  collective_fn run;
  int send_blocks_per_rank, recv_blocks_per_rank; /* 0: one block; 1: one block per rank */
  int reduces, in_recv, root_only; /* sums every rank's input; input in recvbuf; result on the root only */
} collective_t;

static const collective_t collectives[] = {
    {"allreduce", allreduce_floats, 0, 0, 1, 0, 0}, {"reduce_scatter", reduce_scatter_floats, 1, 0, 1, 0, 0},
    {"allgather", allgather_floats, 0, 1, 0, 0, 0}, {"alltoall", alltoall_floats, 1, 1, 0, 0, 0},
    {"broadcast", broadcast_floats, 0, 0, 0, 1, 0}, {"reduce", reduce_floats, 0, 0, 1, 0, 1},
    {"gather", gather_floats, 0, 1, 0, 0, 1},       {"scatter", scatter_floats, 1, 0, 0, 0, 0},
};

/* Rank r's input element i: small integers, so that sums are exact in
 * float32 whatever the order. */
static float input(int r, size_t i) { return (float)(r + 1 + (int)(i % 7)); }

/* Element j of `rank`'s result. */
static float expected(const collective_t* c, int rank, int nranks, size_t count, size_t j) {
  const size_t at = (c->send_blocks_per_rank ? (size_t)rank * count : 0) + j % count;
  if (c->reduces) return (float)(nranks * (nranks + 1) / 2 + nranks * (int)(at % 7));
  return input(c->recv_blocks_per_rank ? (int)(j / count) : root, at);
}

/* One call on freshly written inputs; returns this rank's wrong elements. */
static long check(const collective_t* c, float* send, float* recv, size_t count, int rank, int nranks) {
  const size_t inputs = count * (c->send_blocks_per_rank ? (size_t)nranks : 1);
  const size_t results = count * (c->recv_blocks_per_rank ? (size_t)nranks : 1);
  float* in = c->in_recv ? recv : send;
  for (size_t i = 0; i < inputs; ++i) in[i] = input(rank, i);
  c->run(send, recv, count);
  long wrong = 0;
  if (c->root_only && rank != root) return 0;
  for (size_t j = 0; j < results; ++j) wrong += recv[j] != expected(c, rank, nranks, count, j);
  return wrong;
}

int main(int argc, char** argv) {
  int rank = 0, nranks = 1;
  start(&argc, &argv, &rank, &nranks);
  const long min_bytes = arg(argc, argv, 1, 8), max_bytes = arg(argc, argv, 2, 64L << 20);
  const long warmup = arg(argc, argv, 3, 10), iters = arg(argc, argv, 4, 50);
  const char* inputs = argc > 5 ? argv[5] : "reused";
  const char* buffers = argc > 6 ? argv[6] : "malloc";
  const char* coll = argc > 7 ? argv[7] : "allreduce";
  const long root_arg = arg(argc, argv, 8, 0);
  const int step = strcmp(inputs, "step") == 0, fresh = step || strcmp(inputs, "fresh") == 0;
  const int library_memory = strcmp(buffers, "alloc_mem") == 0;
  const collective_t* c = NULL;
  for (size_t i = 0; i < sizeof collectives / sizeof *collectives; ++i)
    if (strcmp(coll, collectives[i].name) == 0) c = &collectives[i];
  if (min_bytes < (long)sizeof(float) || max_bytes < min_bytes || warmup < 0 || iters < 1 ||
      (!fresh && strcmp(inputs, "reused") != 0) || (!library_memory && strcmp(buffers, "malloc") != 0) || !c ||
      root_arg < 0 || root_arg >= nranks) {
    if (rank == 0)
      fprintf(stderr,
              "usage: collective_bench [MIN MAX WARMUP ITERS [reused|fresh|step] [malloc|alloc_mem] "
              "[allreduce|reduce_scatter|allgather|alltoall|broadcast|reduce|gather|scatter] [ROOT]] "
              "(MIN >= 4 bytes, ITERS >= 1, 0 <= ROOT < ranks)\n");
    quit(2);
  }
  root = (int)root_arg;
  const size_t send_blocks = c->send_blocks_per_rank ? (size_t)nranks : 1;
  const size_t recv_blocks = c->recv_blocks_per_rank ? (size_t)nranks : 1;
  float* send = acquire((size_t)max_bytes * send_blocks, library_memory);
  float* recv = acquire((size_t)max_bytes * recv_blocks, library_memory);
  double* times = malloc(sizeof(double) * (size_t)iters);
  if (!send || !recv || !times) {
    fprintf(stderr, "rank %d: cannot allocate buffers of %zu and %zu bytes\n", rank, (size_t)max_bytes * send_blocks,
            (size_t)max_bytes * recv_blocks);
    quit(1);
  }
  memset(send, 0, (size_t)max_bytes * send_blocks);
  memset(recv, 0, (size_t)max_bytes * recv_blocks);
  settle(1.0);
  if (rank == 0)
    printf("# %d ranks, %s (root %d), %s inputs, %s buffers; size(B) median(us) mean(us), the largest over the ranks\n",
           nranks, coll, root, inputs, buffers);
  long wrong = 0;
  for (long bytes = min_bytes; bytes <= max_bytes; bytes *= 2) {
    const size_t count = (size_t)bytes / sizeof(float);
    float* in = c->in_recv ? recv : send;
    barrier();
    double total = 0;
    for (long it = 0; it < warmup + iters; ++it) {
      if (fresh && !step) rewrite(in, count * send_blocks, it);
      const double t0 = seconds();
      if (step) rewrite(in, count * send_blocks, it);
      c->run(send, recv, count);
      const double elapsed = seconds() - t0;
      if (it >= warmup) {
        times[it - warmup] = elapsed;
        total += elapsed;
      }
    }
    const double mine[2] = {median(times, (int)iters) * 1e6, total / (double)iters * 1e6};
    double slowest[2];
    max_doubles(mine, slowest, 2);
    wrong += check(c, send, recv, count, rank, nranks);
    if (rank == 0) printf("%ld %.3f %.3f\n", bytes, slowest[0], slowest[1]);
    fflush(stdout);
  }
  long all_wrong = 0;
  sum_longs(&wrong, &all_wrong);
  if (rank == 0 && all_wrong) fprintf(stderr, "collective_bench: %ld wrong elements\n", all_wrong);
  free(times);
  release(recv, library_memory);
  release(send, library_memory);
  stop();
  return all_wrong ? 1 : 0;
}
