/* Generalized requests (MPI_Grequest_start, MPI_Grequest_complete): not
 * done until completed; MPI_Wait, _Test, _Waitall, _Testany, _Waitany,
 * _Testsome and MPI_Request_get_status on them, alone and beside point to
 * point requests; query_fn fills the status (count, source, tag, cancelled)
 * whenever a call reports it, free_fn runs once, after query_fn, where the
 * request is freed (by a completion call, by MPI_Request_free after
 * MPI_Grequest_complete, or by MPI_Grequest_complete after
 * MPI_Request_free); cancel_fn on MPI_Cancel, told whether the request is
 * complete; MPI_Wait while another thread completes the request; a
 * callback's error is the call's. */
#include <pthread.h>
#include <time.h>

#include "check.h"

static int rank, size;

/* What a request's callbacks saw: how often each ran, and the order. */
typedef struct {
  int id;
  int queries, frees, cancels;
  int cancel_complete; /* cancel_fn's `complete` argument */
  int cancelled;       /* query_fn reports it cancelled */
  int free_error;      /* free_fn returns this */
  int last;            /* 'q', 'f' or 'c': the callback that ran last */
} state_t;

static int query_fn(void* extra, MPI_Status* status) {
  state_t* s = extra;
  CHECK(s->frees == 0, "request %d: query_fn after free_fn", s->id);
  ++s->queries;
  s->last = 'q';
  MPI_Status_set_elements(status, MPI_INT, s->id + 1);
  MPI_Status_set_cancelled(status, s->cancelled);
  status->MPI_SOURCE = rank;
  status->MPI_TAG = 100 + s->id;
  return MPI_SUCCESS;
}

static int free_fn(void* extra) {
  state_t* s = extra;
  ++s->frees;
  s->last = 'f';
  return s->free_error;
}

static int cancel_fn(void* extra, int complete) {
  state_t* s = extra;
  ++s->cancels;
  s->cancel_complete = complete;
  s->cancelled = !complete;
  s->last = 'c';
  return MPI_SUCCESS;
}

static MPI_Request start(state_t* s, int id) {
  memset(s, 0, sizeof *s);
  s->id = id;
  MPI_Request r = MPI_REQUEST_NULL;
  MPI_OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, s, &r));
  CHECK(r != MPI_REQUEST_NULL, "MPI_Grequest_start gave MPI_REQUEST_NULL");
  return r;
}

/* st is what request id's query_fn reported. */
static void check_reported(const MPI_Status* st, int id, const char* what) {
  int count = -1, cancelled = -1;
  MPI_OK(MPI_Get_count(st, MPI_INT, &count));
  MPI_OK(MPI_Test_cancelled(st, &cancelled));
  CHECK(count == id + 1 && st->MPI_SOURCE == rank && st->MPI_TAG == 100 + id && cancelled == 0,
        "%s: status count %d, source %d, tag %d, cancelled %d; expected %d, %d, %d, 0", what, count, st->MPI_SOURCE,
        st->MPI_TAG, cancelled, id + 1, rank, 100 + id);
}

static void check_calls(const state_t* s, int queries, int frees, const char* what) {
  CHECK(s->queries == queries && s->frees == frees, "%s: query_fn ran %d times, free_fn %d; expected %d and %d", what,
        s->queries, s->frees, queries, frees);
}

static void wait_and_test(void) {
  state_t a, b;
  MPI_Request r = start(&a, 0);
  int flag = -1;
  MPI_Status st;
  MPI_OK(MPI_Test(&r, &flag, &st));
  CHECK(!flag && r != MPI_REQUEST_NULL, "MPI_Test of a generalized request not completed: flag %d", flag);
  MPI_OK(MPI_Request_get_status(r, &flag, &st));
  CHECK(!flag, "MPI_Request_get_status of a generalized request not completed: flag %d", flag);
  check_calls(&a, 0, 0, "before MPI_Grequest_complete");
  MPI_OK(MPI_Grequest_complete(r));
  check_calls(&a, 0, 0, "MPI_Grequest_complete");
  MPI_OK(MPI_Request_get_status(r, &flag, &st));
  CHECK(flag && r != MPI_REQUEST_NULL, "MPI_Request_get_status of a complete generalized request: flag %d", flag);
  check_reported(&st, 0, "MPI_Request_get_status");
  check_calls(&a, 1, 0, "MPI_Request_get_status");
  MPI_OK(MPI_Test(&r, &flag, &st));
  CHECK(flag && r == MPI_REQUEST_NULL, "MPI_Test of a complete generalized request: flag %d", flag);
  check_reported(&st, 0, "MPI_Test");
  check_calls(&a, 2, 1, "MPI_Test");
  CHECK(a.last == 'f', "free_fn did not run last");

  r = start(&b, 1);
  MPI_OK(MPI_Grequest_complete(r));
  MPI_OK(MPI_Wait(&r, &st));
  CHECK(r == MPI_REQUEST_NULL, "MPI_Wait left the generalized request set");
  check_reported(&st, 1, "MPI_Wait");
  check_calls(&b, 1, 1, "MPI_Wait");
}

/* Generalized requests among a send and a receive (to the next rank, from the one before). */
static void beside_messages(void) {
  enum { N = 1027 };
  static int out[N], in[N];
  for (int i = 0; i < N; ++i) out[i] = rank * N + i;
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  state_t a, b;
  MPI_Request reqs[4];
  reqs[0] = start(&a, 2);
  MPI_OK(MPI_Irecv(in, N, MPI_INT, prev, 7, MPI_COMM_WORLD, &reqs[1]));
  MPI_OK(MPI_Isend(out, N, MPI_INT, next, 7, MPI_COMM_WORLD, &reqs[2]));
  reqs[3] = start(&b, 3);
  MPI_OK(MPI_Grequest_complete(reqs[3]));
  MPI_OK(MPI_Grequest_complete(reqs[0]));
  MPI_Status st[4];
  MPI_OK(MPI_Waitall(4, reqs, st));
  for (int i = 0; i < 4; ++i) CHECK(reqs[i] == MPI_REQUEST_NULL, "MPI_Waitall left request %d set", i);
  check_reported(&st[0], 2, "MPI_Waitall, request 0");
  check_reported(&st[3], 3, "MPI_Waitall, request 3");
  check_status(&st[1], prev, 7, N, "MPI_Waitall, the receive");
  for (int i = 0; i < N; ++i)
    CHECK(in[i] == prev * N + i, "the receive beside generalized requests: %d is %d", i, in[i]);
  check_calls(&a, 1, 1, "MPI_Waitall, request 0");
  check_calls(&b, 1, 1, "MPI_Waitall, request 3");

  /* MPI_STATUSES_IGNORE: query_fn still gets a status to fill. */
  reqs[0] = start(&a, 4);
  reqs[1] = start(&b, 5);
  MPI_OK(MPI_Grequest_complete(reqs[0]));
  MPI_OK(MPI_Grequest_complete(reqs[1]));
  MPI_OK(MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE));
  check_calls(&a, 1, 1, "MPI_Waitall with MPI_STATUSES_IGNORE");
  check_calls(&b, 1, 1, "MPI_Waitall with MPI_STATUSES_IGNORE");
}

static void any_and_some(void) {
  state_t s[3];
  MPI_Request reqs[3];
  for (int i = 0; i < 3; ++i) reqs[i] = start(&s[i], 10 + i);
  int index = -1, flag = -1, outcount = -1, indices[3];
  MPI_Status st, sts[3];
  MPI_OK(MPI_Testany(3, reqs, &index, &flag, &st));
  CHECK(!flag && index == MPI_UNDEFINED, "MPI_Testany of requests not completed: flag %d, index %d", flag, index);
  MPI_OK(MPI_Testsome(3, reqs, &outcount, indices, sts));
  CHECK(outcount == 0, "MPI_Testsome of requests not completed: outcount %d", outcount);
  MPI_OK(MPI_Grequest_complete(reqs[1]));
  MPI_OK(MPI_Testany(3, reqs, &index, &flag, &st));
  CHECK(flag && index == 1 && reqs[1] == MPI_REQUEST_NULL, "MPI_Testany: flag %d, index %d", flag, index);
  check_reported(&st, 11, "MPI_Testany");
  check_calls(&s[1], 1, 1, "MPI_Testany");
  check_calls(&s[0], 0, 0, "MPI_Testany, a request not completed");
  MPI_OK(MPI_Grequest_complete(reqs[2]));
  MPI_OK(MPI_Waitany(3, reqs, &index, &st));
  CHECK(index == 2 && reqs[2] == MPI_REQUEST_NULL, "MPI_Waitany: index %d", index);
  check_reported(&st, 12, "MPI_Waitany");
  MPI_OK(MPI_Grequest_complete(reqs[0]));
  MPI_OK(MPI_Waitsome(3, reqs, &outcount, indices, sts));
  CHECK(outcount == 1 && indices[0] == 0 && reqs[0] == MPI_REQUEST_NULL, "MPI_Waitsome: outcount %d, index %d",
        outcount, indices[0]);
  check_reported(&sts[0], 10, "MPI_Waitsome");
  for (int i = 0; i < 3; ++i) check_calls(&s[i], 1, 1, "MPI_Testany, MPI_Waitany, MPI_Waitsome");
}

static void cancel(void) {
  state_t a;
  MPI_Request r = start(&a, 20);
  MPI_OK(MPI_Cancel(&r));
  CHECK(a.cancels == 1 && a.cancel_complete == 0, "MPI_Cancel before completion: cancel_fn ran %d times, complete %d",
        a.cancels, a.cancel_complete);
  MPI_OK(MPI_Grequest_complete(r));
  MPI_Status st;
  MPI_OK(MPI_Wait(&r, &st));
  int cancelled = 0;
  MPI_OK(MPI_Test_cancelled(&st, &cancelled));
  CHECK(cancelled, "a generalized request whose query_fn reports it cancelled: MPI_Test_cancelled says %d", cancelled);

  r = start(&a, 21);
  MPI_OK(MPI_Grequest_complete(r));
  MPI_OK(MPI_Cancel(&r));
  CHECK(a.cancels == 1 && a.cancel_complete == 1, "MPI_Cancel after completion: cancel_fn ran %d times, complete %d",
        a.cancels, a.cancel_complete);
  MPI_OK(MPI_Wait(&r, &st));
  MPI_OK(MPI_Test_cancelled(&st, &cancelled));
  CHECK(!cancelled, "a generalized request completed before MPI_Cancel: MPI_Test_cancelled says %d", cancelled);
  check_calls(&a, 1, 1, "MPI_Cancel after completion, then MPI_Wait");
}

static void request_free(void) {
  state_t a;
  MPI_Request r;
  if (!MPICH_BUGS) {
    r = start(&a, 30);
    MPI_Request kept = r;
    MPI_OK(MPI_Request_free(&r));
    CHECK(r == MPI_REQUEST_NULL, "MPI_Request_free left the request set");
    check_calls(&a, 0, 0, "MPI_Request_free before MPI_Grequest_complete");
    MPI_OK(MPI_Grequest_complete(kept));
    check_calls(&a, 0, 1, "MPI_Grequest_complete after MPI_Request_free");
  }
  r = start(&a, 31);
  MPI_OK(MPI_Grequest_complete(r));
  MPI_OK(MPI_Request_free(&r));
  check_calls(&a, 0, 1, "MPI_Request_free after MPI_Grequest_complete");
}

/* The usual use: another thread completes the request while MPI_Wait waits. */
static void* complete_later(void* request) {
  struct timespec pause = {0, 50 * 1000 * 1000};
  nanosleep(&pause, NULL);
  MPI_OK(MPI_Grequest_complete(*(MPI_Request*)request));
  return NULL;
}

static void completed_by_a_thread(void) {
  state_t a;
  MPI_Request r = start(&a, 50), copy = r;
  pthread_t thread;
  CHECK(pthread_create(&thread, NULL, complete_later, &copy) == 0, "pthread_create failed");
  MPI_Status st;
  MPI_OK(MPI_Wait(&r, &st));
  CHECK(pthread_join(thread, NULL) == 0, "pthread_join failed");
  CHECK(r == MPI_REQUEST_NULL, "MPI_Wait left the generalized request set");
  check_reported(&st, 50, "MPI_Wait for a request another thread completes");
  check_calls(&a, 1, 1, "MPI_Wait for a request another thread completes");
}

static void errors(void) {
  MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  state_t a;
  MPI_Request r = start(&a, 40);
  a.free_error = MPI_ERR_IO;
  MPI_OK(MPI_Grequest_complete(r));
  EXPECT_CLASS(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_ERR_IO);
  check_calls(&a, 1, 1, "a free_fn that fails");
  EXPECT_CLASS(MPI_Grequest_complete(MPI_REQUEST_NULL), MPI_ERR_REQUEST);
#ifndef MPICH_VERSION /* MPICH takes NULL functions */
  EXPECT_CLASS(MPI_Grequest_start(NULL, free_fn, cancel_fn, &a, &r), MPI_ERR_ARG);
#endif
  MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char** argv) {
  int provided = 0;
  MPI_OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
  MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
  check_rank = rank;
  wait_and_test();
  beside_messages();
  any_and_some();
  cancel();
  request_free();
  completed_by_a_thread();
  errors();
  MPI_OK(MPI_Finalize());
  return 0;
}
