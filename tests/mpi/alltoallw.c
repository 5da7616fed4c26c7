/* MPI_Alltoallw and MPI_Ialltoallw: a type per peer on each side (plain
 * ints, or ints one int apart, a type whose elements do not lie packed),
 * blocks of different sizes (empty ones among them) at byte displacements
 * in reverse order with a gap before each; then in place (MPI_IN_PLACE:
 * the receive layout is the send layout too), and where every type is
 * plain. Every element of every block is checked, and every gap untouched.
 * Then the error classes of bad arguments. */
#include "check.h"

static int rank, size;
static const int GAP = -99;
static MPI_Datatype spaced; /* an int, then a gap of one int */

/* Element i of the block that rank `from` sends rank `to`. */
static int item(int from, int to, int i) { return from * 100000 + to * 1000 + i; }

/* How many ints a rank sends another: 0 to 4 more than `count`. */
static int ints(int count, int from, int to) { return count + (from + 2 * to) % 5; }
/* In place each block serves both ways, so what a and b send each other is alike. */
static int ints_both_ways(int count, int a, int b) { return count + (a + b) % 5; }

/* One side of a call: counts in elements of types[r], byte displacements. */
struct Side {
  int* counts;
  int* displs;
  MPI_Datatype* types;
  int* buf;
  int ints; /* the buffer's length */
};

/* Blocks in reverse rank order, one GAP int before each, every int GAP. */
static struct Side side(int (*block_ints)(int, int, int), int count, int sending, int (*spaced_for)(int)) {
  struct Side s;
  s.counts = malloc(size * sizeof(int));
  s.displs = malloc(size * sizeof(int));
  s.types = malloc(size * sizeof(MPI_Datatype));
  int at = 0; /* in ints */
  for (int r = size - 1; r >= 0; --r) {
    s.counts[r] = sending ? block_ints(count, rank, r) : block_ints(count, r, rank);
    s.types[r] = spaced_for(r) ? spaced : MPI_INT;
    at += 1;
    s.displs[r] = at * (int)sizeof(int);
    at += s.counts[r] * (spaced_for(r) ? 2 : 1);
  }
  s.ints = at + 1;
  s.buf = malloc(s.ints * sizeof(int));
  for (int i = 0; i < s.ints; ++i) s.buf[i] = GAP;
  return s;
}

/* The int of element i of block r. */
static int* element(const struct Side* s, int r, int i) {
  return s->buf + s->displs[r] / (int)sizeof(int) + i * (s->types[r] == spaced ? 2 : 1);
}

static void free_side(struct Side* s) {
  free(s->counts);
  free(s->displs);
  free(s->types);
  free(s->buf);
}

/* Block r of `s` holds what rank r sent; every other int is GAP. */
static void check_received(const struct Side* s, const char* what, int count) {
  int* expected = malloc(s->ints * sizeof(int));
  for (int i = 0; i < s->ints; ++i) expected[i] = GAP;
  for (int r = 0; r < size; ++r)
    for (int i = 0; i < s->counts[r]; ++i) expected[element(s, r, i) - s->buf] = item(r, rank, i);
  for (int i = 0; i < s->ints; ++i)
    CHECK(s->buf[i] == expected[i], "%s (count %d): int %d of the receive buffer is %d, expected %d", what, count, i,
          s->buf[i], expected[i]);
  free(expected);
}

static int spaced_odd_sum(int r) { return (rank + r) % 2; }
static int spaced_third(int r) { return (r + 2 * rank) % 3 == 0; }
static int never(int r) { return r < 0; }

static void test_counts_and_types(int count, int nonblocking, int (*send_spaced)(int), int (*recv_spaced)(int),
                                  const char* what) {
  struct Side send = side(ints, count, 1, send_spaced), recv = side(ints, count, 0, recv_spaced);
  for (int r = 0; r < size; ++r)
    for (int i = 0; i < send.counts[r]; ++i) *element(&send, r, i) = item(rank, r, i);
  if (nonblocking) {
    MPI_Request req;
    MPI_OK(MPI_Ialltoallw(send.buf, send.counts, send.displs, send.types, recv.buf, recv.counts, recv.displs,
                          recv.types, MPI_COMM_WORLD, &req));
    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
  } else {
    MPI_OK(MPI_Alltoallw(send.buf, send.counts, send.displs, send.types, recv.buf, recv.counts, recv.displs,
                         recv.types, MPI_COMM_WORLD));
  }
  check_received(&recv, what, count);
  for (int r = 0; r < size; ++r)
    for (int i = 0; i < send.counts[r]; ++i)
      CHECK(*element(&send, r, i) == item(rank, r, i), "%s: the send buffer changed", what);
  free_side(&send);
  free_side(&recv);
}

static void test_in_place(int count, int nonblocking) {
  struct Side s = side(ints_both_ways, count, 0, spaced_odd_sum);
  for (int r = 0; r < size; ++r)
    for (int i = 0; i < s.counts[r]; ++i) *element(&s, r, i) = item(rank, r, i);
  if (nonblocking) {
    MPI_Request req;
    MPI_OK(MPI_Ialltoallw(MPI_IN_PLACE, NULL, NULL, NULL, s.buf, s.counts, s.displs, s.types, MPI_COMM_WORLD, &req));
    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
  } else {
    MPI_OK(MPI_Alltoallw(MPI_IN_PLACE, NULL, NULL, NULL, s.buf, s.counts, s.displs, s.types, MPI_COMM_WORLD));
  }
  check_received(&s, nonblocking ? "MPI_Ialltoallw in place" : "MPI_Alltoallw in place", count);
  free_side(&s);
}

static void test_errors(void) {
  int* counts = calloc(size, sizeof(int));
  int* displs = calloc(size, sizeof(int));
  MPI_Datatype* types = malloc(size * sizeof(MPI_Datatype));
  for (int r = 0; r < size; ++r) types[r] = MPI_INT;
  int buf[2] = {0, 0};
  MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  EXPECT_CLASS(MPI_Alltoallw(buf, counts, displs, types, buf + 1, counts, displs, types, MPI_COMM_NULL),
               MPI_ERR_COMM);
  if (!MPICH_BUGS) {
    /* MPICH 4.0.2 does not check these. */
    EXPECT_CLASS(MPI_Alltoallw(buf, counts, displs, types, MPI_IN_PLACE, counts, displs, types, MPI_COMM_WORLD),
                 MPI_ERR_BUFFER);
    counts[0] = -1;
    EXPECT_CLASS(MPI_Alltoallw(buf, counts, displs, types, buf + 1, counts, displs, types, MPI_COMM_WORLD),
                 MPI_ERR_COUNT);
    counts[0] = 1;
    types[0] = MPI_DATATYPE_NULL;
    EXPECT_CLASS(MPI_Alltoallw(buf, counts, displs, types, buf + 1, counts, displs, types, MPI_COMM_WORLD),
                 MPI_ERR_TYPE);
  }
  MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
  free(counts);
  free(displs);
  free(types);
}

int main(int argc, char** argv) {
  start_test(&argc, &argv, &rank, &size);
  MPI_OK(MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &spaced));
  MPI_OK(MPI_Type_commit(&spaced));
  for (int ci = 0; ci < NUM_TEST_COUNTS; ++ci) {
    const int count = test_counts[ci];
    for (int nonblocking = 0; nonblocking < 2; ++nonblocking) {
      const char* fn = nonblocking ? "MPI_Ialltoallw" : "MPI_Alltoallw";
      test_counts_and_types(count, nonblocking, spaced_odd_sum, spaced_third, fn);
      test_counts_and_types(count, nonblocking, never, never, fn);
      test_in_place(count, nonblocking);
    }
  }
  test_errors();
  MPI_OK(MPI_Type_free(&spaced));
  MPI_OK(MPI_Finalize());
  return 0;
}
