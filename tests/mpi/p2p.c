/* Point to point: send / recv, ssend, rsend, isend / irecv with wait,
 * waitall, test and testall, sendrecv and sendrecv_replace, MPI_PROC_NULL,
 * MPI_STATUS(ES)_IGNORE, receives larger than the message with
 * MPI_Get_count, several messages of one tag in order, self messages. */
#include <string.h>

#include "check.h"

static int rank, size;

static int value(int from, int to, int i) { return from * 1000000 + to * 10000 + i; }

static void check_data(const int* buf, int from, int to, int count, const char* what) {
  for (int i = 0; i < count; ++i)
    CHECK(buf[i] == value(from, to, i), "%s (count %d from %d): element %d is %d, expected %d", what, count, from, i,
          buf[i], value(from, to, i));
}

int main(int argc, char** argv) {
  start_test(&argc, &argv, &rank, &size);
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  for (int ci = 0; ci < NUM_TEST_COUNTS; ++ci) {
    const int count = test_counts[ci];
    int* out = malloc((count + 1) * sizeof(int));
    int* in = malloc((count + 10) * sizeof(int));
    for (int i = 0; i < count; ++i) out[i] = value(rank, next, i);
    MPI_Status st;

    /* A ring of nonblocking messages into receives 9 elements larger. */
    MPI_Request reqs[2];
    MPI_OK(MPI_Irecv(in, count + 9, MPI_INT, prev, 11, MPI_COMM_WORLD, &reqs[0]));
    MPI_OK(MPI_Isend(out, count, MPI_INT, next, 11, MPI_COMM_WORLD, &reqs[1]));
    MPI_OK(MPI_Wait(&reqs[0], &st));
    check_status(&st, prev, 11, count, "MPI_Irecv");
    check_data(in, prev, rank, count, "MPI_Irecv");
    MPI_OK(MPI_Wait(&reqs[1], MPI_STATUS_IGNORE));
    CHECK(reqs[0] == MPI_REQUEST_NULL && reqs[1] == MPI_REQUEST_NULL, "MPI_Wait left a request set");

    /* Blocking: even ranks send first, odd ranks receive first (a ring of
     * one rank talks to itself through the nonblocking forms above). */
    if (size > 1) {
      const int sender = rank % 2 == 0;
      for (int round = 0; round < 2; ++round) {
        if (sender == (round == 0)) {
          if (round == 0)
            MPI_OK(MPI_Ssend(out, count, MPI_INT, next, 12, MPI_COMM_WORLD));
          else
            MPI_OK(MPI_Send(out, count, MPI_INT, next, 12, MPI_COMM_WORLD));
        } else {
          memset(in, 0, (count + 10) * sizeof(int));
          MPI_OK(MPI_Recv(in, count + 1, MPI_INT, prev, 12, MPI_COMM_WORLD, &st));
          check_status(&st, prev, 12, count, "MPI_Recv");
          check_data(in, prev, rank, count, "MPI_Recv");
        }
      }
    }

    /* Sendrecv around the ring, and sendrecv_replace the other way. */
    MPI_OK(MPI_Sendrecv(out, count, MPI_INT, next, 13, in, count + 9, MPI_INT, prev, 13, MPI_COMM_WORLD, &st));
    check_status(&st, prev, 13, count, "MPI_Sendrecv");
    check_data(in, prev, rank, count, "MPI_Sendrecv");
    for (int i = 0; i < count; ++i) in[i] = value(rank, prev, i);
    MPI_OK(MPI_Sendrecv_replace(in, count, MPI_INT, prev, 14, next, 14, MPI_COMM_WORLD, &st));
    check_status(&st, next, 14, count, "MPI_Sendrecv_replace");
    check_data(in, next, rank, count, "MPI_Sendrecv_replace");

    /* Three synchronous messages of one tag (the last one element shorter)
     * arrive in the order sent; Testall on the sends, Waitall on the receives. */
    int* many = malloc(3 * (count + 1) * sizeof(int));
    MPI_Request r6[6];
    MPI_Status st3[3];
    for (int m = 0; m < 3; ++m)
      MPI_OK(MPI_Irecv(many + m * (count + 1), count + 1, MPI_INT, prev, 15, MPI_COMM_WORLD, &r6[m]));
    int* outs = malloc(3 * (count + 1) * sizeof(int));
    for (int m = 0; m < 3; ++m) {
      for (int i = 0; i < count; ++i) outs[m * (count + 1) + i] = value(rank, next, i + m);
      MPI_OK(MPI_Issend(outs + m * (count + 1), count - (m == 2 && count > 0), MPI_INT, next, 15, MPI_COMM_WORLD, &r6[3 + m]));
    }
    int done = 0;
    while (!done) MPI_OK(MPI_Testall(3, r6 + 3, &done, MPI_STATUSES_IGNORE));
    MPI_OK(MPI_Waitall(3, r6, st3));
    for (int m = 0; m < 3; ++m) {
      const int c = count - (m == 2 && count > 0);
      check_status(&st3[m], prev, 15, c, "MPI_Waitall");
      for (int i = 0; i < c; ++i)
        CHECK(many[m * (count + 1) + i] == value(prev, rank, i + m), "message %d of one tag: element %d is %d", m, i,
              many[m * (count + 1) + i]);
    }
    free(many);
    free(outs);

    /* MPI_PROC_NULL: done at once, with the empty status. */
    MPI_OK(MPI_Send(out, count, MPI_INT, MPI_PROC_NULL, 16, MPI_COMM_WORLD));
    MPI_OK(MPI_Recv(in, count, MPI_INT, MPI_PROC_NULL, 16, MPI_COMM_WORLD, &st));
    int got = -1;
    MPI_OK(MPI_Get_count(&st, MPI_INT, &got));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && got == 0,
          "MPI_Recv from MPI_PROC_NULL: source %d, tag %d, count %d", st.MPI_SOURCE, st.MPI_TAG, got);
    MPI_OK(MPI_Irecv(in, count, MPI_INT, MPI_PROC_NULL, 16, MPI_COMM_WORLD, &reqs[0]));
    MPI_OK(MPI_Wait(&reqs[0], &st));
    CHECK(reqs[0] == MPI_REQUEST_NULL && (MPICH_BUGS || st.MPI_SOURCE == MPI_PROC_NULL),
          "MPI_Wait of a receive from MPI_PROC_NULL: source %d", st.MPI_SOURCE);

    /* MPI_Get_count in another type: bytes, and a count that does not divide. */
    if (count > 0) {
      MPI_OK(MPI_Sendrecv(out, count, MPI_INT, rank, 17, in, count + 9, MPI_INT, rank, 17, MPI_COMM_WORLD, &st));
      MPI_OK(MPI_Get_count(&st, MPI_BYTE, &got));
      CHECK(got == count * (int)sizeof(int), "MPI_Get_count in MPI_BYTE is %d, expected %d", got,
            count * (int)sizeof(int));
      MPI_OK(MPI_Get_count(&st, MPI_DOUBLE, &got));
      CHECK(count % 2 == 0 ? got == count / 2 : got == MPI_UNDEFINED, "MPI_Get_count in MPI_DOUBLE of %d ints is %d",
            count, got);
    }
    free(out);
    free(in);
  }
  MPI_OK(MPI_Finalize());
  return 0;
}
