/* Derived datatypes: every constructor's size, extent and true extent;
 * MPI_Type_dup, _commit, _free; MPI_Pack / MPI_Unpack / MPI_Pack_size;
 * derived types in point to point (a vector one way, plain ints the other,
 * a C struct, a padded pair type, a type freed while its receive is
 * pending, a struct of absolute addresses from MPI_BOTTOM) and in the
 * data-moving collectives (bcast, gather, scatter, allgather in place too,
 * allgatherv, alltoall, alltoallv), with the gaps between the data checked
 * untouched; the error classes of bad arguments. */
#include <stddef.h>
#include <string.h>

#include "check.h"

static int rank, size;
static const int GAP = -99;

static void check_type(MPI_Datatype t, int size_expected, MPI_Aint lb_expected, MPI_Aint extent_expected,
                       MPI_Aint true_lb_expected, MPI_Aint true_extent_expected, const char* what) {
  int got_size = -1;
  MPI_Aint lb = -1, extent = -1, true_lb = -1, true_extent = -1;
  MPI_OK(MPI_Type_size(t, &got_size));
  MPI_OK(MPI_Type_get_extent(t, &lb, &extent));
  MPI_OK(MPI_Type_get_true_extent(t, &true_lb, &true_extent));
  CHECK(got_size == size_expected && lb == lb_expected && extent == extent_expected && true_lb == true_lb_expected &&
            true_extent == true_extent_expected,
        "%s: size %d, lb %ld, extent %ld, true lb %ld, true extent %ld; expected %d, %ld, %ld, %ld, %ld", what,
        got_size, (long)lb, (long)extent, (long)true_lb, (long)true_extent, size_expected, (long)lb_expected,
        (long)extent_expected, (long)true_lb_expected, (long)true_extent_expected);
}

/* A C struct with padding, and its MPI type (not committed). */
struct Mixed {
  char c;
  double d;
  int i;
};

static MPI_Datatype mixed_type(void) {
  int one[3] = {1, 1, 1};
  MPI_Aint at[3] = {offsetof(struct Mixed, c), offsetof(struct Mixed, d), offsetof(struct Mixed, i)};
  MPI_Datatype types[3] = {MPI_CHAR, MPI_DOUBLE, MPI_INT}, t;
  MPI_OK(MPI_Type_create_struct(3, one, at, types, &t));
  return t;
}

static void constructors(void) {
  MPI_Datatype t, u;
  MPI_OK(MPI_Type_contiguous(3, MPI_INT, &t));
  check_type(t, 12, 0, 12, 0, 12, "MPI_Type_contiguous(3, MPI_INT)");
  MPI_OK(MPI_Type_dup(t, &u));
  check_type(u, 12, 0, 12, 0, 12, "MPI_Type_dup of it");
  MPI_OK(MPI_Type_free(&u));
  CHECK(u == MPI_DATATYPE_NULL, "MPI_Type_free left the handle 0x%x", (unsigned)u);
  MPI_OK(MPI_Type_free(&t));
  MPI_OK(MPI_Type_vector(3, 2, 4, MPI_INT, &t));
  check_type(t, 24, 0, 40, 0, 40, "MPI_Type_vector(3, 2, 4, MPI_INT)");
  MPI_OK(MPI_Type_vector(2, 1, 3, t, &u)); /* a vector of vectors: strides in the inner type's extent */
  check_type(u, 48, 0, 160, 0, 160, "MPI_Type_vector(2, 1, 3, vector)");
  MPI_OK(MPI_Type_free(&u));
  MPI_OK(MPI_Type_free(&t));
  MPI_OK(MPI_Type_create_hvector(3, 2, 20, MPI_INT, &t));
  check_type(t, 24, 0, 48, 0, 48, "MPI_Type_create_hvector(3, 2, 20 bytes, MPI_INT)");
  MPI_OK(MPI_Type_free(&t));
  int lengths[2] = {2, 1}, displs[2] = {1, 5};
  MPI_OK(MPI_Type_indexed(2, lengths, displs, MPI_INT, &t));
  check_type(t, 12, 4, 20, 4, 20, "MPI_Type_indexed({2, 1}, {1, 5}, MPI_INT)");
  MPI_OK(MPI_Type_free(&t));
  MPI_Aint bytes[2] = {4, 20};
  MPI_OK(MPI_Type_create_hindexed(2, lengths, bytes, MPI_INT, &t));
  check_type(t, 12, 4, 20, 4, 20, "MPI_Type_create_hindexed({2, 1}, {4, 20} bytes, MPI_INT)");
  MPI_OK(MPI_Type_free(&t));
  int block_displs[3] = {0, 3, 7};
  MPI_OK(MPI_Type_create_indexed_block(3, 2, block_displs, MPI_INT, &t));
  check_type(t, 24, 0, 36, 0, 36, "MPI_Type_create_indexed_block(3, 2, {0, 3, 7}, MPI_INT)");
  MPI_OK(MPI_Type_free(&t));
  /* A struct's extent is padded to its most aligned member, as C's. */
  t = mixed_type();
  check_type(t, 13, 0, sizeof(struct Mixed), 0, offsetof(struct Mixed, i) + 4,
             "MPI_Type_create_struct(char, double, int)");
  MPI_OK(MPI_Type_free(&t));
  MPI_OK(MPI_Type_contiguous(2, MPI_INT, &u));
  MPI_OK(MPI_Type_create_resized(u, -4, 16, &t));
  check_type(t, 8, -4, 16, 0, 8, "MPI_Type_create_resized(2 ints, -4, 16)");
  MPI_OK(MPI_Type_free(&t));
  MPI_OK(MPI_Type_free(&u));
  MPI_OK(MPI_Type_contiguous(0, MPI_INT, &t));
  check_type(t, 0, 0, 0, 0, 0, "MPI_Type_contiguous(0, MPI_INT)");
  MPI_OK(MPI_Type_free(&t));
}

/* MPI_Pack a vector and MPI_Unpack it into an indexed layout. */
static void pack_unpack(void) {
  int src[12], dst[12], packed_size = -1, position = 0;
  for (int i = 0; i < 12; ++i) src[i] = 100 + i;
  MPI_Datatype vector, indexed;
  MPI_OK(MPI_Type_vector(3, 2, 4, MPI_INT, &vector)); /* 0 1, 4 5, 8 9 */
  int lengths[3] = {1, 3, 2}, displs[3] = {11, 2, 6};
  MPI_OK(MPI_Type_indexed(3, lengths, displs, MPI_INT, &indexed)); /* 11, 2 3 4, 6 7 */
  MPI_OK(MPI_Type_commit(&vector));
  MPI_OK(MPI_Type_commit(&indexed));
  MPI_OK(MPI_Pack_size(1, vector, MPI_COMM_WORLD, &packed_size));
  CHECK(packed_size >= 24, "MPI_Pack_size of a vector of 6 ints is %d", packed_size);
  char buffer[64];
  MPI_OK(MPI_Pack(&src[0], 1, vector, buffer, sizeof buffer, &position, MPI_COMM_WORLD));
  CHECK(position == 24, "MPI_Pack of 6 ints moved position to %d", position);
  const int value = 7;
  MPI_OK(MPI_Pack(&value, 1, MPI_INT, buffer, sizeof buffer, &position, MPI_COMM_WORLD));
  CHECK(position == 28, "MPI_Pack of one more int moved position to %d", position);
  for (int i = 0; i < 12; ++i) dst[i] = GAP;
  int unpacked_value = 0, in = 0;
  MPI_OK(MPI_Unpack(buffer, position, &in, dst, 1, indexed, MPI_COMM_WORLD));
  MPI_OK(MPI_Unpack(buffer, position, &in, &unpacked_value, 1, MPI_INT, MPI_COMM_WORLD));
  const int order_in[6] = {0, 1, 4, 5, 8, 9}, order_out[6] = {11, 2, 3, 4, 6, 7};
  int expected[12];
  for (int i = 0; i < 12; ++i) expected[i] = GAP;
  for (int k = 0; k < 6; ++k) expected[order_out[k]] = src[order_in[k]];
  for (int i = 0; i < 12; ++i)
    CHECK(dst[i] == expected[i], "MPI_Unpack into an indexed type: element %d is %d, expected %d", i, dst[i],
          expected[i]);
  CHECK(in == 28 && unpacked_value == 7, "MPI_Unpack: position %d, last value %d", in, unpacked_value);
  MPI_OK(MPI_Type_free(&vector));
  MPI_OK(MPI_Type_free(&indexed));
}

/* Point to point: `count` elements of a vector type (two blocks of two ints,
 * one int apart) to the next rank, received as plain ints, and back the
 * other way; a C struct; MPI_SHORT_INT; a receive whose type is freed while
 * it is pending. */
static void point_to_point(int count) {
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  MPI_Datatype vector;
  MPI_OK(MPI_Type_vector(2, 2, 3, MPI_INT, &vector)); /* 0 1 . 3 4, extent 5 ints */
  MPI_OK(MPI_Type_commit(&vector));
  int* spread = malloc((5 * count + 1) * sizeof(int));
  int* plain = malloc((4 * count + 1) * sizeof(int));
  for (int k = 0; k < count; ++k)
    for (int j = 0; j < 5; ++j) spread[5 * k + j] = j == 2 ? GAP : rank * 100000 + 5 * k + j;
  MPI_Request reqs[2];
  MPI_Status st;
  MPI_OK(MPI_Irecv(plain, 4 * count, MPI_INT, prev, 50, MPI_COMM_WORLD, &reqs[0]));
  MPI_OK(MPI_Isend(spread, count, vector, next, 50, MPI_COMM_WORLD, &reqs[1]));
  MPI_OK(MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE));
  for (int k = 0; k < count; ++k)
    for (int j = 0, i = 0; j < 5; ++j)
      if (j != 2) {
        const int want = prev * 100000 + 5 * k + j;
        CHECK(plain[4 * k + i] == want, "vector to ints (count %d): element %d is %d, expected %d", count, 4 * k + i,
              plain[4 * k + i], want);
        ++i;
      }
  /* Back: plain ints into the vector's layout; the gaps stay. */
  for (int i = 0; i < 4 * count; ++i) plain[i] = rank * 100000 + i;
  for (int i = 0; i < 5 * count; ++i) spread[i] = GAP;
  MPI_OK(MPI_Sendrecv(plain, 4 * count, MPI_INT, next, 51, spread, count, vector, prev, 51, MPI_COMM_WORLD, &st));
  int got = -1;
  MPI_OK(MPI_Get_count(&st, vector, &got));
  CHECK(got == count, "MPI_Get_count in the vector type is %d, expected %d", got, count);
  for (int k = 0; k < count; ++k)
    for (int j = 0, i = 0; j < 5; ++j) {
      const int want = j == 2 ? GAP : prev * 100000 + 4 * k + i++;
      CHECK(spread[5 * k + j] == want, "ints to vector (count %d): element %d is %d, expected %d", count, 5 * k + j,
            spread[5 * k + j], want);
    }
  /* A type freed while its receive is pending still lays out the message. */
  MPI_Datatype pending;
  MPI_OK(MPI_Type_dup(vector, &pending));
  for (int i = 0; i < 5 * count; ++i) spread[i] = GAP;
  MPI_OK(MPI_Irecv(spread, count, pending, prev, 52, MPI_COMM_WORLD, &reqs[0]));
  MPI_OK(MPI_Type_free(&pending));
  MPI_OK(MPI_Isend(plain, 4 * count, MPI_INT, next, 52, MPI_COMM_WORLD, &reqs[1]));
  MPI_OK(MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE));
  for (int k = 0; k < count; ++k)
    for (int j = 0, i = 0; j < 5; ++j) {
      const int want = j == 2 ? GAP : prev * 100000 + 4 * k + i++;
      CHECK(spread[5 * k + j] == want, "a freed type's receive (count %d): element %d is %d, expected %d", count,
            5 * k + j, spread[5 * k + j], want);
    }
  MPI_OK(MPI_Type_free(&vector));
  free(spread);
  free(plain);

  /* A C struct, and MPI_SHORT_INT (a pair with padding). */
  MPI_Datatype mixed = mixed_type();
  MPI_OK(MPI_Type_commit(&mixed));
  struct Mixed* out = malloc((count + 1) * sizeof(struct Mixed));
  struct Mixed* in = malloc((count + 1) * sizeof(struct Mixed));
  struct {
    short s;
    int i;
  } pairs_out[8], pairs_in[8];
  for (int k = 0; k < count; ++k) {
    out[k].c = (char)('a' + k % 26);
    out[k].d = rank + k * 0.5;
    out[k].i = rank * 1000 + k;
  }
  for (int k = 0; k < 8; ++k) {
    pairs_out[k].s = (short)(rank * 10 + k);
    pairs_out[k].i = rank * 1000 + k;
  }
  memset(in, 0, (count + 1) * sizeof(struct Mixed));
  memset(pairs_in, 0, sizeof pairs_in);
  const int npairs = count < 8 ? count : 8;
  MPI_OK(MPI_Sendrecv(out, count, mixed, next, 53, in, count, mixed, prev, 53, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  MPI_OK(MPI_Sendrecv(pairs_out, npairs, MPI_SHORT_INT, next, 54, pairs_in, npairs, MPI_SHORT_INT, prev, 54,
                      MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  for (int k = 0; k < count; ++k)
    CHECK(in[k].c == (char)('a' + k % 26) && in[k].d == prev + k * 0.5 && in[k].i == prev * 1000 + k,
          "struct %d (count %d): {%c, %g, %d}", k, count, in[k].c, in[k].d, in[k].i);
  for (int k = 0; k < npairs; ++k)
    CHECK(pairs_in[k].s == prev * 10 + k && pairs_in[k].i == prev * 1000 + k, "MPI_SHORT_INT %d: {%d, %d}", k,
          pairs_in[k].s, pairs_in[k].i);
  MPI_OK(MPI_Type_free(&mixed));
  free(out);
  free(in);
}

/* A struct of absolute addresses, used from MPI_BOTTOM: the classic way to
 * broadcast scattered parameters, and a ring of them with
 * MPI_Sendrecv_replace. */
static void absolute_addresses(void) {
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  int i = -1;
  double d = -1;
  char name[8] = "";
  int lengths[3] = {1, 1, 8};
  MPI_Aint addresses[3];
  MPI_Datatype types[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR}, params;
  MPI_OK(MPI_Get_address(&i, &addresses[0]));
  MPI_OK(MPI_Get_address(&d, &addresses[1]));
  MPI_OK(MPI_Get_address(name, &addresses[2]));
  MPI_OK(MPI_Type_create_struct(3, lengths, addresses, types, &params));
  MPI_OK(MPI_Type_commit(&params));
  if (rank == 0) {
    i = 42;
    d = 2.5;
    strcpy(name, "hcomm");
  }
  MPI_OK(MPI_Bcast(MPI_BOTTOM, 1, params, 0, MPI_COMM_WORLD));
  CHECK(i == 42 && d == 2.5 && strcmp(name, "hcomm") == 0, "MPI_Bcast from MPI_BOTTOM: {%d, %g, \"%s\"}", i, d, name);
  i = rank;
  d = rank * 0.25;
  snprintf(name, sizeof name, "r%d", rank);
  MPI_OK(MPI_Sendrecv_replace(MPI_BOTTOM, 1, params, next, 56, prev, 56, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  char want[16];
  snprintf(want, sizeof want, "r%d", prev);
  CHECK(i == prev && d == prev * 0.25 && strcmp(name, want) == 0,
        "MPI_Sendrecv_replace from MPI_BOTTOM: {%d, %g, \"%s\"}, expected rank %d's", i, d, name, prev);
  MPI_OK(MPI_Type_free(&params));
}

/* Collectives on "one int of every two" (an int resized to extent 8):
 * element k of a buffer is int 2k, and every odd int must stay GAP. */
static MPI_Datatype every_other;

static int* spread_buffer(int elements) {
  int* b = malloc((2 * elements + 1) * sizeof(int));
  for (int i = 0; i < 2 * elements; ++i) b[i] = GAP;
  return b;
}

static void check_spread(const int* b, int elements, const int* expected, const char* what, int count) {
  for (int k = 0; k < elements; ++k) {
    CHECK(b[2 * k] == expected[k], "%s (count %d): element %d is %d, expected %d", what, count, k, b[2 * k],
          expected[k]);
    CHECK(b[2 * k + 1] == GAP, "%s (count %d): the gap after element %d is %d", what, count, k, b[2 * k + 1]);
  }
}

static int item(int from, int to, int k) { return from * 1000000 + to * 10000 + k; }

static void collectives(int count) {
  const int n = count * size;
  int* expected = malloc((n + 1) * sizeof(int));
  int* send = spread_buffer(n);
  int* recv = spread_buffer(n);
  /* Bcast from the last rank. */
  int* b = spread_buffer(count);
  for (int k = 0; k < count; ++k) {
    if (rank == size - 1) b[2 * k] = item(size - 1, 0, k);
    expected[k] = item(size - 1, 0, k);
  }
  MPI_OK(MPI_Bcast(b, count, every_other, size - 1, MPI_COMM_WORLD));
  check_spread(b, count, expected, "MPI_Bcast", count);
  free(b);
  /* Allgather, then in place. */
  for (int k = 0; k < count; ++k) send[2 * k] = item(rank, 0, k);
  for (int r = 0; r < size; ++r)
    for (int k = 0; k < count; ++k) expected[r * count + k] = item(r, 0, k);
  MPI_OK(MPI_Allgather(send, count, every_other, recv, count, every_other, MPI_COMM_WORLD));
  check_spread(recv, n, expected, "MPI_Allgather", count);
  for (int i = 0; i < 2 * n; ++i) recv[i] = GAP;
  for (int k = 0; k < count; ++k) recv[2 * (rank * count + k)] = item(rank, 0, k);
  MPI_OK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv, count, every_other, MPI_COMM_WORLD));
  check_spread(recv, n, expected, "MPI_Allgather in place", count);
  /* Gather to rank 0 as plain ints; scatter from rank 0 out of the spread layout. */
  int* plain = malloc((n + 1) * sizeof(int));
  MPI_OK(MPI_Gather(send, count, every_other, plain, count, MPI_INT, 0, MPI_COMM_WORLD));
  if (rank == 0)
    for (int i = 0; i < n; ++i)
      CHECK(plain[i] == expected[i], "MPI_Gather (count %d): element %d is %d, expected %d", count, i, plain[i],
            expected[i]);
  for (int i = 0; i < 2 * n; ++i) recv[i] = GAP;
  for (int i = 0; i < n; ++i) send[2 * i] = rank == 0 ? expected[i] : GAP;
  b = spread_buffer(count);
  MPI_OK(MPI_Scatter(send, count, every_other, b, count, every_other, 0, MPI_COMM_WORLD));
  check_spread(b, count, expected + rank * count, "MPI_Scatter", count);
  free(b);
  /* Alltoall: block r goes to rank r. */
  for (int r = 0; r < size; ++r)
    for (int k = 0; k < count; ++k) {
      send[2 * (r * count + k)] = item(rank, r, k);
      expected[r * count + k] = item(r, rank, k);
    }
  for (int i = 0; i < 2 * n; ++i) recv[i] = GAP;
  MPI_OK(MPI_Alltoall(send, count, every_other, recv, count, every_other, MPI_COMM_WORLD));
  check_spread(recv, n, expected, "MPI_Alltoall", count);
  /* Allgatherv and alltoallv: rank r's block has r % 3 + count elements,
   * placed in reverse rank order with one element between blocks. */
  int *counts = malloc(size * sizeof(int)), *displs = malloc(size * sizeof(int)), total = 0;
  for (int r = size - 1; r >= 0; --r) {
    counts[r] = r % 3 + count;
    displs[r] = total;
    total += counts[r] + 1;
  }
  int* vrecv = spread_buffer(total);
  int* vexpected = malloc((total + 1) * sizeof(int));
  int* vsend = spread_buffer(counts[rank]);
  for (int i = 0; i < total; ++i) vexpected[i] = GAP;
  for (int r = 0; r < size; ++r)
    for (int k = 0; k < counts[r]; ++k) vexpected[displs[r] + k] = item(r, 0, k);
  for (int k = 0; k < counts[rank]; ++k) vsend[2 * k] = item(rank, 0, k);
  MPI_OK(MPI_Allgatherv(vsend, counts[rank], every_other, vrecv, counts, displs, every_other, MPI_COMM_WORLD));
  check_spread(vrecv, total, vexpected, "MPI_Allgatherv", count);
  /* Alltoallv: count elements to every rank, received in reverse rank order. */
  int *sc = malloc(size * sizeof(int)), *sd = malloc(size * sizeof(int)), *rd = malloc(size * sizeof(int));
  for (int r = 0; r < size; ++r) {
    sc[r] = count;
    sd[r] = r * count;
    rd[r] = (size - 1 - r) * count;
    for (int k = 0; k < count; ++k) {
      send[2 * (r * count + k)] = item(rank, r, k);
      expected[rd[r] + k] = item(r, rank, k);
    }
  }
  for (int i = 0; i < 2 * n; ++i) recv[i] = GAP;
  MPI_OK(MPI_Alltoallv(send, sc, sd, every_other, recv, sc, rd, every_other, MPI_COMM_WORLD));
  check_spread(recv, n, expected, "MPI_Alltoallv", count);
  free(counts);
  free(displs);
  free(vrecv);
  free(vexpected);
  free(vsend);
  free(sc);
  free(sd);
  free(rd);
  free(plain);
  free(expected);
  free(send);
  free(recv);
}

static void bad_arguments(void) {
  MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  MPI_Datatype t = MPI_DATATYPE_NULL, uncommitted;
  int buf[8] = {0}, position = 0;
  char small[4];
  EXPECT_CLASS(MPI_Type_contiguous(-1, MPI_INT, &t), MPI_ERR_COUNT);
  EXPECT_CLASS(MPI_Type_vector(2, 1, 2, MPI_DATATYPE_NULL, &t), MPI_ERR_TYPE);
  int lengths[2] = {1, -1}, displs[2] = {0, 2};
  EXPECT_CLASS(MPI_Type_indexed(-1, lengths, displs, MPI_INT, &t), MPI_ERR_COUNT);
  EXPECT_CLASS(MPI_Type_indexed(2, lengths, displs, MPI_INT, &t), MPI_ERR_COUNT);
  EXPECT_CLASS(MPI_Type_vector(2, -1, 2, MPI_INT, &t), MPI_ERR_COUNT);
  EXPECT_CLASS(MPI_Type_commit(&t), MPI_ERR_TYPE);
  t = MPI_INT;
  EXPECT_CLASS(MPI_Type_free(&t), MPI_ERR_TYPE);
  MPI_OK(MPI_Type_contiguous(2, MPI_INT, &uncommitted));
  EXPECT_CLASS(MPI_Send(buf, 1, uncommitted, rank, 55, MPI_COMM_WORLD), MPI_ERR_TYPE);
  /* MPICH 4.0.2 packs past the end of outbuf. */
  if (!MPICH_BUGS)
    EXPECT_CLASS(MPI_Pack(buf, 2, MPI_INT, small, sizeof small, &position, MPI_COMM_WORLD), MPI_ERR_TRUNCATE);
  MPI_OK(MPI_Type_free(&uncommitted));
  MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char** argv) {
  start_test(&argc, &argv, &rank, &size);
  constructors();
  pack_unpack();
  MPI_OK(MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &every_other));
  MPI_OK(MPI_Type_commit(&every_other));
  for (int ci = 0; ci < NUM_TEST_COUNTS; ++ci) {
    point_to_point(test_counts[ci]);
    collectives(test_counts[ci]);
  }
  MPI_OK(MPI_Type_free(&every_other));
  absolute_addresses();
  bad_arguments();
  MPI_OK(MPI_Finalize());
  return 0;
}
