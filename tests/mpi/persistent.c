/* Persistent requests: MPI_Send_init, MPI_Ssend_init, MPI_Rsend_init,
 * MPI_Bsend_init and MPI_Recv_init (from a rank and from MPI_ANY_SOURCE)
 * around a ring, started for several rounds with MPI_Start and
 * MPI_Startall, the buffers refilled between rounds; inactive requests in
 * MPI_Wait, MPI_Test, MPI_Waitall and MPI_Request_get_status (done at once,
 * empty status); MPI_Request_free of inactive and active ones; and the
 * errors of starting an active request. Every element checked. */
#include <string.h>

#include "check.h"

static int rank, size;

static int value(int from, int to, int round, int kind, int i) {
  return from * 1000003 + to * 10007 + round * 101 + kind * 7919 + i * 13;
}

enum Kind { STANDARD, SYNCHRONOUS, READY, BUFFERED, KINDS };

static int init_send(enum Kind kind, const int* buf, int count, int to, int tag, MPI_Request* r) {
  switch (kind) {
    case STANDARD: return MPI_Send_init(buf, count, MPI_INT, to, tag, MPI_COMM_WORLD, r);
    case SYNCHRONOUS: return MPI_Ssend_init(buf, count, MPI_INT, to, tag, MPI_COMM_WORLD, r);
    case READY: return MPI_Rsend_init(buf, count, MPI_INT, to, tag, MPI_COMM_WORLD, r);
    default: return MPI_Bsend_init(buf, count, MPI_INT, to, tag, MPI_COMM_WORLD, r);
  }
}

/* Three rounds of one send kind to the next rank and a receive from the
 * previous one (from any rank every other kind). */
static void ring(enum Kind kind, int count) {
  enum { ROUNDS = 3 };
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size, tag = 10 + kind;
  int* out = malloc((count + 1) * sizeof(int));
  int* in = malloc((count + 2) * sizeof(int));
  MPI_Request reqs[2];
  MPI_OK(MPI_Recv_init(in, count + 1, MPI_INT, kind % 2 ? MPI_ANY_SOURCE : prev, tag, MPI_COMM_WORLD, &reqs[0]));
  MPI_OK(init_send(kind, out, count, next, tag, &reqs[1]));
  for (int round = 0; round < ROUNDS; ++round) {
    for (int i = 0; i < count; ++i) out[i] = value(rank, next, round, kind, i);
    for (int i = 0; i < count + 2; ++i) in[i] = -1;
    MPI_Status st[2];
    if (kind == READY) {
      /* A ready send needs its receive posted: every receive first, then a barrier. */
      MPI_OK(MPI_Start(&reqs[0]));
      MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
      MPI_OK(MPI_Start(&reqs[1]));
    } else {
      MPI_OK(MPI_Startall(2, reqs));
    }
    if (round == 1) {
      MPI_OK(MPI_Wait(&reqs[0], &st[0]));
      MPI_OK(MPI_Wait(&reqs[1], &st[1]));
    } else {
      MPI_OK(MPI_Waitall(2, reqs, st));
    }
    CHECK(reqs[0] != MPI_REQUEST_NULL && reqs[1] != MPI_REQUEST_NULL, "a completed persistent request was freed");
    check_status(&st[0], prev, tag, count, "a persistent receive");
    for (int i = 0; i < count + 2; ++i) {
      const int want = i < count ? value(prev, rank, round, kind, i) : -1;
      CHECK(in[i] == want, "kind %d round %d (count %d): element %d is %d, expected %d", kind, round, count, i, in[i],
            want);
    }
    /* Inactive now: done at once, with an empty status. */
    int flag = 0;
    MPI_Status empty;
    MPI_OK(MPI_Test(&reqs[0], &flag, &empty));
    CHECK(flag && empty.MPI_SOURCE == MPI_ANY_SOURCE && empty.MPI_TAG == MPI_ANY_TAG,
          "MPI_Test of an inactive request: flag %d, source %d, tag %d", flag, empty.MPI_SOURCE, empty.MPI_TAG);
    MPI_OK(MPI_Request_get_status(reqs[1], &flag, MPI_STATUS_IGNORE));
    CHECK(flag, "MPI_Request_get_status of an inactive request: flag 0");
    MPI_OK(MPI_Wait(&reqs[1], MPI_STATUS_IGNORE));
    MPI_OK(MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE));
    /* A ready send must not reach a receive of the next round not yet posted. */
    if (kind == READY) MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
  }
  MPI_OK(MPI_Request_free(&reqs[0]));
  MPI_OK(MPI_Request_free(&reqs[1]));
  CHECK(reqs[0] == MPI_REQUEST_NULL && reqs[1] == MPI_REQUEST_NULL, "MPI_Request_free left a handle set");
  free(out);
  free(in);
}

/* An active persistent request freed: its round completes in the background. */
static void free_active(void) {
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  int out = value(rank, next, 0, 9, 0), in = -1;
  MPI_Request send, recv;
  MPI_OK(MPI_Send_init(&out, 1, MPI_INT, next, 30, MPI_COMM_WORLD, &send));
  MPI_OK(MPI_Start(&send));
  MPI_OK(MPI_Request_free(&send));
  MPI_OK(MPI_Recv_init(&in, 1, MPI_INT, prev, 30, MPI_COMM_WORLD, &recv));
  MPI_OK(MPI_Start(&recv));
  MPI_OK(MPI_Wait(&recv, MPI_STATUS_IGNORE));
  CHECK(in == value(prev, rank, 0, 9, 0), "a message from a freed active request: %d", in);
  MPI_OK(MPI_Request_free(&recv));
  MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

static void errors(void) {
  MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  int x = 0, y = 5;
  MPI_Request r, plain;
  MPI_OK(MPI_Recv_init(&x, 1, MPI_INT, rank, 31, MPI_COMM_WORLD, &r));
  MPI_OK(MPI_Start(&r));
  EXPECT_CLASS(MPI_Start(&r), MPI_ERR_REQUEST);
  MPI_OK(MPI_Send(&y, 1, MPI_INT, rank, 31, MPI_COMM_WORLD));
  MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
  MPI_OK(MPI_Request_free(&r));
  /* A request that is not persistent cannot be started. */
  MPI_OK(MPI_Irecv(&x, 1, MPI_INT, rank, 32, MPI_COMM_WORLD, &plain));
  EXPECT_CLASS(MPI_Start(&plain), MPI_ERR_REQUEST);
  MPI_OK(MPI_Send(&y, 1, MPI_INT, rank, 32, MPI_COMM_WORLD));
  MPI_OK(MPI_Wait(&plain, MPI_STATUS_IGNORE));
  /* Bad arguments fail at init. */
  EXPECT_CLASS(MPI_Send_init(&x, 1, MPI_INT, size, 0, MPI_COMM_WORLD, &r), MPI_ERR_RANK);
  EXPECT_CLASS(MPI_Recv_init(&x, -1, MPI_INT, 0, 0, MPI_COMM_WORLD, &r), MPI_ERR_COUNT);
  MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char** argv) {
  start_test(&argc, &argv, &rank, &size);
  /* Room for a buffered message of every count at once. */
  const int attach = 4 * (1027 * (int)sizeof(int) + MPI_BSEND_OVERHEAD);
  void* buffer = malloc(attach);
  MPI_OK(MPI_Buffer_attach(buffer, attach));
  for (int ci = 0; ci < NUM_TEST_COUNTS; ++ci)
    for (int kind = 0; kind < KINDS; ++kind) ring((enum Kind)kind, test_counts[ci]);
  free_active();
  errors();
  int detached = 0;
  MPI_OK(MPI_Buffer_detach(&buffer, &detached));
  free(buffer);
  MPI_OK(MPI_Finalize());
  return 0;
}
