/* Wildcard receives and probes: MPI_ANY_SOURCE and MPI_ANY_TAG with every
 * rank (itself too) sending, each sender's messages taken in the order sent
 * whatever their tags; MPI_Probe and MPI_Iprobe telling a message's size
 * before its receive; MPI_Mprobe / MPI_Improbe with MPI_Mrecv / MPI_Imrecv;
 * MPI_PROC_NULL and MPI_MESSAGE_NO_PROC; a synchronous send to a wildcard
 * receive; and large messages on two communicators at once, which both
 * move while a call (a receive, a blocking collective) waits on one of
 * them. Every element checked. */
#include <string.h>

#include "check.h"

static int rank, size;

static int value(int from, int to, int tag, int seq, int i) {
  return from * 1000003 + to * 10007 + tag * 101 + seq * 7919 + i * 13;
}

static void fill(int* buf, int from, int to, int tag, int seq, int count) {
  for (int i = 0; i < count; ++i) buf[i] = value(from, to, tag, seq, i);
}

/* buf holds message (from, rank, tag, seq) of count elements, then `extra` untouched (-1) ones. */
static void check_message(const int* buf, int from, int tag, int seq, int count, int extra, const char* what) {
  for (int i = 0; i < count + extra; ++i) {
    const int want = i < count ? value(from, rank, tag, seq, i) : -1;
    CHECK(buf[i] == want, "%s (count %d from %d, tag %d, message %d): element %d is %d, expected %d", what, count, from,
          tag, seq, i, buf[i], want);
  }
}

static int tag_of(int from, int to, int seq) { return 3 + (from + 2 * to + 5 * seq) % 4; }

/* Every rank sends three messages to every rank; each takes them all with
 * MPI_ANY_SOURCE and MPI_ANY_TAG, posted before the messages or after them.
 * (Each part ends with a barrier: a wildcard must not take a message of the
 * next part, which a faster rank may have sent already.) */
static void any_source_any_tag(int count, int late) {
  enum { PER_PEER = 3 };
  const int n = PER_PEER * size, stride = count + 2;
  int* out = malloc((size_t)n * (count + 1) * sizeof(int));
  int* in = malloc((size_t)n * stride * sizeof(int));
  MPI_Request* recvs = malloc(n * sizeof(MPI_Request));
  MPI_Request* sends = malloc(n * sizeof(MPI_Request));
  MPI_Status* st = malloc(n * sizeof(MPI_Status));
  for (int i = 0; i < n * stride; ++i) in[i] = -1;
  if (!late)
    for (int k = 0; k < n; ++k)
      MPI_OK(MPI_Irecv(in + k * stride, stride, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &recvs[k]));
  for (int seq = 0, k = 0; seq < PER_PEER; ++seq)
    for (int p = 0; p < size; ++p, ++k) {
      const int to = (rank + p) % size;
      fill(out + k * (count + 1), rank, to, tag_of(rank, to, seq), seq, count);
      MPI_OK(MPI_Isend(out + k * (count + 1), count, MPI_INT, to, tag_of(rank, to, seq), MPI_COMM_WORLD, &sends[k]));
    }
  if (late) {
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    for (int k = 0; k < n; ++k)
      MPI_OK(MPI_Irecv(in + k * stride, stride, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &recvs[k]));
  }
  MPI_OK(MPI_Waitall(n, recvs, st));
  MPI_OK(MPI_Waitall(n, sends, MPI_STATUSES_IGNORE));
  int* next_seq = calloc(size, sizeof(int));
  for (int k = 0; k < n; ++k) {
    const int from = st[k].MPI_SOURCE;
    CHECK(from >= 0 && from < size && next_seq[from] < PER_PEER, "wildcard receive %d: source %d", k, from);
    const int seq = next_seq[from]++;
    check_status(&st[k], from, tag_of(from, rank, seq), count,
                 late ? "a wildcard receive after the messages came" : "a wildcard receive posted first");
    check_message(in + k * stride, from, tag_of(from, rank, seq), seq, count, 2, "a wildcard receive");
  }
  free(next_seq);
  free(out);
  free(in);
  free(recvs);
  free(sends);
  free(st);
  MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* To the next rank, messages of count, count + 5 and count + 9 elements:
 * MPI_Probe and MPI_Iprobe tell each one's size for a receive of exactly
 * that; matched probes take the next ones. */
static void probes(int count) {
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  enum { MESSAGES = 5 };
  int* out = malloc((size_t)MESSAGES * (count + 9) * sizeof(int));
  MPI_Request sends[MESSAGES];
  for (int k = 0; k < MESSAGES; ++k) {
    const int elements = count + (k % 3) * 5 - (k % 3 == 2);
    fill(out + k * (count + 9), rank, next, 40 + k, k, elements);
    MPI_OK(MPI_Isend(out + k * (count + 9), elements, MPI_INT, next, 40 + k, MPI_COMM_WORLD, &sends[k]));
  }
  for (int k = 0; k < MESSAGES; ++k) {
    const int elements = count + (k % 3) * 5 - (k % 3 == 2);
    MPI_Status st;
    MPI_Message message = MPI_MESSAGE_NULL;
    int flag = 0;
    if (k == 0) {
      MPI_OK(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
    } else if (k == 1) {
      while (!flag) MPI_OK(MPI_Iprobe(prev, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
    } else if (k == 2) {
      MPI_OK(MPI_Mprobe(MPI_ANY_SOURCE, 42, MPI_COMM_WORLD, &message, &st));
    } else {
      while (!flag) MPI_OK(MPI_Improbe(prev, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &message, &st));
    }
    check_status(&st, prev, 40 + k, elements, "a probe");
    int got = 0;
    MPI_OK(MPI_Get_count(&st, MPI_INT, &got));
    int* in = malloc((got + 1) * sizeof(int));
    for (int i = 0; i < got + 1; ++i) in[i] = -1;
    MPI_Status rst;
    if (k < 2) {
      MPI_OK(MPI_Recv(in, got, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &rst));
    } else if (k == 2) {
      MPI_OK(MPI_Mrecv(in, got, MPI_INT, &message, &rst));
    } else {
      MPI_Request r;
      MPI_OK(MPI_Imrecv(in, got, MPI_INT, &message, &r));
      MPI_OK(MPI_Wait(&r, &rst));
    }
    CHECK(k < 2 || message == MPI_MESSAGE_NULL, "a matched receive left its message set");
    check_status(&rst, prev, 40 + k, elements, "the receive of a probed message");
    check_message(in, prev, 40 + k, k, elements, 1, "the receive of a probed message");
    free(in);
  }
  MPI_OK(MPI_Waitall(MESSAGES, sends, MPI_STATUSES_IGNORE));
  free(out);
  MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* MPI_PROC_NULL: probes find an empty message at once. */
static void proc_null(void) {
  MPI_Status st;
  int flag = 0, got = -1, x = 7;
  MPI_Message message = MPI_MESSAGE_NULL;
  MPI_OK(MPI_Probe(MPI_PROC_NULL, 5, MPI_COMM_WORLD, &st));
  MPI_OK(MPI_Get_count(&st, MPI_INT, &got));
  CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && got == 0,
        "MPI_Probe of MPI_PROC_NULL: source %d, tag %d, count %d", st.MPI_SOURCE, st.MPI_TAG, got);
  MPI_OK(MPI_Iprobe(MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
  CHECK(flag && st.MPI_SOURCE == MPI_PROC_NULL, "MPI_Iprobe of MPI_PROC_NULL: flag %d", flag);
  MPI_OK(MPI_Mprobe(MPI_PROC_NULL, 5, MPI_COMM_WORLD, &message, &st));
  CHECK(message == MPI_MESSAGE_NO_PROC, "MPI_Mprobe of MPI_PROC_NULL gave message 0x%x", (unsigned)message);
  MPI_OK(MPI_Mrecv(&x, 1, MPI_INT, &message, &st));
  CHECK(x == 7 && st.MPI_SOURCE == MPI_PROC_NULL && message == MPI_MESSAGE_NULL,
        "MPI_Mrecv of MPI_MESSAGE_NO_PROC: element %d, source %d", x, st.MPI_SOURCE);
}

/* A synchronous send that a wildcard receive takes; MPI_Sendrecv with wildcards. */
static void synchronous_and_sendrecv(int count) {
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  int* out = malloc((count + 1) * sizeof(int));
  int* in = malloc((count + 3) * sizeof(int));
  MPI_Request r;
  MPI_Status st;
  fill(out, rank, next, 60, 0, count);
  for (int i = 0; i < count + 3; ++i) in[i] = -1;
  MPI_OK(MPI_Irecv(in, count + 2, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &r));
  MPI_OK(MPI_Ssend(out, count, MPI_INT, next, 60, MPI_COMM_WORLD));
  MPI_OK(MPI_Wait(&r, &st));
  check_status(&st, prev, 60, count, "a wildcard receive of a synchronous send");
  check_message(in, prev, 60, 0, count, 3, "a wildcard receive of a synchronous send");
  fill(out, rank, next, 61, 1, count);
  for (int i = 0; i < count + 3; ++i) in[i] = -1;
  MPI_OK(MPI_Sendrecv(out, count, MPI_INT, next, 61, in, count + 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG,
                      MPI_COMM_WORLD, &st));
  check_status(&st, prev, 61, count, "MPI_Sendrecv from any rank");
  check_message(in, prev, 61, 1, count, 3, "MPI_Sendrecv from any rank");
  free(out);
  free(in);
  MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* A dup of the world and buffers of count ints (in filled with -1) for a
 * pair of ranks, rank and rank ^ 1 (`other`, which may be missing). */
typedef struct {
  MPI_Comm dup;
  int *out, *in;
  int other;
} two_comms_t;

static two_comms_t two_comms_begin(int count) {
  two_comms_t t = {MPI_COMM_NULL, malloc((size_t)count * sizeof(int)), malloc((size_t)count * sizeof(int)), rank ^ 1};
  MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &t.dup));
  for (int i = 0; i < count; ++i) t.in[i] = -1;
  return t;
}

static void two_comms_end(two_comms_t* t) {
  MPI_OK(MPI_Comm_free(&t->dup));
  free(t->out);
  free(t->in);
}

/* Large messages on two communicators: in each pair of ranks the even one
 * sends on a dup, then waits on the world for the odd one's answer, which
 * comes only once the odd one received the message on the dup: the dup's
 * message must move while the even rank waits on the world. */
static void two_communicators(int count) {
  two_comms_t t = two_comms_begin(count);
  int *out = t.out, *in = t.in;
  const MPI_Comm dup = t.dup;
  const int other = t.other;
  if (other < size) {
    MPI_Status st;
    fill(out, rank, other, 70 + rank % 2, 0, count);
    if (rank % 2 == 0) {
      MPI_Request sent;
      MPI_OK(MPI_Isend(out, count, MPI_INT, other, 70, dup, &sent));
      MPI_OK(MPI_Recv(in, count, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
      MPI_OK(MPI_Wait(&sent, MPI_STATUS_IGNORE));
      check_status(&st, other, 71, count, "the answer on the world to a message on a dup");
      check_message(in, other, 71, 0, count, 0, "the answer on the world to a message on a dup");
    } else {
      MPI_OK(MPI_Recv(in, count, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, dup, &st));
      check_status(&st, other, 70, count, "a message on a dup");
      check_message(in, other, 70, 0, count, 0, "a message on a dup");
      MPI_OK(MPI_Send(out, count, MPI_INT, other, 71, MPI_COMM_WORLD));
    }
  }
  two_comms_end(&t);
}

/* A blocking collective on the world while a large message on a dup is
 * under way: each even rank of a pair sends on the dup and joins an
 * allreduce on the world, which its odd partner joins only once it received
 * the message; the dup's message must move while the even rank waits in the
 * collective. */
static void collective_beside_a_message(int count) {
  two_comms_t t = two_comms_begin(count);
  MPI_Request sent = MPI_REQUEST_NULL;
  if (t.other < size && rank % 2 == 0) {
    fill(t.out, rank, t.other, 72, 0, count);
    MPI_OK(MPI_Isend(t.out, count, MPI_INT, t.other, 72, t.dup, &sent));
  } else if (t.other < size) {
    MPI_OK(MPI_Recv(t.in, count, MPI_INT, t.other, 72, t.dup, MPI_STATUS_IGNORE));
    check_message(t.in, t.other, 72, 0, count, 0, "a message on a dup received before a collective on the world");
  }
  long mine = rank + 1, sum = 0;
  MPI_OK(MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
  CHECK(sum == (long)size * (size + 1) / 2, "MPI_Allreduce beside a message on a dup: %ld, expected %ld", sum,
        (long)size * (size + 1) / 2);
  MPI_OK(MPI_Wait(&sent, MPI_STATUS_IGNORE));
  two_comms_end(&t);
}

int main(int argc, char** argv) {
  start_test(&argc, &argv, &rank, &size);
  for (int ci = 0; ci < NUM_TEST_COUNTS; ++ci) {
    const int count = test_counts[ci];
    any_source_any_tag(count, 0);
    any_source_any_tag(count, 1);
    probes(count);
    synchronous_and_sendrecv(count);
  }
  /* One MiB and more, in an odd count. */
  any_source_any_tag(262147, 1);
  probes(262147);
  proc_null();
  two_communicators(262147);
  collective_beside_a_message(262147);
  MPI_OK(MPI_Finalize());
  return 0;
}
