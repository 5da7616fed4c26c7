/* Communicators: dup, split (by parity, reversed keys, MPI_UNDEFINED),
 * split_type(MPI_COMM_TYPE_SHARED), compare and free, with collectives and
 * point to point on the pieces. */
#include "check.h"

static int rank, size;

/* An allreduce and a bcast on comm, whose members are the world ranks
 * `members` (in comm's rank order). */
static void check_comm(MPI_Comm comm, const int* members, int n, const char* what) {
  int r = -1, s = -1;
  MPI_OK(MPI_Comm_rank(comm, &r));
  MPI_OK(MPI_Comm_size(comm, &s));
  CHECK(s == n, "%s: size %d, expected %d", what, s, n);
  CHECK(r >= 0 && r < n && members[r] == rank, "%s: rank %d, but world rank %d is member %d", what, r, rank,
        r >= 0 && r < n ? members[r] : -1);
  for (int ci = 0; ci < NUM_TEST_COUNTS; ++ci) {
    const int count = test_counts[ci];
    long* buf = malloc((count + 1) * sizeof(long));
    for (int i = 0; i < count; ++i) buf[i] = rank * 1000 + i;
    MPI_OK(MPI_Allreduce(MPI_IN_PLACE, buf, count, MPI_LONG, MPI_SUM, comm));
    long members_sum = 0;
    for (int m = 0; m < n; ++m) members_sum += members[m];
    for (int i = 0; i < count; ++i)
      CHECK(buf[i] == members_sum * 1000 + (long)n * i, "%s: allreduce element %d is %ld, expected %ld", what, i,
            buf[i], members_sum * 1000 + (long)n * i);
    for (int i = 0; i < count; ++i) buf[i] = r == n - 1 ? 7 * i + 3 : -1;
    MPI_OK(MPI_Bcast(buf, count, MPI_LONG, n - 1, comm));
    for (int i = 0; i < count; ++i)
      CHECK(buf[i] == 7 * i + 3, "%s: bcast from the last rank: element %d is %ld", what, i, buf[i]);
    free(buf);
  }
  /* A ring of messages on the piece: from the previous rank, to the next. */
  int token = members[r], got = -1;
  MPI_OK(MPI_Sendrecv(&token, 1, MPI_INT, (r + 1) % n, 5, &got, 1, MPI_INT, (r + n - 1) % n, 5, comm,
                      MPI_STATUS_IGNORE));
  CHECK(got == members[(r + n - 1) % n], "%s: ring sendrecv got %d, expected %d", what, got, members[(r + n - 1) % n]);
}

int main(int argc, char** argv) {
  start_test(&argc, &argv, &rank, &size);
  int* members = malloc(size * sizeof(int));
  int result = -1;

  MPI_Comm dup;
  MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
  for (int i = 0; i < size; ++i) members[i] = i;
  check_comm(dup, members, size, "dup of MPI_COMM_WORLD");
  MPI_OK(MPI_Comm_compare(dup, MPI_COMM_WORLD, &result));
  CHECK(result == MPI_CONGRUENT, "MPI_Comm_compare(dup, world) is %d, expected MPI_CONGRUENT", result);
  MPI_OK(MPI_Comm_compare(dup, dup, &result));
  CHECK(result == MPI_IDENT, "MPI_Comm_compare(dup, dup) is %d, expected MPI_IDENT", result);

  /* Even and odd ranks, each piece in reverse order of world rank. */
  MPI_Comm parity;
  MPI_OK(MPI_Comm_split(dup, rank % 2, size - rank, &parity));
  int n = 0;
  for (int i = size - 1; i >= 0; --i)
    if (i % 2 == rank % 2) members[n++] = i;
  check_comm(parity, members, n, "split by parity, reversed");
  MPI_OK(MPI_Comm_compare(parity, MPI_COMM_WORLD, &result));
  CHECK(result == (size == 1 ? MPI_CONGRUENT : MPI_UNEQUAL), "MPI_Comm_compare(parity, world) is %d", result);

  /* Ranks above 0 only: rank 0 gets MPI_COMM_NULL. */
  MPI_Comm upper;
  MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, rank == 0 ? MPI_UNDEFINED : 1, 0, &upper));
  if (rank == 0) {
    CHECK(upper == MPI_COMM_NULL, "MPI_UNDEFINED's rank got a communicator");
  } else {
    for (int i = 1; i < size; ++i) members[i - 1] = i;
    check_comm(upper, members, size - 1, "split without rank 0");
    MPI_OK(MPI_Comm_free(&upper));
    CHECK(upper == MPI_COMM_NULL, "MPI_Comm_free left the handle");
  }

  /* One host: the shared split holds every rank, in world order. */
  MPI_Comm shared;
  MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shared));
  for (int i = 0; i < size; ++i) members[i] = i;
  check_comm(shared, members, size, "split_type shared");

  /* A collective on the parent between those on the pieces: each keeps its own. */
  MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
  MPI_OK(MPI_Comm_free(&shared));
  MPI_OK(MPI_Comm_free(&parity));
  MPI_OK(MPI_Comm_free(&dup));
  CHECK(dup == MPI_COMM_NULL && parity == MPI_COMM_NULL, "MPI_Comm_free left a handle");
  free(members);
  MPI_OK(MPI_Finalize());
  return 0;
}
