/* Request completion: MPI_Waitany, MPI_Waitsome, MPI_Testany, MPI_Testsome
 * over receives from every rank (with MPI_REQUEST_NULL among them),
 * MPI_Request_get_status, MPI_Request_free of sends and receives,
 * MPI_Cancel of a receive that has not matched (the next receive of the
 * same source and tag gets the message), MPI_Test_cancelled, and the
 * error classes of bad arguments. */
#include <string.h>

#include "check.h"

static int rank, size;

static int value(int from, int to, int tag, int i) { return from * 1000000 + to * 10000 + tag * 100 + i; }

static void check_message(const int* buf, const MPI_Status* st, int from, int tag, int count, const char* what) {
  int got = -1;
  MPI_OK(MPI_Get_count(st, MPI_INT, &got));
  CHECK(st->MPI_SOURCE == from && st->MPI_TAG == tag && got == count,
        "%s: status says source %d, tag %d, count %d; expected %d, %d, %d", what, st->MPI_SOURCE, st->MPI_TAG, got,
        from, tag, count);
  for (int i = 0; i < count; ++i)
    CHECK(buf[i] == value(from, rank, tag, i), "%s (count %d from %d): element %d is %d, expected %d", what, count,
          from, i, buf[i], value(from, rank, tag, i));
}

enum Way { WAITANY, TESTANY, WAITSOME, TESTSOME, NUM_WAYS };
static const char* way_names[] = {"MPI_Waitany", "MPI_Testany", "MPI_Waitsome", "MPI_Testsome"};

/* Every rank sends to every rank (itself too) with a tag per way; the
 * receives sit at odd indices between MPI_REQUEST_NULL entries and finish
 * through `way`, each index exactly once. */
static void complete_some(enum Way way, int count) {
  const int tag = 20 + way, n = 2 * size + 1;
  int* out = malloc(size * (count + 1) * sizeof(int));
  int* in = malloc(size * (count + 3) * sizeof(int));
  MPI_Request* recvs = malloc(n * sizeof(MPI_Request));
  MPI_Request* sends = malloc(size * sizeof(MPI_Request));
  MPI_Status* statuses = malloc(n * sizeof(MPI_Status));
  int* indices = malloc(n * sizeof(int));
  int* seen = calloc(n, sizeof(int));
  for (int i = 0; i < n; ++i) recvs[i] = MPI_REQUEST_NULL;
  for (int p = 0; p < size; ++p)
    MPI_OK(MPI_Irecv(in + p * (count + 3), count + 3, MPI_INT, p, tag, MPI_COMM_WORLD, &recvs[2 * p + 1]));
  for (int p = 0; p < size; ++p) {
    for (int i = 0; i < count; ++i) out[p * (count + 1) + i] = value(rank, p, tag, i);
    MPI_OK(MPI_Isend(out + p * (count + 1), count, MPI_INT, p, tag, MPI_COMM_WORLD, &sends[p]));
  }
  for (int left = size; left > 0;) {
    int got = 0, flag = 0;
    switch (way) {
      case WAITANY:
        MPI_OK(MPI_Waitany(n, recvs, &indices[0], &statuses[0]));
        got = 1;
        break;
      case TESTANY:
        MPI_OK(MPI_Testany(n, recvs, &indices[0], &flag, &statuses[0]));
        CHECK(flag || indices[0] == MPI_UNDEFINED, "MPI_Testany: flag 0 but index %d", indices[0]);
        got = flag;
        break;
      case WAITSOME:
        MPI_OK(MPI_Waitsome(n, recvs, &got, indices, statuses));
        CHECK(got >= 1, "MPI_Waitsome with %d receives left finished %d", left, got);
        break;
      default:
        MPI_OK(MPI_Testsome(n, recvs, &got, indices, statuses));
        CHECK(got >= 0 && got <= left, "MPI_Testsome with %d receives left finished %d", left, got);
        break;
    }
    for (int k = 0; k < got; ++k) {
      const int i = indices[k];
      CHECK(i >= 0 && i < n && i % 2 == 1 && !seen[i], "%s: index %d (count %d) is no receive or came twice",
            way_names[way], i, count);
      CHECK(recvs[i] == MPI_REQUEST_NULL, "%s left request %d set", way_names[way], i);
      seen[i] = 1;
      check_message(in + (i / 2) * (count + 3), &statuses[k], i / 2, tag, count, way_names[way]);
    }
    left -= got;
  }
  /* Nothing active: the calls say so. */
  int index = 0, flag = 0, outcount = 0;
  MPI_Status st;
  MPI_OK(MPI_Waitany(n, recvs, &index, &st));
  CHECK(index == MPI_UNDEFINED, "MPI_Waitany of inactive requests: index %d", index);
  MPI_OK(MPI_Testany(n, recvs, &index, &flag, &st));
  CHECK(flag && index == MPI_UNDEFINED, "MPI_Testany of inactive requests: flag %d, index %d", flag, index);
  MPI_OK(MPI_Waitsome(n, recvs, &outcount, indices, MPI_STATUSES_IGNORE));
  CHECK(outcount == MPI_UNDEFINED, "MPI_Waitsome of inactive requests: outcount %d", outcount);
  MPI_OK(MPI_Testsome(n, recvs, &outcount, indices, MPI_STATUSES_IGNORE));
  CHECK(outcount == MPI_UNDEFINED, "MPI_Testsome of inactive requests: outcount %d", outcount);
  MPI_OK(MPI_Waitany(0, NULL, &index, MPI_STATUS_IGNORE));
  CHECK(index == MPI_UNDEFINED, "MPI_Waitany of no requests: index %d", index);
  MPI_OK(MPI_Waitall(size, sends, MPI_STATUSES_IGNORE));
  free(out);
  free(in);
  free(recvs);
  free(sends);
  free(statuses);
  free(indices);
  free(seen);
}

/* MPI_Request_get_status: a receive reports done without being freed; the
 * wait after it gives the same status. */
static void get_status(int count) {
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size, tag = 30;
  int* out = malloc((count + 1) * sizeof(int));
  int* in = malloc((count + 1) * sizeof(int));
  for (int i = 0; i < count; ++i) out[i] = value(rank, next, tag, i);
  MPI_Request recv, send;
  MPI_Status st;
  int flag = 0;
  MPI_OK(MPI_Irecv(in, count + 1, MPI_INT, prev, tag, MPI_COMM_WORLD, &recv));
  MPI_OK(MPI_Isend(out, count, MPI_INT, next, tag, MPI_COMM_WORLD, &send));
  while (!flag) MPI_OK(MPI_Request_get_status(recv, &flag, &st));
  CHECK(recv != MPI_REQUEST_NULL, "MPI_Request_get_status freed the request");
  check_message(in, &st, prev, tag, count, "MPI_Request_get_status");
  memset(&st, 0, sizeof st);
  MPI_OK(MPI_Wait(&recv, &st));
  check_message(in, &st, prev, tag, count, "MPI_Wait after MPI_Request_get_status");
  MPI_OK(MPI_Wait(&send, MPI_STATUS_IGNORE));
  MPI_OK(MPI_Request_get_status(MPI_REQUEST_NULL, &flag, &st));
  CHECK(flag, "MPI_Request_get_status(MPI_REQUEST_NULL) says not done");
  free(out);
  free(in);
}

/* MPI_Request_free: freed sends still arrive; a freed receive still takes
 * its message (the first of its source and tag), as the blocking receive
 * after it takes the second. */
static void request_free(int count) {
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size, tag = 31;
  int* out = malloc(2 * (count + 1) * sizeof(int));
  int* in = malloc(2 * (count + 1) * sizeof(int));
  for (int m = 0; m < 2; ++m)
    for (int i = 0; i < count; ++i) out[m * (count + 1) + i] = value(rank, next, tag, i + m);
  MPI_Request recv, sends[2];
  MPI_OK(MPI_Irecv(in, count, MPI_INT, prev, tag, MPI_COMM_WORLD, &recv));
  MPI_OK(MPI_Request_free(&recv));
  CHECK(recv == MPI_REQUEST_NULL, "MPI_Request_free left the handle set");
  for (int m = 0; m < 2; ++m) {
    MPI_OK(MPI_Isend(out + m * (count + 1), count, MPI_INT, next, tag, MPI_COMM_WORLD, &sends[m]));
    MPI_OK(MPI_Request_free(&sends[m]));
  }
  MPI_Status st;
  MPI_OK(MPI_Recv(in + count + 1, count, MPI_INT, prev, tag, MPI_COMM_WORLD, &st));
  /* Both messages of the pair have arrived once the second has; a barrier
   * lets every freed request finish before the buffers are read. */
  MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
  for (int m = 0; m < 2; ++m)
    for (int i = 0; i < count; ++i)
      CHECK(in[m * (count + 1) + i] == value(prev, rank, tag, i + m),
            "message %d with freed requests (count %d): element %d is %d, expected %d", m, count, i,
            in[m * (count + 1) + i], value(prev, rank, tag, i + m));
  free(out);
  free(in);
}

/* MPI_Cancel: of three receives posted from prev, the first and the last
 * are cancelled before anything is sent; the three messages then go to the
 * second receive and to two posted after the cancels, in order. */
static void cancel(int count) {
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size, tag = 32, stride = count + 1;
  int* out = malloc(3 * stride * sizeof(int));
  int* in = malloc(5 * stride * sizeof(int));
  for (int m = 0; m < 3; ++m)
    for (int i = 0; i < count; ++i) out[m * stride + i] = value(rank, next, tag, i + m);
  for (int i = 0; i < 5 * stride; ++i) in[i] = -1;
  MPI_Request recvs[5], sends[3];
  MPI_Status st;
  int flag = 0;
  for (int k = 0; k < 3; ++k) MPI_OK(MPI_Irecv(in + k * stride, stride, MPI_INT, prev, tag, MPI_COMM_WORLD, &recvs[k]));
  for (int k = 0; k < 3; k += 2) {
    MPI_OK(MPI_Cancel(&recvs[k]));
    MPI_OK(MPI_Wait(&recvs[k], &st));
    MPI_OK(MPI_Test_cancelled(&st, &flag));
    CHECK(flag, "receive %d, cancelled before any message came, is not cancelled", k);
  }
  MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
  for (int m = 0; m < 3; ++m) MPI_OK(MPI_Isend(out + m * stride, count, MPI_INT, next, tag, MPI_COMM_WORLD, &sends[m]));
  MPI_OK(MPI_Wait(&recvs[1], &st));
  MPI_OK(MPI_Test_cancelled(&st, &flag));
  CHECK(!flag, "a receive that got its message says it was cancelled");
  int got = -1;
  MPI_OK(MPI_Get_count(&st, MPI_INT, &got));
  CHECK(got == count, "the receive after the cancelled one got %d elements, expected %d", got, count);
  for (int k = 3; k < 5; ++k) MPI_OK(MPI_Irecv(in + k * stride, stride, MPI_INT, prev, tag, MPI_COMM_WORLD, &recvs[k]));
  MPI_OK(MPI_Waitall(2, recvs + 3, MPI_STATUSES_IGNORE));
  const int message_in[5] = {-1, 0, -1, 1, 2}; /* which message each receive holds; -1: none */
  for (int k = 0; k < 5; ++k)
    for (int i = 0; i < count + 1; ++i) {
      const int want = message_in[k] < 0 || i == count ? -1 : value(prev, rank, tag, i + message_in[k]);
      CHECK(in[k * stride + i] == want, "receive %d around cancelled ones (count %d): element %d is %d, expected %d", k,
            count, i, in[k * stride + i], want);
    }
  MPI_OK(MPI_Waitall(3, sends, MPI_STATUSES_IGNORE));
  /* Cancelling a receive that has completed changes nothing. */
  MPI_OK(MPI_Irecv(in, count + 1, MPI_INT, rank, tag + 1, MPI_COMM_WORLD, &recvs[0]));
  MPI_OK(MPI_Send(out, count, MPI_INT, rank, tag + 1, MPI_COMM_WORLD));
  MPI_OK(MPI_Request_get_status(recvs[0], &flag, MPI_STATUS_IGNORE));
  while (!flag) MPI_OK(MPI_Request_get_status(recvs[0], &flag, MPI_STATUS_IGNORE));
  MPI_OK(MPI_Cancel(&recvs[0]));
  MPI_OK(MPI_Wait(&recvs[0], &st));
  MPI_OK(MPI_Test_cancelled(&st, &flag));
  CHECK(!flag, "a completed receive was cancelled");
  for (int i = 0; i < count; ++i)
    CHECK(in[i] == value(rank, next, tag, i), "a receive cancelled after it completed: element %d is %d", i, in[i]);
  free(out);
  free(in);
}

static void bad_arguments(void) {
  MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  MPI_Request bad[2] = {(MPI_Request)0x2c0fff01, MPI_REQUEST_NULL};
  int index = 0, flag = 0, outcount = 0, indices[2];
  EXPECT_CLASS(MPI_Waitany(2, bad, &index, MPI_STATUS_IGNORE), MPI_ERR_REQUEST);
  EXPECT_CLASS(MPI_Testany(2, bad, &index, &flag, MPI_STATUS_IGNORE), MPI_ERR_REQUEST);
  EXPECT_CLASS(MPI_Waitsome(2, bad, &outcount, indices, MPI_STATUSES_IGNORE), MPI_ERR_REQUEST);
  EXPECT_CLASS(MPI_Testsome(2, bad, &outcount, indices, MPI_STATUSES_IGNORE), MPI_ERR_REQUEST);
  EXPECT_CLASS(MPI_Request_free(&bad[0]), MPI_ERR_REQUEST);
  EXPECT_CLASS(MPI_Cancel(&bad[0]), MPI_ERR_REQUEST);
  EXPECT_CLASS(MPI_Waitany(-1, bad, &index, MPI_STATUS_IGNORE), MPI_ERR_COUNT);
  EXPECT_CLASS(MPI_Testsome(-2, bad, &outcount, indices, MPI_STATUSES_IGNORE), MPI_ERR_COUNT);
  EXPECT_CLASS(MPI_Test_cancelled(NULL, &flag), MPI_ERR_ARG);
  /* A truncated message: its class from MPI_Waitany, MPI_ERR_IN_STATUS
   * with the class in the status from MPI_Waitsome. */
  int big[8] = {0}, small[2];
  MPI_Request reqs[2];
  MPI_Status st[2];
  for (int way = 0; way < 2; ++way) {
    MPI_OK(MPI_Irecv(small, 2, MPI_INT, rank, 33, MPI_COMM_WORLD, &reqs[0]));
    MPI_OK(MPI_Send(big, 8, MPI_INT, rank, 33, MPI_COMM_WORLD));
    reqs[1] = MPI_REQUEST_NULL;
    if (way == 0) {
      EXPECT_CLASS(MPI_Waitany(2, reqs, &index, &st[0]), MPI_ERR_TRUNCATE);
    } else {
      EXPECT_CLASS(MPI_Waitsome(2, reqs, &outcount, indices, st), MPI_ERR_IN_STATUS);
      CHECK(outcount == 1 && indices[0] == 0 && st[0].MPI_ERROR != MPI_SUCCESS,
            "MPI_Waitsome of a truncated receive: outcount %d, index %d, MPI_ERROR %d", outcount, indices[0],
            st[0].MPI_ERROR);
      int error_class = -1;
      MPI_Error_class(st[0].MPI_ERROR, &error_class);
      CHECK(error_class == MPI_ERR_TRUNCATE, "MPI_Waitsome's status holds class %d, not MPI_ERR_TRUNCATE", error_class);
    }
    CHECK(reqs[0] == MPI_REQUEST_NULL, "a failed receive's request is still set after way %d", way);
  }
  MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char** argv) {
  start_test(&argc, &argv, &rank, &size);
  for (int ci = 0; ci < NUM_TEST_COUNTS; ++ci) {
    for (int way = 0; way < NUM_WAYS; ++way) complete_some((enum Way)way, test_counts[ci]);
    get_status(test_counts[ci]);
    request_free(test_counts[ci]);
    cancel(test_counts[ci]);
  }
  bad_arguments();
  MPI_OK(MPI_Finalize());
  return 0;
}
