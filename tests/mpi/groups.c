/* Groups and communicators made from them: MPI_Comm_group, MPI_Group_size,
 * _rank, _incl, _excl, _range_incl, _range_excl, _translate_ranks,
 * _compare, _union, _intersection, _difference, _free, MPI_GROUP_EMPTY;
 * MPI_Comm_create (one group, disjoint groups, the empty group) and
 * MPI_Comm_create_group (called by the members only); the error classes of
 * bad arguments. */
#include <string.h>

#include "check.h"

static int rank, size;

/* The world ranks of a group's members, through MPI_Group_translate_ranks. */
static void members_of(MPI_Group group, MPI_Group world, int* out, int* n) {
  MPI_OK(MPI_Group_size(group, n));
  int* ranks = malloc((*n + 1) * sizeof(int));
  for (int i = 0; i < *n; ++i) ranks[i] = i;
  MPI_OK(MPI_Group_translate_ranks(group, *n, ranks, world, out));
  free(ranks);
}

/* The group holds exactly the world ranks `expected` in this order, and
 * this rank has the right rank in it. */
static void check_group(MPI_Group group, MPI_Group world, const int* expected, int n, const char* what) {
  int got[64], got_n = -1, my = -2, want_my = MPI_UNDEFINED;
  members_of(group, world, got, &got_n);
  CHECK(got_n == n, "%s: size %d, expected %d", what, got_n, n);
  for (int i = 0; i < n; ++i) {
    CHECK(got[i] == expected[i], "%s: member %d is world rank %d, expected %d", what, i, got[i], expected[i]);
    if (expected[i] == rank) want_my = i;
  }
  MPI_OK(MPI_Group_rank(group, &my));
  CHECK(my == want_my, "%s: MPI_Group_rank is %d, expected %d", what, my, want_my);
}

static void check_compare(MPI_Group a, MPI_Group b, int expected, const char* what) {
  int result = -1;
  MPI_OK(MPI_Group_compare(a, b, &result));
  CHECK(result == expected, "MPI_Group_compare(%s) is %d, expected %d", what, result, expected);
}

/* A communicator made of the world ranks `members` in this order (or
 * MPI_COMM_NULL where this rank is none of them): its size, rank, group,
 * and an allreduce and a ring of messages over it. */
static void check_comm(MPI_Comm comm, const int* members, int n, const char* what) {
  int my = -1;
  for (int i = 0; i < n; ++i)
    if (members[i] == rank) my = i;
  if (my < 0) {
    CHECK(comm == MPI_COMM_NULL, "%s: rank %d is no member but got a communicator", what, rank);
    return;
  }
  CHECK(comm != MPI_COMM_NULL, "%s: member %d got MPI_COMM_NULL", what, my);
  int got_size = -1, got_rank = -1;
  MPI_OK(MPI_Comm_size(comm, &got_size));
  MPI_OK(MPI_Comm_rank(comm, &got_rank));
  CHECK(got_size == n && got_rank == my, "%s: size %d, rank %d; expected %d, %d", what, got_size, got_rank, n, my);
  MPI_Group group, world;
  MPI_OK(MPI_Comm_group(comm, &group));
  MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
  check_group(group, world, members, n, what);
  MPI_OK(MPI_Group_free(&group));
  MPI_OK(MPI_Group_free(&world));
  int sum = -1, expected = 0;
  for (int i = 0; i < n; ++i) expected += members[i];
  MPI_OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, comm));
  CHECK(sum == expected, "%s: allreduce of world ranks is %d, expected %d", what, sum, expected);
  int from = -1;
  MPI_OK(MPI_Sendrecv(&rank, 1, MPI_INT, (my + 1) % n, 7, &from, 1, MPI_INT, (my + n - 1) % n, 7, comm,
                      MPI_STATUS_IGNORE));
  CHECK(from == members[(my + n - 1) % n], "%s: the ring's message came from world rank %d, expected %d", what, from,
        members[(my + n - 1) % n]);
}

int main(int argc, char** argv) {
  start_test(&argc, &argv, &rank, &size);
  CHECK(size <= 64, "this test takes at most 64 ranks");
  int all[64], reversed[64], evens[64], odds[64], n_evens = 0, n_odds = 0;
  for (int i = 0; i < size; ++i) {
    all[i] = i;
    reversed[i] = size - 1 - i;
    if (i % 2 == 0)
      evens[n_evens++] = i;
    else
      odds[n_odds++] = i;
  }

  MPI_Group world, rev, even, odd, g;
  MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
  check_group(world, world, all, size, "MPI_Comm_group(MPI_COMM_WORLD)");
  check_compare(world, world, MPI_IDENT, "world, world");

  /* Lists of ranks. */
  MPI_OK(MPI_Group_incl(world, size, reversed, &rev));
  check_group(rev, world, reversed, size, "MPI_Group_incl (reversed)");
  check_compare(world, rev, size == 1 ? MPI_IDENT : MPI_SIMILAR, "world, reversed");
  MPI_OK(MPI_Group_excl(world, n_odds, odds, &even));
  check_group(even, world, evens, n_evens, "MPI_Group_excl (the odd ranks)");
  MPI_OK(MPI_Group_incl(world, n_odds, odds, &odd));
  check_group(odd, world, odds, n_odds, "MPI_Group_incl (the odd ranks)");
  check_compare(even, odd, MPI_UNEQUAL, "evens, odds");

  /* Ranges, up and down. */
  int up[1][3] = {{0, size - 1, 2}}, down[1][3] = {{size - 1, 0, -1}};
  MPI_OK(MPI_Group_range_incl(world, 1, up, &g));
  check_group(g, world, evens, n_evens, "MPI_Group_range_incl (0..size-1 by 2)");
  check_compare(g, even, MPI_IDENT, "range evens, evens");
  MPI_OK(MPI_Group_free(&g));
  CHECK(g == MPI_GROUP_NULL, "MPI_Group_free left the handle 0x%x", (unsigned)g);
  MPI_OK(MPI_Group_range_excl(world, 1, up, &g));
  check_group(g, world, odds, n_odds, "MPI_Group_range_excl (0..size-1 by 2)");
  MPI_OK(MPI_Group_free(&g));
  MPI_OK(MPI_Group_range_incl(world, 1, down, &g));
  check_group(g, world, reversed, size, "MPI_Group_range_incl (size-1..0 by -1)");
  check_compare(g, rev, MPI_IDENT, "range reversed, reversed");
  MPI_OK(MPI_Group_free(&g));

  /* Set operations. */
  int evens_then_odds[64];
  memcpy(evens_then_odds, evens, n_evens * sizeof(int));
  memcpy(evens_then_odds + n_evens, odds, n_odds * sizeof(int));
  MPI_OK(MPI_Group_union(even, odd, &g));
  check_group(g, world, evens_then_odds, size, "MPI_Group_union (evens, odds)");
  MPI_OK(MPI_Group_free(&g));
  MPI_OK(MPI_Group_union(rev, even, &g));
  check_group(g, world, reversed, size, "MPI_Group_union (reversed, evens)");
  MPI_OK(MPI_Group_free(&g));
  MPI_OK(MPI_Group_intersection(rev, even, &g));
  int evens_down[64];
  for (int i = 0; i < n_evens; ++i) evens_down[i] = evens[n_evens - 1 - i];
  check_group(g, world, evens_down, n_evens, "MPI_Group_intersection (reversed, evens)");
  MPI_OK(MPI_Group_free(&g));
  MPI_OK(MPI_Group_difference(world, even, &g));
  check_group(g, world, odds, n_odds, "MPI_Group_difference (world, evens)");
  MPI_OK(MPI_Group_free(&g));
  MPI_OK(MPI_Group_difference(even, world, &g));
  check_group(g, world, NULL, 0, "MPI_Group_difference (evens, world)");
  check_compare(g, MPI_GROUP_EMPTY, MPI_IDENT, "an empty difference, MPI_GROUP_EMPTY");
  if (g != MPI_GROUP_EMPTY) MPI_OK(MPI_Group_free(&g));
  MPI_OK(MPI_Group_intersection(even, odd, &g));
  check_group(g, world, NULL, 0, "MPI_Group_intersection (evens, odds)");
  if (g != MPI_GROUP_EMPTY) MPI_OK(MPI_Group_free(&g));
  check_group(MPI_GROUP_EMPTY, world, NULL, 0, "MPI_GROUP_EMPTY");

  /* Translation: MPI_PROC_NULL stays, a rank not in the other group is MPI_UNDEFINED. */
  int from[3] = {0, MPI_PROC_NULL, size - 1}, to[3] = {-5, -5, -5};
  MPI_OK(MPI_Group_translate_ranks(rev, 3, from, even, to));
  CHECK(to[0] == ((size - 1) % 2 == 0 ? (size - 1) / 2 : MPI_UNDEFINED) && to[1] == MPI_PROC_NULL && to[2] == 0,
        "MPI_Group_translate_ranks(reversed -> evens) of {0, MPI_PROC_NULL, %d} is {%d, %d, %d}", size - 1, to[0],
        to[1], to[2]);

  /* MPI_Comm_create: one group, each rank's own of two disjoint ones, the empty group. */
  MPI_Comm comm;
  MPI_OK(MPI_Comm_create(MPI_COMM_WORLD, even, &comm));
  check_comm(comm, evens, n_evens, "MPI_Comm_create (evens)");
  if (comm != MPI_COMM_NULL) MPI_OK(MPI_Comm_free(&comm));
  MPI_OK(MPI_Comm_create(MPI_COMM_WORLD, rank % 2 ? odd : even, &comm));
  if (rank % 2)
    check_comm(comm, odds, n_odds, "MPI_Comm_create (disjoint groups: odds)");
  else
    check_comm(comm, evens, n_evens, "MPI_Comm_create (disjoint groups: evens)");
  /* A communicator made from a group of a communicator that is not the world. */
  MPI_Comm sub;
  MPI_Group sub_group, sub_first;
  MPI_OK(MPI_Comm_group(comm, &sub_group));
  const int first = 0;
  MPI_OK(MPI_Group_incl(sub_group, 1, &first, &sub_first));
  MPI_OK(MPI_Comm_create(comm, sub_first, &sub));
  const int first_member = rank % 2;
  check_comm(sub, &first_member, 1, "MPI_Comm_create (the first of a sub-communicator)");
  if (sub != MPI_COMM_NULL) MPI_OK(MPI_Comm_free(&sub));
  MPI_OK(MPI_Group_free(&sub_first));
  MPI_OK(MPI_Group_free(&sub_group));
  MPI_OK(MPI_Comm_free(&comm));
  MPI_OK(MPI_Comm_create(MPI_COMM_WORLD, MPI_GROUP_EMPTY, &comm));
  CHECK(comm == MPI_COMM_NULL, "MPI_Comm_create of MPI_GROUP_EMPTY gave a communicator");
  MPI_OK(MPI_Comm_create(MPI_COMM_WORLD, rev, &comm));
  check_comm(comm, reversed, size, "MPI_Comm_create (reversed)");
  MPI_OK(MPI_Comm_free(&comm));

  /* MPI_Comm_create_group: only the members call. */
  if (rank % 2 == 0) {
    MPI_OK(MPI_Comm_create_group(MPI_COMM_WORLD, even, 5, &comm));
    check_comm(comm, evens, n_evens, "MPI_Comm_create_group (evens)");
    MPI_OK(MPI_Comm_free(&comm));
  }
  MPI_OK(MPI_Comm_create_group(MPI_COMM_WORLD, rev, 6, &comm));
  check_comm(comm, reversed, size, "MPI_Comm_create_group (reversed)");
  MPI_OK(MPI_Comm_free(&comm));

  /* Bad arguments. */
  MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  int n = 0, twice[2] = {0, 0}, past[1] = {size};
  int stride0[1][3] = {{0, 0, 0}}, beyond[1][3] = {{0, size, 1}}, backwards[1][3] = {{size - 1, 0, 1}};
  EXPECT_CLASS(MPI_Group_size(MPI_GROUP_NULL, &n), MPI_ERR_GROUP);
  EXPECT_CLASS(MPI_Group_rank(MPI_GROUP_NULL, &n), MPI_ERR_GROUP);
  EXPECT_CLASS(MPI_Group_incl(world, 1, past, &g), MPI_ERR_RANK);
  /* MPICH 4.0.2 takes a rank listed twice. */
  if (size > 1 && !MPICH_BUGS) EXPECT_CLASS(MPI_Group_incl(world, 2, twice, &g), MPI_ERR_RANK);
  EXPECT_CLASS(MPI_Group_excl(world, 1, past, &g), MPI_ERR_RANK);
  EXPECT_CLASS(MPI_Group_incl(world, -1, past, &g), MPI_ERR_ARG);
  EXPECT_CLASS(MPI_Group_range_incl(world, 1, stride0, &g), MPI_ERR_ARG);
  EXPECT_CLASS(MPI_Group_range_incl(world, 1, beyond, &g), MPI_ERR_ARG);
  if (size > 1) EXPECT_CLASS(MPI_Group_range_excl(world, 1, backwards, &g), MPI_ERR_ARG);
  EXPECT_CLASS(MPI_Group_translate_ranks(world, 1, past, rev, to), MPI_ERR_RANK);
  EXPECT_CLASS(MPI_Group_union(world, MPI_GROUP_NULL, &g), MPI_ERR_GROUP);
  EXPECT_CLASS(MPI_Comm_create(MPI_COMM_WORLD, MPI_GROUP_NULL, &comm), MPI_ERR_GROUP);
  EXPECT_CLASS(MPI_Comm_group(MPI_COMM_NULL, &g), MPI_ERR_COMM);
  g = MPI_GROUP_NULL;
  EXPECT_CLASS(MPI_Group_free(&g), MPI_ERR_GROUP);

  MPI_OK(MPI_Group_free(&world));
  MPI_OK(MPI_Group_free(&rev));
  MPI_OK(MPI_Group_free(&even));
  if (odd != MPI_GROUP_EMPTY) MPI_OK(MPI_Group_free(&odd));
  MPI_OK(MPI_Finalize());
  return 0;
}
