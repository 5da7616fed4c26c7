/* Every blocking collective, with MPI_IN_PLACE where MPI allows it, over
 * the counts of check.h, every root in {0, size-1}, and for reductions
 * several types and ops; every element of every result is checked. */
#include <string.h>

#include "check.h"
#include "reductions.h"

static int rank, size;

/* Data that is moved: the value of element i from rank r. */
static int moved(int r, int i) { return r * 100000 + i; }

static double expected(int i, MPI_Op op) { return reduced(size - 1, i, op); }

/* Signed char holds sums and products up to 127; others hold them all. */
static int fits(MPI_Datatype t, MPI_Op op) { return t != MPI_SIGNED_CHAR || op != MPI_SUM || size <= 7; }

static void check_reduced(const void* buf, MPI_Datatype t, int ti, MPI_Op op, int oi, int first, int count,
                          const char* what) {
  for (int i = 0; i < count; ++i)
    CHECK(get(buf, t, i) == expected(first + i, op), "%s %s %s count %d: element %d is %g, expected %g", what,
          type_names[ti], op_names[oi], count, i, get(buf, t, i), expected(first + i, op));
}

static void test_reductions(void) {
  for (int ci = 0; ci < NUM_TEST_COUNTS; ++ci) {
    const int count = test_counts[ci];
    for (int ti = 0; ti < NTYPES; ++ti)
      for (int oi = 0; oi < NOPS; ++oi) {
        MPI_Datatype t = types[ti];
        MPI_Op op = ops[oi];
        if (!fits(t, op)) continue;
        const int n = count * size;
        /* Room for reduce_scatter's blocks too, which have up to 3 elements. */
        double* send = calloc(n + 4, sizeof(double));
        double* recv = calloc(n + 4, sizeof(double));
        for (int i = 0; i < n; ++i) set(send, t, i, input(rank, i, op));
        /* allreduce, and in place */
        MPI_OK(MPI_Allreduce(send, recv, count, t, op, MPI_COMM_WORLD));
        check_reduced(recv, t, ti, op, oi, 0, count, "MPI_Allreduce");
        for (int i = 0; i < count; ++i) set(recv, t, i, input(rank, i, op));
        MPI_OK(MPI_Allreduce(MPI_IN_PLACE, recv, count, t, op, MPI_COMM_WORLD));
        check_reduced(recv, t, ti, op, oi, 0, count, "MPI_Allreduce in place");
        /* reduce at two roots, the second in place */
        for (int root = 0; root < size; root += size - 1 > 0 ? size - 1 : 1) {
          memset(recv, 0, (n + 1) * sizeof(double));
          MPI_OK(MPI_Reduce(send, rank == root ? recv : NULL, count, t, op, root, MPI_COMM_WORLD));
          if (rank == root) check_reduced(recv, t, ti, op, oi, 0, count, "MPI_Reduce");
          if (MPICH_BUGS && root != 0 && count > 7) continue;
          if (rank == root) {
            for (int i = 0; i < count; ++i) set(recv, t, i, input(rank, i, op));
            MPI_OK(MPI_Reduce(MPI_IN_PLACE, recv, count, t, op, root, MPI_COMM_WORLD));
            check_reduced(recv, t, ti, op, oi, 0, count, "MPI_Reduce in place");
          } else {
            MPI_OK(MPI_Reduce(send, NULL, count, t, op, root, MPI_COMM_WORLD));
          }
        }
        /* reduce_scatter_block, and in place */
        MPI_OK(MPI_Reduce_scatter_block(send, recv, count, t, op, MPI_COMM_WORLD));
        check_reduced(recv, t, ti, op, oi, rank * count, count, "MPI_Reduce_scatter_block");
        for (int i = 0; i < n; ++i) set(recv, t, i, input(rank, i, op));
        MPI_OK(MPI_Reduce_scatter_block(MPI_IN_PLACE, recv, count, t, op, MPI_COMM_WORLD));
        check_reduced(recv, t, ti, op, oi, rank * count, count, "MPI_Reduce_scatter_block in place");
        /* reduce_scatter with block r of (count + r) % 4 elements */
        int* counts = malloc(size * sizeof(int));
        int total = 0, before = 0;
        for (int r = 0; r < size; ++r) {
          counts[r] = (count + r) % 4;
          if (r < rank) before += counts[r];
          total += counts[r];
        }
        double* vsend = calloc(total + 1, sizeof(double));
        for (int i = 0; i < total; ++i) set(vsend, t, i, input(rank, i, op));
        MPI_OK(MPI_Reduce_scatter(vsend, recv, counts, t, op, MPI_COMM_WORLD));
        check_reduced(recv, t, ti, op, oi, before, counts[rank], "MPI_Reduce_scatter");
        MPI_OK(MPI_Reduce_scatter(MPI_IN_PLACE, vsend, counts, t, op, MPI_COMM_WORLD));
        check_reduced(vsend, t, ti, op, oi, before, counts[rank], "MPI_Reduce_scatter in place");
        free(counts);
        free(vsend);
        free(send);
        free(recv);
      }
  }
}

static void check_moved(const int* buf, int count, int from, int first, const char* what, int extra) {
  for (int i = 0; i < count; ++i)
    CHECK(buf[i] == moved(from, first + i), "%s (count %d, %d): element %d is %d, expected %d from rank %d", what,
          count, extra, i, buf[i], moved(from, first + i), from);
}

static void test_movement(void) {
  for (int ci = 0; ci < NUM_TEST_COUNTS; ++ci) {
    const int count = test_counts[ci], n = count * size;
    /* Room for the v-collectives' blocks too, which have up to 5 elements. */
    int* send = malloc((n + 6) * sizeof(int));
    int* recv = malloc((n + 6) * sizeof(int));
    int* counts = malloc(size * sizeof(int));
    int* displs = malloc(size * sizeof(int));
    int* rcounts = malloc(size * sizeof(int));
    int* rdispls = malloc(size * sizeof(int));
    for (int root = 0; root < size; root += size - 1 > 0 ? size - 1 : 1) {
      /* bcast */
      for (int i = 0; i < count; ++i) recv[i] = rank == root ? moved(root, i) : -1;
      MPI_OK(MPI_Bcast(recv, count, MPI_INT, root, MPI_COMM_WORLD));
      check_moved(recv, count, root, 0, "MPI_Bcast", root);
      /* gather, then in place */
      for (int i = 0; i < count; ++i) send[i] = moved(rank, i);
      MPI_OK(MPI_Gather(send, count, MPI_INT, recv, count, MPI_INT, root, MPI_COMM_WORLD));
      if (rank == root)
        for (int r = 0; r < size; ++r) check_moved(recv + r * count, count, r, 0, "MPI_Gather", root);
      if (rank == root) {
        for (int i = 0; i < n; ++i) recv[i] = i / (count ? count : 1) == root ? moved(root, i % count) : -1;
        MPI_OK(MPI_Gather(MPI_IN_PLACE, count, MPI_INT, recv, count, MPI_INT, root, MPI_COMM_WORLD));
        for (int r = 0; r < size; ++r) check_moved(recv + r * count, count, r, 0, "MPI_Gather in place", root);
      } else {
        MPI_OK(MPI_Gather(send, count, MPI_INT, NULL, 0, MPI_INT, root, MPI_COMM_WORLD));
      }
      /* scatter, then in place */
      for (int i = 0; i < n; ++i) send[i] = moved(i / (count ? count : 1), i % (count ? count : 1));
      MPI_OK(MPI_Scatter(send, count, MPI_INT, recv, count, MPI_INT, root, MPI_COMM_WORLD));
      check_moved(recv, count, rank, 0, "MPI_Scatter", root);
      if (rank == root)
        MPI_OK(MPI_Scatter(send, count, MPI_INT, MPI_IN_PLACE, count, MPI_INT, root, MPI_COMM_WORLD));
      else
        MPI_OK(MPI_Scatter(NULL, 0, MPI_INT, recv, count, MPI_INT, root, MPI_COMM_WORLD));
      check_moved(rank == root ? send + root * count : recv, count, rank, 0, "MPI_Scatter in place", root);
      /* gatherv and scatterv: rank r's block has (count + r) % 5 elements, one apart */
      int total = 0;
      for (int r = 0; r < size; ++r) {
        counts[r] = (count + r) % 5;
        displs[r] = total + r;
        total += counts[r] + r;
      }
      int* vbuf = malloc((total + 1) * sizeof(int));
      for (int i = 0; i < counts[rank]; ++i) send[i] = moved(rank, i);
      MPI_OK(MPI_Gatherv(send, counts[rank], MPI_INT, vbuf, counts, displs, MPI_INT, root, MPI_COMM_WORLD));
      if (rank == root)
        for (int r = 0; r < size; ++r) check_moved(vbuf + displs[r], counts[r], r, 0, "MPI_Gatherv", root);
      if (rank == root) {
        for (int i = 0; i < counts[root]; ++i) vbuf[displs[root] + i] = moved(root, i);
        MPI_OK(MPI_Gatherv(MPI_IN_PLACE, 0, MPI_INT, vbuf, counts, displs, MPI_INT, root, MPI_COMM_WORLD));
        for (int r = 0; r < size; ++r) check_moved(vbuf + displs[r], counts[r], r, 0, "MPI_Gatherv in place", root);
      } else {
        MPI_OK(MPI_Gatherv(send, counts[rank], MPI_INT, NULL, NULL, NULL, MPI_INT, root, MPI_COMM_WORLD));
      }
      for (int r = 0; r < size; ++r)
        for (int i = 0; i < counts[r]; ++i) vbuf[displs[r] + i] = moved(r, i);
      MPI_OK(MPI_Scatterv(vbuf, counts, displs, MPI_INT, recv, counts[rank], MPI_INT, root, MPI_COMM_WORLD));
      check_moved(recv, counts[rank], rank, 0, "MPI_Scatterv", root);
      if (rank == root)
        MPI_OK(MPI_Scatterv(vbuf, counts, displs, MPI_INT, MPI_IN_PLACE, 0, MPI_INT, root, MPI_COMM_WORLD));
      else
        MPI_OK(MPI_Scatterv(NULL, NULL, NULL, MPI_INT, recv, counts[rank], MPI_INT, root, MPI_COMM_WORLD));
      check_moved(rank == root ? vbuf + displs[root] : recv, counts[rank], rank, 0, "MPI_Scatterv in place", root);
      free(vbuf);
    }
    /* allgather; as bytes on the receive side; in place */
    for (int i = 0; i < count; ++i) send[i] = moved(rank, i);
    MPI_OK(MPI_Allgather(send, count, MPI_INT, recv, count, MPI_INT, MPI_COMM_WORLD));
    for (int r = 0; r < size; ++r) check_moved(recv + r * count, count, r, 0, "MPI_Allgather", 0);
    MPI_OK(MPI_Allgather(send, count, MPI_INT, recv, count * (int)sizeof(int), MPI_BYTE, MPI_COMM_WORLD));
    for (int r = 0; r < size; ++r) check_moved(recv + r * count, count, r, 0, "MPI_Allgather into MPI_BYTE", 0);
    for (int i = 0; i < n; ++i) recv[i] = i / (count ? count : 1) == rank ? moved(rank, i % count) : -1;
    MPI_OK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv, count, MPI_INT, MPI_COMM_WORLD));
    for (int r = 0; r < size; ++r) check_moved(recv + r * count, count, r, 0, "MPI_Allgather in place", 0);
    /* allgatherv with gaps, and in place */
    int total = 0;
    for (int r = 0; r < size; ++r) {
      counts[r] = (count + 2 * r) % 6;
      displs[r] = MPICH_BUGS && size == 1 ? 0 : total + 1;
      total += counts[r] + 1;
    }
    int* vbuf = malloc((total + 1) * sizeof(int));
    for (int i = 0; i < counts[rank]; ++i) send[i] = moved(rank, i);
    MPI_OK(MPI_Allgatherv(send, counts[rank], MPI_INT, vbuf, counts, displs, MPI_INT, MPI_COMM_WORLD));
    for (int r = 0; r < size; ++r) check_moved(vbuf + displs[r], counts[r], r, 0, "MPI_Allgatherv", 0);
    for (int i = 0; i < total; ++i) vbuf[i] = -1;
    for (int i = 0; i < counts[rank]; ++i) vbuf[displs[rank] + i] = moved(rank, i);
    MPI_OK(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, vbuf, counts, displs, MPI_INT, MPI_COMM_WORLD));
    for (int r = 0; r < size; ++r) check_moved(vbuf + displs[r], counts[r], r, 0, "MPI_Allgatherv in place", 0);
    free(vbuf);
    /* alltoall: block j of rank r holds moved(r, j * count + i); and in place */
    for (int i = 0; i < n; ++i) send[i] = moved(rank, i);
    MPI_OK(MPI_Alltoall(send, count, MPI_INT, recv, count, MPI_INT, MPI_COMM_WORLD));
    for (int r = 0; r < size; ++r) check_moved(recv + r * count, count, r, rank * count, "MPI_Alltoall", 0);
    for (int i = 0; i < n; ++i) recv[i] = moved(rank, i);
    MPI_OK(MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv, count, MPI_INT, MPI_COMM_WORLD));
    for (int r = 0; r < size; ++r) check_moved(recv + r * count, count, r, rank * count, "MPI_Alltoall in place", 0);
    /* alltoallv: (r + j + count) % 5 elements between r and j, either way (so in place works too) */
    int stotal = 0, rtotal = 0;
    for (int j = 0; j < size; ++j) {
      counts[j] = rcounts[j] = (rank + j + count) % 5;
      displs[j] = stotal;
      rdispls[j] = rtotal + 1;
      stotal += counts[j];
      rtotal += rcounts[j] + 1;
    }
    int* asend = malloc((stotal + 1) * sizeof(int));
    int* arecv = malloc((rtotal + 1) * sizeof(int));
    for (int j = 0; j < size; ++j)
      for (int i = 0; i < counts[j]; ++i) asend[displs[j] + i] = moved(rank, j * 1000 + i);
    MPI_OK(MPI_Alltoallv(asend, counts, displs, MPI_INT, arecv, rcounts, rdispls, MPI_INT, MPI_COMM_WORLD));
    for (int r = 0; r < size; ++r) check_moved(arecv + rdispls[r], rcounts[r], r, rank * 1000, "MPI_Alltoallv", 0);
    for (int j = 0; j < size; ++j)
      for (int i = 0; i < rcounts[j]; ++i) arecv[rdispls[j] + i] = moved(rank, j * 1000 + i);
    MPI_OK(MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, arecv, rcounts, rdispls, MPI_INT,
                         MPI_COMM_WORLD));
    for (int r = 0; r < size; ++r)
      check_moved(arecv + rdispls[r], rcounts[r], r, rank * 1000, "MPI_Alltoallv in place", 0);
    free(asend);
    free(arecv);
    free(send);
    free(recv);
    free(counts);
    free(displs);
    free(rcounts);
    free(rdispls);
  }
  MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char** argv) {
  start_test(&argc, &argv, &rank, &size);
  test_movement();
  test_reductions();
  MPI_OK(MPI_Finalize());
  return 0;
}
