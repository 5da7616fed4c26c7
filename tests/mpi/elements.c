/* MPI_Get_elements and MPI_Get_elements_x: the basic elements a status
 * holds, whole elements and the whole basic elements of a partial one, and
 * MPI_UNDEFINED where its bytes end inside a basic element; for basic types,
 * a pair type, a contiguous, a vector and a struct type, from messages
 * (each rank sends to the next and receives from the one before, itself on
 * one rank) and from MPI_Status_set_elements. Every element received is
 * checked too. */
#include <stddef.h>

#include "check.h"

static int rank, size, next, prev;

/* MPI_Get_elements and MPI_Get_elements_x of st in type must both say `expected`. */
static void check_elements(const MPI_Status* st, MPI_Datatype type, int expected, const char* what) {
  int n = -1;
  MPI_Count nx = -1;
  MPI_OK(MPI_Get_elements(st, type, &n));
  MPI_OK(MPI_Get_elements_x(st, type, &nx));
  CHECK(n == expected && nx == (MPI_Count)expected, "%s: MPI_Get_elements says %d, MPI_Get_elements_x %ld; expected %d",
        what, n, (long)nx, expected);
}

static void check_count(const MPI_Status* st, MPI_Datatype type, int expected, const char* what) {
  int n = -1;
  MPI_OK(MPI_Get_count(st, type, &n));
  CHECK(n == expected, "%s: MPI_Get_count says %d, expected %d", what, n, expected);
}

/* A status whose message was `bytes` bytes (MPI_Status_set_elements of MPI_BYTE). */
static MPI_Status of_bytes(int bytes) {
  MPI_Status st;
  memset(&st, 0, sizeof st);
  MPI_OK(MPI_Status_set_elements(&st, MPI_BYTE, bytes));
  return st;
}

static void basic_types(void) {
  double out[5] = {1.5, 2.5, 3.5, 4.5, 5.5}, in[8];
  MPI_Status st;
  MPI_OK(MPI_Sendrecv(out, 5, MPI_DOUBLE, next, 1, in, 8, MPI_DOUBLE, prev, 1, MPI_COMM_WORLD, &st));
  for (int i = 0; i < 5; ++i) CHECK(in[i] == out[i], "5 doubles: element %d is %g", i, in[i]);
  check_elements(&st, MPI_DOUBLE, 5, "5 doubles received into room for 8");
  check_count(&st, MPI_DOUBLE, 5, "5 doubles received into room for 8");
  MPI_OK(MPI_Sendrecv(out, 0, MPI_DOUBLE, next, 2, in, 8, MPI_DOUBLE, prev, 2, MPI_COMM_WORLD, &st));
  check_elements(&st, MPI_DOUBLE, 0, "an empty message");

  st = of_bytes(6);
  check_elements(&st, MPI_BYTE, 6, "6 bytes in MPI_BYTE");
  check_elements(&st, MPI_SHORT, 3, "6 bytes in MPI_SHORT");
  check_elements(&st, MPI_INT, MPI_UNDEFINED, "6 bytes in MPI_INT");
  MPI_Count big = 0;
  MPI_OK(MPI_Status_set_elements_x(&st, MPI_INT, 5));
  MPI_OK(MPI_Get_elements_x(&st, MPI_BYTE, &big));
  CHECK(big == 20, "MPI_Status_set_elements_x(MPI_INT, 5): %ld bytes, expected 20", (long)big);
}

/* A pair type's elements are its two halves: a value and an int. */
static void pair_type(void) {
  struct {
    double d;
    int i;
  } out[3], in[3];
  for (int i = 0; i < 3; ++i) {
    out[i].d = rank + i + 0.5;
    out[i].i = rank * 10 + i;
  }
  MPI_Status st;
  MPI_OK(MPI_Sendrecv(out, 3, MPI_DOUBLE_INT, next, 3, in, 3, MPI_DOUBLE_INT, prev, 3, MPI_COMM_WORLD, &st));
  for (int i = 0; i < 3; ++i)
    CHECK(in[i].d == prev + i + 0.5 && in[i].i == prev * 10 + i, "MPI_DOUBLE_INT element %d is (%g, %d)", i, in[i].d,
          in[i].i);
  check_elements(&st, MPI_DOUBLE_INT, 6, "3 MPI_DOUBLE_INT");
  check_count(&st, MPI_DOUBLE_INT, 3, "3 MPI_DOUBLE_INT");
}

/* 7 ints received as elements of a contiguous and of a vector type of
 * ints: the last element partial. */
static void contiguous_and_vector(void) {
  int out[7], in[12];
  for (int i = 0; i < 7; ++i) out[i] = rank * 100 + i;
  MPI_Datatype pair, vector;
  MPI_OK(MPI_Type_contiguous(2, MPI_INT, &pair));
  MPI_OK(MPI_Type_commit(&pair));
  MPI_Status st;
  for (int i = 0; i < 12; ++i) in[i] = -1;
  MPI_OK(MPI_Sendrecv(out, 7, MPI_INT, next, 4, in, 4, pair, prev, 4, MPI_COMM_WORLD, &st));
  for (int i = 0; i < 8; ++i)
    CHECK(in[i] == (i < 7 ? prev * 100 + i : -1), "7 ints into contiguous pairs: element %d is %d", i, in[i]);
  check_elements(&st, pair, 7, "7 ints in contiguous(2, MPI_INT)");
  check_count(&st, pair, MPI_UNDEFINED, "7 ints in contiguous(2, MPI_INT)");
  check_elements(&st, MPI_INT, 7, "7 ints in MPI_INT");

  /* Two blocks of 2 ints, 3 ints apart: 4 ints per element, extent 5. */
  MPI_OK(MPI_Type_vector(2, 2, 3, MPI_INT, &vector));
  MPI_OK(MPI_Type_commit(&vector));
  for (int i = 0; i < 12; ++i) in[i] = -1;
  MPI_OK(MPI_Sendrecv(out, 7, MPI_INT, next, 5, in, 2, vector, prev, 5, MPI_COMM_WORLD, &st));
  const int at[7] = {0, 1, 3, 4, 5, 6, 8};
  for (int i = 0; i < 7; ++i) CHECK(in[at[i]] == prev * 100 + i, "7 ints into a vector: int %d is %d", i, in[at[i]]);
  check_elements(&st, vector, 7, "7 ints in vector(2, 2, 3, MPI_INT)");
  check_count(&st, vector, MPI_UNDEFINED, "7 ints in vector(2, 2, 3, MPI_INT)");
  st = of_bytes(8 * 4 + 2);
  /* MPICH 4.0.2 counts the whole basic elements of a derived type's bytes
   * and drops the rest. */
  if (!MPICH_BUGS) check_elements(&st, vector, MPI_UNDEFINED, "34 bytes in vector(2, 2, 3, MPI_INT)");
  MPI_OK(MPI_Type_free(&pair));
  MPI_OK(MPI_Type_free(&vector));
}

/* A struct of an int and a double (12 bytes of data, extent 16). */
struct IntDouble {
  int i;
  double d;
};

static MPI_Datatype int_double_type(void) {
  int one[2] = {1, 1};
  MPI_Aint at[2] = {offsetof(struct IntDouble, i), offsetof(struct IntDouble, d)};
  MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE}, t;
  MPI_OK(MPI_Type_create_struct(2, one, at, types, &t));
  MPI_OK(MPI_Type_commit(&t));
  return t;
}

/* Two whole structs and the int of a third, received as three structs. */
static void struct_type(void) {
  MPI_Datatype s = int_double_type(), message;
  struct {
    struct IntDouble whole[2];
    int part;
  } out;
  for (int k = 0; k < 2; ++k) {
    out.whole[k].i = rank * 10 + k;
    out.whole[k].d = rank + k + 0.25;
  }
  out.part = rank * 10 + 2;
  int blocks[2] = {2, 1};
  MPI_Aint at[2] = {offsetof(__typeof__(out), whole), offsetof(__typeof__(out), part)};
  MPI_Datatype types[2] = {s, MPI_INT};
  MPI_OK(MPI_Type_create_struct(2, blocks, at, types, &message));
  MPI_OK(MPI_Type_commit(&message));
  struct IntDouble in[3];
  for (int k = 0; k < 3; ++k) {
    in[k].i = -1;
    in[k].d = -1;
  }
  MPI_Status st;
  MPI_OK(MPI_Sendrecv(&out, 1, message, next, 6, in, 3, s, prev, 6, MPI_COMM_WORLD, &st));
  for (int k = 0; k < 2; ++k)
    CHECK(in[k].i == prev * 10 + k && in[k].d == prev + k + 0.25, "struct %d is (%d, %g)", k, in[k].i, in[k].d);
  CHECK(in[2].i == prev * 10 + 2 && in[2].d == -1, "the partial struct is (%d, %g)", in[2].i, in[2].d);
  check_elements(&st, s, 5, "two structs of an int and a double, and an int");
  check_count(&st, s, MPI_UNDEFINED, "two structs of an int and a double, and an int");
  check_elements(&st, message, 5, "the message's own type");
  check_count(&st, message, 1, "the message's own type");

  st = of_bytes(2 * 12 + 6);
  if (!MPICH_BUGS) check_elements(&st, s, MPI_UNDEFINED, "30 bytes in structs of an int and a double");
  st = of_bytes(2 * 12 + 4);
  check_elements(&st, s, 5, "28 bytes in structs of an int and a double");
  /* MPICH 4.0.2 records count elements of the type, not basic elements. */
  if (!MPICH_BUGS) {
    MPI_OK(MPI_Status_set_elements(&st, s, 5));
    check_elements(&st, s, 5, "MPI_Status_set_elements(struct, 5)");
    check_elements(&st, MPI_BYTE, 28, "MPI_Status_set_elements(struct, 5) in bytes");
  }
  MPI_OK(MPI_Type_free(&message));
  MPI_OK(MPI_Type_free(&s));
}

static void errors(void) {
  MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  MPI_Status st = of_bytes(4);
  int n = 0;
  EXPECT_CLASS(MPI_Get_elements(&st, MPI_DATATYPE_NULL, &n), MPI_ERR_TYPE);
  EXPECT_CLASS(MPI_Status_set_elements(&st, MPI_INT, -1), MPI_ERR_COUNT);
  MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char** argv) {
  start_test(&argc, &argv, &rank, &size);
  next = (rank + 1) % size;
  prev = (rank + size - 1) % size;
  basic_types();
  pair_type();
  contiguous_and_vector();
  struct_type();
  errors();
  MPI_OK(MPI_Finalize());
  return 0;
}
