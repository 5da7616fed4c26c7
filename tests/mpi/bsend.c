/* Buffered sends: MPI_Buffer_attach / MPI_Buffer_detach, MPI_Bsend and
 * MPI_Ibsend around a ring (the send buffer is overwritten as soon as the
 * call returns; the message must not change), a buffer that fits exactly,
 * detached and attached again between messages, MPI_ERR_BUFFER for a buffer too
 * small or none, and other bad arguments. */
#include <string.h>

#include "check.h"

static int rank, size;

static int value(int from, int to, int m, int i) { return from * 1000000 + to * 10000 + m * 1000 + i; }

/* Three messages to next (two MPI_Bsend, one MPI_Ibsend) through a buffer
 * that holds exactly three; the receives were posted first. */
static void ring(int count) {
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size, tag = 40;
  const int bytes = count * (int)sizeof(int), room = 3 * (bytes + MPI_BSEND_OVERHEAD);
  char* buffer = malloc(room);
  int* out = malloc((count + 1) * sizeof(int));
  int* in = malloc(3 * (count + 1) * sizeof(int));
  MPI_Request recvs[3], ibsend;
  for (int m = 0; m < 3; ++m)
    MPI_OK(MPI_Irecv(in + m * (count + 1), count + 1, MPI_INT, prev, tag, MPI_COMM_WORLD, &recvs[m]));
  MPI_OK(MPI_Buffer_attach(buffer, room));
  for (int m = 0; m < 3; ++m) {
    for (int i = 0; i < count; ++i) out[i] = value(rank, next, m, i);
    if (m < 2)
      MPI_OK(MPI_Bsend(out, count, MPI_INT, next, tag, MPI_COMM_WORLD));
    else
      MPI_OK(MPI_Ibsend(out, count, MPI_INT, next, tag, MPI_COMM_WORLD, &ibsend));
    for (int i = 0; i < count; ++i) out[i] = -7; /* the message was copied */
  }
  MPI_OK(MPI_Wait(&ibsend, MPI_STATUS_IGNORE));
  void* detached = NULL;
  int detached_size = -1;
  MPI_OK(MPI_Buffer_detach(&detached, &detached_size));
  CHECK(detached == buffer && detached_size == room, "MPI_Buffer_detach gave %p and %d, expected %p and %d", detached,
        detached_size, (void*)buffer, room);
  MPI_Status st[3];
  MPI_OK(MPI_Waitall(3, recvs, st));
  for (int m = 0; m < 3; ++m) {
    int got = -1;
    MPI_OK(MPI_Get_count(&st[m], MPI_INT, &got));
    CHECK(got == count && st[m].MPI_SOURCE == prev && st[m].MPI_TAG == tag,
          "buffered message %d: count %d, source %d, tag %d", m, got, st[m].MPI_SOURCE, st[m].MPI_TAG);
    for (int i = 0; i < count; ++i)
      CHECK(in[m * (count + 1) + i] == value(prev, rank, m, i),
            "buffered message %d (count %d): element %d is %d, expected %d", m, count, i, in[m * (count + 1) + i],
            value(prev, rank, m, i));
  }
  free(buffer);
  free(out);
  free(in);
}

/* A buffer with room for one message serves many, one after another:
 * MPI_Buffer_detach waits for each to leave. */
static void reuse(int count) {
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size, tag = 41;
  const int room = count * (int)sizeof(int) + MPI_BSEND_OVERHEAD;
  char* buffer = malloc(room);
  int* out = malloc((count + 1) * sizeof(int));
  int* in = malloc((count + 1) * sizeof(int));
  MPI_OK(MPI_Buffer_attach(buffer, room));
  for (int m = 0; m < 5; ++m) {
    MPI_Request recv;
    MPI_OK(MPI_Irecv(in, count, MPI_INT, prev, tag, MPI_COMM_WORLD, &recv));
    for (int i = 0; i < count; ++i) out[i] = value(rank, next, m, i);
    MPI_OK(MPI_Bsend(out, count, MPI_INT, next, tag, MPI_COMM_WORLD));
    MPI_OK(MPI_Wait(&recv, MPI_STATUS_IGNORE));
    for (int i = 0; i < count; ++i)
      CHECK(in[i] == value(prev, rank, m, i), "reused buffer, message %d (count %d): element %d is %d, expected %d", m,
            count, i, in[i], value(prev, rank, m, i));
    /* Detaching waits until the message has left; attach again for the next. */
    void* detached = NULL;
    int detached_size = 0;
    MPI_OK(MPI_Buffer_detach(&detached, &detached_size));
    MPI_OK(MPI_Buffer_attach(detached, detached_size));
  }
  void* detached = NULL;
  int detached_size = 0;
  MPI_OK(MPI_Buffer_detach(&detached, &detached_size));
  free(buffer);
  free(out);
  free(in);
}

static void bad_arguments(void) {
  MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  const int count = 64, bytes = count * (int)sizeof(int);
  int out[64] = {0};
  char* buffer = malloc(2 * (bytes + MPI_BSEND_OVERHEAD));
  MPI_Request req;
  /* No buffer attached. */
  EXPECT_CLASS(MPI_Bsend(out, count, MPI_INT, rank, 42, MPI_COMM_WORLD), MPI_ERR_BUFFER);
  /* A buffer smaller than MPI_BSEND_OVERHEAD. */
  EXPECT_CLASS(MPI_Buffer_attach(buffer, MPI_BSEND_OVERHEAD - 1), MPI_ERR_BUFFER);
  /* Room for the data but not for MPI_BSEND_OVERHEAD (MPICH takes less than
   * that overhead, so a buffer just short of it may work there). */
  MPI_OK(MPI_Buffer_attach(buffer, bytes));
  EXPECT_CLASS(MPI_Bsend(out, count, MPI_INT, rank, 42, MPI_COMM_WORLD), MPI_ERR_BUFFER);
  EXPECT_CLASS(MPI_Ibsend(out, count, MPI_INT, rank, 42, MPI_COMM_WORLD, &req), MPI_ERR_BUFFER);
  /* A second attach. */
  EXPECT_CLASS(MPI_Buffer_attach(buffer, bytes), MPI_ERR_BUFFER);
  /* The usual checks of a send. */
  EXPECT_CLASS(MPI_Bsend(out, count, MPI_INT, size, 42, MPI_COMM_WORLD), MPI_ERR_RANK);
  EXPECT_CLASS(MPI_Bsend(out, -1, MPI_INT, rank, 42, MPI_COMM_WORLD), MPI_ERR_COUNT);
  EXPECT_CLASS(MPI_Bsend(out, count, MPI_INT, rank, -3, MPI_COMM_WORLD), MPI_ERR_TAG);
  EXPECT_CLASS(MPI_Bsend(out, count, MPI_INT, rank, 42, MPI_COMM_NULL), MPI_ERR_COMM);
  void* detached = NULL;
  int detached_size = 0;
  MPI_OK(MPI_Buffer_detach(&detached, &detached_size));
  CHECK(detached == buffer && detached_size == bytes, "MPI_Buffer_detach after failed sends gave %p and %d", detached,
        detached_size);
  free(buffer);
  MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char** argv) {
  start_test(&argc, &argv, &rank, &size);
  for (int ci = 0; ci < NUM_TEST_COUNTS; ++ci) {
    ring(test_counts[ci]);
    reuse(test_counts[ci]);
  }
  /* Large enough that the message is still on its way when the send
   * buffer is overwritten. */
  ring(1 << 20);
  bad_arguments();
  MPI_OK(MPI_Finalize());
  return 0;
}
