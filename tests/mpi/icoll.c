/* Nonblocking collectives in flight together, with each other and with
 * computation, completed by MPI_Waitall and by MPI_Test / MPI_Testall
 * loops; every element checked. */
#include <string.h>

#include "check.h"

static int rank, size;

int main(int argc, char** argv) {
  start_test(&argc, &argv, &rank, &size);
  MPI_Comm other;
  MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &other));
  for (int ci = 0; ci < NUM_TEST_COUNTS; ++ci) {
    const int count = test_counts[ci], n = count * size;
    double* sum = malloc((count + 1) * sizeof(double));
    int* bcast = malloc((count + 1) * sizeof(int));
    int* gathered = malloc((n + 1) * sizeof(int));
    int* mine = malloc((count + 1) * sizeof(int));
    int* a2a_send = malloc((n + 1) * sizeof(int));
    int* a2a_recv = malloc((n + 1) * sizeof(int));
    float* rsb = malloc((n + 1) * sizeof(float));
    long* maxed = malloc((count + 1) * sizeof(long));
    int* scattered = malloc((count + 1) * sizeof(int));
    for (int i = 0; i < count; ++i) {
      sum[i] = rank + i;
      bcast[i] = rank == 0 ? 3 * i + 1 : -1;
      mine[i] = rank * 10000 + i;
      maxed[i] = (rank * 7 + i) % (size + 3);
    }
    for (int i = 0; i < n; ++i) {
      a2a_send[i] = rank * 10000 + i;
      rsb[i] = (float)(rank + i % 3);
      gathered[i] = rank == size - 1 ? i : -1;  /* the scatter's source on the last rank */
    }
    MPI_Request reqs[8];
    MPI_OK(MPI_Iallreduce(MPI_IN_PLACE, sum, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &reqs[0]));
    MPI_OK(MPI_Ibcast(bcast, count, MPI_INT, 0, other, &reqs[1]));
    MPI_OK(MPI_Ialltoall(a2a_send, count, MPI_INT, a2a_recv, count, MPI_INT, MPI_COMM_WORLD, &reqs[2]));
    MPI_OK(MPI_Ireduce_scatter_block(MPI_IN_PLACE, rsb, count, MPI_FLOAT, MPI_SUM, other, &reqs[3]));
    MPI_OK(MPI_Iallreduce(MPI_IN_PLACE, maxed, count, MPI_LONG, MPI_MAX, MPI_COMM_WORLD, &reqs[4]));
    MPI_OK(MPI_Ibarrier(other, &reqs[5]));
    MPI_OK(MPI_Iscatter(gathered, count, MPI_INT, scattered, count, MPI_INT, size - 1, MPI_COMM_WORLD, &reqs[6]));
    /* Computation while they run. */
    volatile double x = 0;
    for (int i = 0; i < 100000; ++i) x += i * 0.5;
    int done = 0;
    MPI_OK(MPI_Test(&reqs[5], &done, MPI_STATUS_IGNORE));
    CHECK(!done || reqs[5] == MPI_REQUEST_NULL, "a completed MPI_Test left the request set");
    MPI_OK(MPI_Waitall(7, reqs, MPI_STATUSES_IGNORE));
    for (int i = 0; i < 7; ++i) CHECK(reqs[i] == MPI_REQUEST_NULL, "MPI_Waitall left request %d set", i);
    for (int i = 0; i < count; ++i) {
      const double want = (double)size * (size - 1) / 2 + (double)size * i;
      CHECK(sum[i] == want, "MPI_Iallreduce count %d: element %d is %g, expected %g", count, i, sum[i], want);
      CHECK(bcast[i] == 3 * i + 1, "MPI_Ibcast count %d: element %d is %d", count, i, bcast[i]);
      CHECK(scattered[i] == rank * count + i, "MPI_Iscatter count %d: element %d is %d", count, i, scattered[i]);
      long want_max = 0;
      for (int r = 0; r < size; ++r) want_max = (r * 7 + i) % (size + 3) > want_max ? (r * 7 + i) % (size + 3) : want_max;
      CHECK(maxed[i] == want_max, "MPI_Iallreduce MAX count %d: element %d is %ld, expected %ld", count, i, maxed[i],
            want_max);
      float want_rsb = 0;
      for (int r = 0; r < size; ++r) want_rsb += (float)(r + (rank * count + i) % 3);
      CHECK(rsb[i] == want_rsb, "MPI_Ireduce_scatter_block in place count %d: element %d is %g, expected %g", count,
            i, rsb[i], want_rsb);
    }
    for (int r = 0; r < size; ++r)
      for (int i = 0; i < count; ++i)
        CHECK(a2a_recv[r * count + i] == r * 10000 + rank * count + i, "MPI_Ialltoall count %d: block %d element %d is %d",
              count, r, i, a2a_recv[r * count + i]);

    /* Allgather and gather on two communicators, finished by MPI_Testall. */
    MPI_OK(MPI_Iallgather(mine, count, MPI_INT, gathered, count, MPI_INT, other, &reqs[0]));
    int* at_root = malloc((n + 1) * sizeof(int));
    MPI_OK(MPI_Igather(mine, count, MPI_INT, at_root, count, MPI_INT, 0, MPI_COMM_WORLD, &reqs[1]));
    for (done = 0; !done;) MPI_OK(MPI_Testall(2, reqs, &done, MPI_STATUSES_IGNORE));
    for (int r = 0; r < size; ++r)
      for (int i = 0; i < count; ++i) {
        CHECK(gathered[r * count + i] == r * 10000 + i, "MPI_Iallgather count %d: block %d element %d is %d", count, r,
              i, gathered[r * count + i]);
        if (rank == 0)
          CHECK(at_root[r * count + i] == r * 10000 + i, "MPI_Igather count %d: block %d element %d is %d", count, r,
                i, at_root[r * count + i]);
      }
    free(at_root);
    free(sum);
    free(bcast);
    free(gathered);
    free(mine);
    free(a2a_send);
    free(a2a_recv);
    free(rsb);
    free(maxed);
    free(scattered);
  }
  MPI_OK(MPI_Comm_free(&other));
  MPI_OK(MPI_Finalize());
  return 0;
}
