/* MPI_Scan, MPI_Exscan, MPI_Iscan and MPI_Iexscan: every type and op of
 * coll.c's reductions, the counts of check.h, in place and not, blocking and
 * nonblocking; every element of every result is checked against the prefix
 * each rank computes alone, and exscan leaves rank 0's recvbuf as it was.
 * Then the error classes of bad arguments. */
#include "check.h"
#include "reductions.h"

static int rank, size;

/* The exscan on rank 0 finds this in its recvbuf afterwards. */
static const double kUntouched = 99;

/* Element i of a result: the prefix of ranks 0..last, or kUntouched
 * (last < 0), or the input (last < 0, in place). */
static double wanted(int last, int i, MPI_Op op, int in_place) {
  if (last >= 0) return reduced(last, i, op);
  return in_place ? input(rank, i, op) : kUntouched;
}

/* One call: exclusive is exscan, nonblocking the I-form. */
static void run(MPI_Datatype t, int ti, MPI_Op op, int oi, int count, int exclusive, int in_place, int nonblocking) {
  double* send = calloc(count + 1, sizeof(double));
  double* recv = calloc(count + 1, sizeof(double));
  for (int i = 0; i < count; ++i) {
    set(send, t, i, input(rank, i, op));
    set(recv, t, i, in_place ? input(rank, i, op) : kUntouched);
  }
  const void* from = in_place ? MPI_IN_PLACE : send;
  MPI_Request req;
  if (nonblocking) {
    MPI_OK(exclusive ? MPI_Iexscan(from, recv, count, t, op, MPI_COMM_WORLD, &req)
                     : MPI_Iscan(from, recv, count, t, op, MPI_COMM_WORLD, &req));
    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
  } else {
    MPI_OK(exclusive ? MPI_Exscan(from, recv, count, t, op, MPI_COMM_WORLD)
                     : MPI_Scan(from, recv, count, t, op, MPI_COMM_WORLD));
  }
  const int last = exclusive ? rank - 1 : rank;
  for (int i = 0; i < count; ++i)
    CHECK(get(recv, t, i) == wanted(last, i, op, in_place), "%s%s %s %s count %d%s: element %d is %g, expected %g",
          nonblocking ? "MPI_I" : "MPI_", exclusive ? "exscan" : "scan", type_names[ti], op_names[oi], count,
          in_place ? " in place" : "", i, get(recv, t, i), wanted(last, i, op, in_place));
  for (int i = 0; i < count; ++i)
    CHECK(get(send, t, i) == input(rank, i, op), "sendbuf element %d changed", i);
  free(send);
  free(recv);
}

/* Bad arguments under MPI_ERRORS_RETURN: each returns its class, and the next calls work. */
static void test_errors(void) {
  int buf[4] = {1, 2, 3, 4}, out[4] = {0};
  MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  EXPECT_CLASS(MPI_Scan(buf, out, 4, MPI_INT, MPI_SUM, MPI_COMM_NULL), MPI_ERR_COMM);
  EXPECT_CLASS(MPI_Exscan(buf, out, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD), MPI_ERR_OP);
  EXPECT_CLASS(MPI_Scan(buf, out, 1, MPI_FLOAT, MPI_BAND, MPI_COMM_WORLD), MPI_ERR_OP);
  if (!MPICH_BUGS) {
    /* MPICH 4.0.2 does not check these (a null type is MPI_ERR_OP there). */
    EXPECT_CLASS(MPI_Scan(buf, out, 1, MPI_DATATYPE_NULL, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_TYPE);
    EXPECT_CLASS(MPI_Scan(buf, out, -1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_COUNT);
    EXPECT_CLASS(MPI_Exscan(buf, MPI_IN_PLACE, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_BUFFER);
  }
  MPI_Request req;
  EXPECT_CLASS(MPI_Iscan(buf, out, 4, MPI_INT, MPI_SUM, MPI_COMM_NULL, &req), MPI_ERR_COMM);
  /* The calls after the errors work. */
  MPI_OK(MPI_Scan(buf, out, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
  for (int i = 0; i < 4; ++i) CHECK(out[i] == (i + 1) * (rank + 1), "MPI_Scan after the errors: %d", out[i]);
  MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char** argv) {
  start_test(&argc, &argv, &rank, &size);
  int k = 0;
  for (int ci = 0; ci < NUM_TEST_COUNTS; ++ci)
    for (int ti = 0; ti < NTYPES; ++ti)
      for (int oi = 0; oi < NOPS; ++oi)
        for (int exclusive = 0; exclusive < 2; ++exclusive)
          for (int in_place = 0; in_place < 2; ++in_place, ++k)
            run(types[ti], ti, ops[oi], oi, test_counts[ci], exclusive, in_place, k % 3 == 1);
  test_errors();
  MPI_OK(MPI_Finalize());
  return 0;
}
