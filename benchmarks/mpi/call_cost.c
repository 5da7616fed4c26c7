/* The cost of one small call: N 8-byte allreduces (2 floats, sum) back to
 * back, timed as a whole, the best of 7 runs, in nanoseconds per call. On one
 * rank a call is all computation, so the MPI build against the BENCH_HCOMM
 * build is the MPI layer's own cost, without the clock's resolution that
 * timing calls one by one has.
 *
 *   build/bin/mpicc -O2 call_cost.c -o cost.mpi; build/bin/hcomm-run -n 1 ./cost.mpi [N]
 *   cc -O2 -DBENCH_HCOMM -Iinclude -Ibuild/include call_cost.c -Lbuild/lib -lhcomm -o cost.hcomm;
 *   build/bin/hcomm-run -n 1 ./cost.hcomm [N]
 *
 * N is 300000 unless given. Prints one number. */
#define _POSIX_C_SOURCE 199309L /* clock_gettime */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#ifdef BENCH_HCOMM
#include <hcomm/hcomm.h>

static hcomm_comm_t comm;
static void start(int* argc, char*** argv) {
  (void)argc, (void)argv;
  if (hcomm_comm_init_env(&comm) != HCOMM_SUCCESS) {
    fprintf(stderr, "hcomm_comm_init_env failed: %s\n", hcomm_get_last_error());
    exit(1);
  }
}
static int allreduce(const float* send, float* recv) {
  return hcomm_allreduce(send, recv, 2, HCOMM_FLOAT32, HCOMM_SUM, comm, NULL) != HCOMM_SUCCESS;
}
static void stop(void) { hcomm_comm_destroy(comm); }
#else
#include <mpi.h>

static void start(int* argc, char*** argv) { MPI_Init(argc, argv); }
static int allreduce(const float* send, float* recv) {
  return MPI_Allreduce(send, recv, 2, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS;
}
static void stop(void) { MPI_Finalize(); }
#endif

static double seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char** argv) {
  start(&argc, &argv);
  const long n = argc > 1 ? atol(argv[1]) : 300000;
  if (n < 1) {
    fprintf(stderr, "usage: call_cost [N] (N >= 1 calls per run)\n");
    return 2;
  }
  const float send[2] = {1, 2};
  float recv[2];
  double best = 0;
  for (int run = 0; run < 7; ++run) {
    const double t = seconds();
    for (long i = 0; i < n; ++i)
      if (allreduce(send, recv)) {
        fprintf(stderr, "allreduce failed\n");
        return 1;
      }
    const double ns = (seconds() - t) / (double)n * 1e9;
    if (run == 0 || ns < best) best = ns;
  }
  printf("%.1f\n", best);
  stop();
  return 0;
}
