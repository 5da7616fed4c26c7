/* Every reduction op on every class of types MPI defines it on (C and
 * Fortran integers, floating point, logical, complex, byte, the pair types),
 * user ops that commute and that do not (their order checked), predefined
 * and user ops on derived types, MPI_Reduce_local, MPI_Op_commutative and
 * MPI_Op_free, and the errors of ops MPI does not define on a type. Each
 * case runs MPI_Allreduce (and in place), MPI_Reduce (to the last rank, and
 * in place at rank 0), MPI_Reduce_scatter_block, MPI_Iallreduce and
 * MPI_Reduce_local over the counts of check.h, and every element of every
 * result is compared with a serial reference in rank order. */
#include <complex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "check.h"

static int rank, size;

/* A type under test, for the op in `op`: how element i of rank r's input
 * is filled, how two elements combine (inout = in op inout, in holding the
 * lower ranks), and whether two results are equal (values, not padding). */
typedef struct {
  MPI_Datatype type;
  const char* name;
  void (*fill)(void* e, int r, int i);
  void (*combine)(const void* in, void* inout);
  int (*equal)(const void* a, const void* b);
} Kind;

static MPI_Op op;            /* the predefined op the kinds' functions serve */
static const char* op_name;  /* and its name, for messages */
static const Kind* user_kind; /* the kind a user op's function combines */

/* Inputs small enough that every sum and product is exact in every type,
 * with zeros among the logical ones, ties among MINLOC's and MAXLOC's. */
static int value(int r, int i, int is_signed) {
  int v;
  if (op == MPI_PROD)
    v = (r + i) % 5 == 0 ? 2 : (r + 2 * i) % 3 == 0 ? -1 : 1;
  else if (op == MPI_SUM)
    v = (r * 3 + i * 7) % 21 - 10;
  else if (op == MPI_LAND || op == MPI_LOR || op == MPI_LXOR)
    v = i % 4 == 0 || (r + i) % 3 != 0 ? (r * 5 + i) % 7 + 1 : 0;
  else if (op == MPI_BAND || op == MPI_BOR || op == MPI_BXOR)
    v = ((r * 0x5B + i * 0x3D) & 0x7F) | (1 << (r % 7));
  else if (op == MPI_MINLOC || op == MPI_MAXLOC)
    v = (r / 2 * 3 + i) % 4; /* ranks 2k and 2k+1 tie */
  else
    v = (r * 37 + i * 11) % 101 - 50;
  return is_signed || v >= 0 ? v : -v;
}

/* MINLOC's and MAXLOC's index: ties between ranks take the lower index,
 * which is not the lower rank. */
static int index_of(int r, int i) { return (size - r) * 10 + i % 3; }

#define LOAD(T, p) (*(const T*)(p))

/* Integers: every op but MINLOC and MAXLOC. */
#define INTEGER_KIND(NAME, T, SIGNED)                                                             \
  static void fill_##NAME(void* e, int r, int i) { *(T*)e = (T)value(r, i, SIGNED); }            \
  static void combine_##NAME(const void* in, void* inout) {                                      \
    T a = LOAD(T, in), b = *(T*)inout, c = 0;                                                    \
    if (op == MPI_MAX) c = a > b ? a : b;                                                        \
    if (op == MPI_MIN) c = a < b ? a : b;                                                        \
    if (op == MPI_SUM) c = (T)(a + b);                                                           \
    if (op == MPI_PROD) c = (T)(a * b);                                                          \
    if (op == MPI_LAND) c = (T)(a && b);                                                         \
    if (op == MPI_LOR) c = (T)(a || b);                                                          \
    if (op == MPI_LXOR) c = (T)(!a != !b);                                                       \
    if (op == MPI_BAND) c = (T)(a & b);                                                          \
    if (op == MPI_BOR) c = (T)(a | b);                                                           \
    if (op == MPI_BXOR) c = (T)(a ^ b);                                                          \
    *(T*)inout = c;                                                                              \
  }                                                                                              \
  static int equal_##NAME(const void* a, const void* b) { return LOAD(T, a) == LOAD(T, b); }

INTEGER_KIND(schar, signed char, 1)
INTEGER_KIND(uchar, unsigned char, 0)
INTEGER_KIND(short, short, 1)
INTEGER_KIND(ushort, unsigned short, 0)
INTEGER_KIND(int, int, 1)
INTEGER_KIND(unsigned, unsigned, 0)
INTEGER_KIND(long, long, 1)
INTEGER_KIND(ulong, unsigned long, 0)
INTEGER_KIND(llong, long long, 1)
INTEGER_KIND(ullong, unsigned long long, 0)
INTEGER_KIND(int8, int8_t, 1)
INTEGER_KIND(int16, int16_t, 1)
INTEGER_KIND(int32, int32_t, 1)
INTEGER_KIND(int64, int64_t, 1)
INTEGER_KIND(uint8, uint8_t, 0)
INTEGER_KIND(uint16, uint16_t, 0)
INTEGER_KIND(uint32, uint32_t, 0)
INTEGER_KIND(uint64, uint64_t, 0)

/* Floating point: MAX, MIN, SUM, PROD on integral values (exact). */
#define FLOATING_KIND(NAME, T)                                                        \
  static void fill_##NAME(void* e, int r, int i) { *(T*)e = (T)value(r, i, 1); }     \
  static void combine_##NAME(const void* in, void* inout) {                          \
    T a = LOAD(T, in), b = *(T*)inout;                                               \
    *(T*)inout = op == MPI_MAX ? (a > b ? a : b)                                     \
                 : op == MPI_MIN ? (a < b ? a : b)                                   \
                 : op == MPI_SUM ? a + b                                             \
                                 : a * b;                                            \
  }                                                                                  \
  static int equal_##NAME(const void* a, const void* b) { return LOAD(T, a) == LOAD(T, b); }

FLOATING_KIND(float, float)
FLOATING_KIND(double, double)
FLOATING_KIND(ldouble, long double)

/* Complex: SUM and PROD. */
#define COMPLEX_KIND(NAME, T, R)                                                                      \
  static void fill_##NAME(void* e, int r, int i) {                                                   \
    *(T*)e = (R)value(r, i, 1) + (R)value(r + 1, i + 3, 1) * (T)I;                                   \
  }                                                                                                  \
  static void combine_##NAME(const void* in, void* inout) {                                          \
    T a = LOAD(T, in), b = *(T*)inout;                                                               \
    *(T*)inout = op == MPI_SUM ? a + b : a * b;                                                      \
  }                                                                                                  \
  static int equal_##NAME(const void* a, const void* b) { return LOAD(T, a) == LOAD(T, b); }

COMPLEX_KIND(cfloat, float _Complex, float)
COMPLEX_KIND(cdouble, double _Complex, double)
COMPLEX_KIND(cldouble, long double _Complex, long double)

/* Logical: C's bool, Fortran's LOGICAL (an int, 1 for true). */
#define LOGICAL_KIND(NAME, T)                                                    \
  static void fill_##NAME(void* e, int r, int i) { *(T*)e = value(r, i, 1) != 0; } \
  static void combine_##NAME(const void* in, void* inout) {                     \
    int a = LOAD(T, in) != 0, b = *(T*)inout != 0;                              \
    *(T*)inout = (T)(op == MPI_LAND ? a && b : op == MPI_LOR ? a || b : a != b); \
  }                                                                             \
  static int equal_##NAME(const void* a, const void* b) { return (LOAD(T, a) != 0) == (LOAD(T, b) != 0); }

LOGICAL_KIND(bool, bool)
LOGICAL_KIND(logical, int)

/* The pair types: MINLOC and MAXLOC, ties to the lower index. */
#define PAIR_KIND(NAME, V, X)                                                                          \
  typedef struct {                                                                                     \
    V v;                                                                                               \
    X i;                                                                                               \
  } NAME##_t;                                                                                          \
  static void fill_##NAME(void* e, int r, int i) {                                                     \
    NAME##_t p;                                                                                        \
    memset(&p, 0, sizeof p);                                                                           \
    p.v = (V)value(r, i, 1);                                                                           \
    p.i = (X)index_of(r, i);                                                                           \
    *(NAME##_t*)e = p;                                                                                 \
  }                                                                                                    \
  static void combine_##NAME(const void* in, void* inout) {                                            \
    const NAME##_t* a = (const NAME##_t*)in;                                                           \
    NAME##_t* b = (NAME##_t*)inout;                                                                    \
    if (op == MPI_MINLOC ? a->v < b->v : a->v > b->v) {                                                \
      b->v = a->v;                                                                                     \
      b->i = a->i;                                                                                     \
    } else if (a->v == b->v && a->i < b->i) {                                                          \
      b->i = a->i;                                                                                     \
    }                                                                                                  \
  }                                                                                                    \
  static int equal_##NAME(const void* a, const void* b) {                                              \
    return ((const NAME##_t*)a)->v == ((const NAME##_t*)b)->v && ((const NAME##_t*)a)->i == ((const NAME##_t*)b)->i; \
  }

PAIR_KIND(float_int, float, int)
PAIR_KIND(double_int, double, int)
PAIR_KIND(long_int, long, int)
PAIR_KIND(short_int, short, int)
PAIR_KIND(two_int, int, int)
PAIR_KIND(ldouble_int, long double, int)

#define KIND(TYPE, NAME) \
  { TYPE, #TYPE, fill_##NAME, combine_##NAME, equal_##NAME }

static const Kind c_integers[] = {
    KIND(MPI_SIGNED_CHAR, schar),        KIND(MPI_UNSIGNED_CHAR, uchar),   KIND(MPI_SHORT, short),
    KIND(MPI_UNSIGNED_SHORT, ushort),    KIND(MPI_INT, int),               KIND(MPI_UNSIGNED, unsigned),
    KIND(MPI_LONG, long),                KIND(MPI_UNSIGNED_LONG, ulong),   KIND(MPI_LONG_LONG, llong),
    KIND(MPI_UNSIGNED_LONG_LONG, ullong), KIND(MPI_INT8_T, int8),          KIND(MPI_INT16_T, int16),
    KIND(MPI_INT32_T, int32),            KIND(MPI_INT64_T, int64),         KIND(MPI_UINT8_T, uint8),
    KIND(MPI_UINT16_T, uint16),          KIND(MPI_UINT32_T, uint32),       KIND(MPI_UINT64_T, uint64),
};
static const Kind fortran_integers[] = {KIND(MPI_INTEGER, int)};
static const Kind floating[] = {KIND(MPI_FLOAT, float), KIND(MPI_DOUBLE, double), KIND(MPI_LONG_DOUBLE, ldouble)};
static const Kind complexes[] = {KIND(MPI_C_FLOAT_COMPLEX, cfloat), KIND(MPI_C_DOUBLE_COMPLEX, cdouble),
                                 KIND(MPI_C_LONG_DOUBLE_COMPLEX, cldouble)};
static const Kind logicals[] = {KIND(MPI_C_BOOL, bool), KIND(MPI_LOGICAL, logical)};
static const Kind bytes[] = {KIND(MPI_BYTE, uchar)};
static const Kind pairs[] = {KIND(MPI_FLOAT_INT, float_int), KIND(MPI_DOUBLE_INT, double_int),
                             KIND(MPI_LONG_INT, long_int),   KIND(MPI_SHORT_INT, short_int),
                             KIND(MPI_2INT, two_int),        KIND(MPI_LONG_DOUBLE_INT, ldouble_int)};
#define COUNT_OF(a) (int)(sizeof(a) / sizeof((a)[0]))

/* ---- One case: a kind, reduced with `with` (op itself, or a user op). */

static MPI_Aint extent_of(MPI_Datatype t) {
  MPI_Aint lb, extent;
  MPI_OK(MPI_Type_get_extent(t, &lb, &extent));
  return extent;
}

/* The reduction of every rank's element i in rank order. */
static void expected(const Kind* k, int i, unsigned char* out, unsigned char* scratch) {
  k->fill(out, 0, i);
  for (int r = 1; r < size; ++r) {
    k->fill(scratch, r, i);
    k->combine(out, scratch);
    memcpy(out, scratch, (size_t)extent_of(k->type));
  }
}

static void check_elements(const Kind* k, const char* what, const unsigned char* got, int first, int count) {
  const MPI_Aint x = extent_of(k->type);
  unsigned char* want = calloc(2, (size_t)x);
  for (int i = 0; i < count; ++i) {
    expected(k, first + i, want, want + x);
    CHECK(k->equal(got + i * x, want), "%s of %s with %s, count %d: element %d differs from the reduction in rank order",
          what, k->name, op_name, count, i);
  }
  free(want);
}

static void fill_all(const Kind* k, unsigned char* buf, int r, int first, int n) {
  const MPI_Aint x = extent_of(k->type);
  for (int i = 0; i < n; ++i) k->fill(buf + i * x, r, first + i);
}

/* Built against MPICH, whose ranks poll each other slowly where they
 * outnumber the cores (tens of milliseconds a call), each case runs its
 * collectives at one count and MPI_Allreduce with one other in turn; HComm's
 * build runs every count and every collective. */
#ifdef MPICH_VERSION
#define EVERY_CASE 0
#else
#define EVERY_CASE 1
#endif
static int case_number;

static void run_case(const Kind* k, MPI_Op with) {
  const MPI_Aint x = extent_of(k->type);
  const int turn = case_number++;
  for (int ci = 0; ci < NUM_TEST_COUNTS; ++ci) {
    if (!EVERY_CASE && ci != turn % NUM_TEST_COUNTS) continue;
    const int count = test_counts[ci], n = count * size;
    /* Which collectives besides MPI_Allreduce run (bits 1..5). */
    const int runs = EVERY_CASE ? ~0 : 1 << (1 + (turn / NUM_TEST_COUNTS) % 5);
    unsigned char* send = calloc((size_t)n + 1, (size_t)x);
    unsigned char* recv = calloc((size_t)n + 1, (size_t)x);
    fill_all(k, send, rank, 0, n);
    MPI_OK(MPI_Allreduce(send, recv, count, k->type, with, MPI_COMM_WORLD));
    check_elements(k, "MPI_Allreduce", recv, 0, count);
    if (runs & 2) {
      fill_all(k, recv, rank, 0, count);
      MPI_OK(MPI_Allreduce(MPI_IN_PLACE, recv, count, k->type, with, MPI_COMM_WORLD));
      check_elements(k, "MPI_Allreduce in place", recv, 0, count);
    }
    if (runs & 4) {
      memset(recv, 0, (size_t)(n + 1) * (size_t)x);
      MPI_OK(MPI_Reduce(send, recv, count, k->type, with, size - 1, MPI_COMM_WORLD));
      if (rank == size - 1) check_elements(k, "MPI_Reduce", recv, 0, count);
    }
    if (runs & 8) {
      fill_all(k, recv, rank, 0, count);
      MPI_OK(MPI_Reduce(rank == 0 ? MPI_IN_PLACE : send, recv, count, k->type, with, 0, MPI_COMM_WORLD));
      if (rank == 0) check_elements(k, "MPI_Reduce in place", recv, 0, count);
    }
    if (runs & 16) {
      MPI_OK(MPI_Reduce_scatter_block(send, recv, count, k->type, with, MPI_COMM_WORLD));
      check_elements(k, "MPI_Reduce_scatter_block", recv, rank * count, count);
    }
    if (runs & 32) {
      MPI_Request request;
      MPI_OK(MPI_Iallreduce(send, recv, count, k->type, with, MPI_COMM_WORLD, &request));
      MPI_OK(MPI_Wait(&request, MPI_STATUS_IGNORE));
      check_elements(k, "MPI_Iallreduce", recv, 0, count);
    }
    /* Locally: inout = rank's input op rank+1's, element by element. */
    fill_all(k, send, rank, 0, count);
    fill_all(k, recv, rank + 1, 0, count);
    MPI_OK(MPI_Reduce_local(send, recv, count, k->type, with));
    unsigned char* want = calloc(2, (size_t)x);
    for (int i = 0; i < count; ++i) {
      k->fill(want, rank, i);
      k->fill(want + x, rank + 1, i);
      k->combine(want, want + x);
      CHECK(k->equal(recv + i * x, want + x), "MPI_Reduce_local of %s with %s, count %d: element %d wrong", k->name,
            op_name, count, i);
    }
    free(want);
    free(send);
    free(recv);
  }
}

static void run_class(const Kind* kinds, int nkinds, const MPI_Op* ops, const char* const* names, int nops) {
  for (int o = 0; o < nops; ++o)
    for (int t = 0; t < nkinds; ++t) {
      op = ops[o];
      op_name = names[o];
      run_case(&kinds[t], op);
    }
}

static const MPI_Op numeric_ops[] = {MPI_MAX, MPI_MIN, MPI_SUM, MPI_PROD};
static const char* const numeric_names[] = {"MPI_MAX", "MPI_MIN", "MPI_SUM", "MPI_PROD"};
static const MPI_Op integer_ops[] = {MPI_MAX,  MPI_MIN, MPI_SUM,  MPI_PROD, MPI_LAND,
                                     MPI_LOR,  MPI_LXOR, MPI_BAND, MPI_BOR,  MPI_BXOR};
static const char* const integer_names[] = {"MPI_MAX",  "MPI_MIN",  "MPI_SUM",  "MPI_PROD", "MPI_LAND",
                                            "MPI_LOR",  "MPI_LXOR", "MPI_BAND", "MPI_BOR",  "MPI_BXOR"};
static const MPI_Op complex_ops[] = {MPI_SUM, MPI_PROD};
static const char* const complex_names[] = {"MPI_SUM", "MPI_PROD"};
static const MPI_Op logical_ops[] = {MPI_LAND, MPI_LOR, MPI_LXOR};
static const char* const logical_names[] = {"MPI_LAND", "MPI_LOR", "MPI_LXOR"};
static const MPI_Op fortran_integer_ops[] = {MPI_MAX, MPI_MIN, MPI_SUM, MPI_PROD, MPI_BAND, MPI_BOR, MPI_BXOR};
static const char* const fortran_integer_names[] = {"MPI_MAX",  "MPI_MIN", "MPI_SUM", "MPI_PROD",
                                                    "MPI_BAND", "MPI_BOR", "MPI_BXOR"};
static const MPI_Op bitwise_ops[] = {MPI_BAND, MPI_BOR, MPI_BXOR};
static const char* const bitwise_names[] = {"MPI_BAND", "MPI_BOR", "MPI_BXOR"};
static const MPI_Op loc_ops[] = {MPI_MINLOC, MPI_MAXLOC};
static const char* const loc_names[] = {"MPI_MINLOC", "MPI_MAXLOC"};

static void predefined_ops(void) {
  run_class(c_integers, COUNT_OF(c_integers), integer_ops, integer_names, COUNT_OF(integer_ops));
  run_class(fortran_integers, COUNT_OF(fortran_integers), fortran_integer_ops, fortran_integer_names,
            COUNT_OF(fortran_integer_ops));
  run_class(floating, COUNT_OF(floating), numeric_ops, numeric_names, COUNT_OF(numeric_ops));
  run_class(complexes, COUNT_OF(complexes), complex_ops, complex_names, COUNT_OF(complex_ops));
  run_class(logicals, COUNT_OF(logicals), logical_ops, logical_names, COUNT_OF(logical_ops));
  run_class(bytes, COUNT_OF(bytes), bitwise_ops, bitwise_names, COUNT_OF(bitwise_ops));
  run_class(pairs, COUNT_OF(pairs), loc_ops, loc_names, COUNT_OF(loc_ops));
}

/* ---- Predefined ops on derived types of one basic type, which MPICH 4.0.2
 * refuses (MPI_ERR_OP). */
#ifdef HCOMM_MPI

/* Three ints in a row: a predefined op reduces them int by int. */
static void fill_three(void* e, int r, int i) {
  for (int j = 0; j < 3; ++j) ((int*)e)[j] = value(r, 3 * i + j, 1);
}
static void combine_three(const void* in, void* inout) {
  for (int j = 0; j < 3; ++j) combine_int((const int*)in + j, (int*)inout + j);
}
static int equal_three(const void* a, const void* b) { return memcmp(a, b, 3 * sizeof(int)) == 0; }

/* Two doubles with a gap between them (a vector of stride 2): packed in transit. */
static void fill_gapped(void* e, int r, int i) {
  ((double*)e)[0] = value(r, 2 * i, 1);
  ((double*)e)[2] = value(r, 2 * i + 1, 1);
}
static void combine_gapped(const void* in, void* inout) {
  combine_double((const double*)in, (double*)inout);
  combine_double((const double*)in + 2, (double*)inout + 2);
}
static int equal_gapped(const void* a, const void* b) {
  return ((const double*)a)[0] == ((const double*)b)[0] && ((const double*)a)[2] == ((const double*)b)[2];
}

/* Two MPI_2INT pairs. */
static void fill_two_pairs(void* e, int r, int i) {
  fill_two_int(e, r, 2 * i);
  fill_two_int((two_int_t*)e + 1, r, 2 * i + 1);
}
static void combine_two_pairs(const void* in, void* inout) {
  combine_two_int(in, inout);
  combine_two_int((const two_int_t*)in + 1, (two_int_t*)inout + 1);
}
static int equal_two_pairs(const void* a, const void* b) {
  return equal_two_int(a, b) && equal_two_int((const two_int_t*)a + 1, (const two_int_t*)b + 1);
}

static void derived_predefined(void) {
  MPI_Datatype three, gapped, two_pairs;
  MPI_OK(MPI_Type_contiguous(3, MPI_INT, &three));
  MPI_OK(MPI_Type_vector(2, 1, 2, MPI_DOUBLE, &gapped));
  MPI_OK(MPI_Type_contiguous(2, MPI_2INT, &two_pairs));
  MPI_OK(MPI_Type_commit(&three));
  MPI_OK(MPI_Type_commit(&gapped));
  MPI_OK(MPI_Type_commit(&two_pairs));
  const Kind k_three = {three, "contiguous(3, MPI_INT)", fill_three, combine_three, equal_three};
  const Kind k_gapped = {gapped, "vector(2, 1, 2, MPI_DOUBLE)", fill_gapped, combine_gapped, equal_gapped};
  const Kind k_pairs = {two_pairs, "contiguous(2, MPI_2INT)", fill_two_pairs, combine_two_pairs, equal_two_pairs};
  const MPI_Op three_ops[] = {MPI_SUM, MPI_BXOR, MPI_LAND};
  const char* const three_names[] = {"MPI_SUM", "MPI_BXOR", "MPI_LAND"};
  run_class(&k_three, 1, three_ops, three_names, 3);
  run_class(&k_gapped, 1, numeric_ops, numeric_names, 2);
  run_class(&k_pairs, 1, loc_ops, loc_names, 2);
  MPI_OK(MPI_Type_free(&three));
  MPI_OK(MPI_Type_free(&gapped));
  MPI_OK(MPI_Type_free(&two_pairs));
}
#endif

/* ---- User ops. Their function combines with the kind under test. */

static void user_function(void* in, void* inout, int* len, MPI_Datatype* type) {
  const MPI_Aint x = extent_of(*type);
  CHECK(*type == user_kind->type, "a user op's function got datatype 0x%x, not the call's 0x%x", (unsigned)*type,
        (unsigned)user_kind->type);
  for (int i = 0; i < *len; ++i) user_kind->combine((unsigned char*)in + i * x, (unsigned char*)inout + i * x);
}

/* 2x2 matrices of unsigned, multiplied mod 2^32: not commutative. */
static void fill_matrix(void* e, int r, int i) {
  unsigned* m = e;
  for (int j = 0; j < 4; ++j) m[j] = (unsigned)((r * 7 + i * 3 + j * 5) % 9 + (j == r % 4));
}
static void multiply(const void* in, void* inout) {
  const unsigned* a = in;
  unsigned* b = inout;
  const unsigned c[4] = {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3], a[2] * b[0] + a[3] * b[2],
                         a[2] * b[1] + a[3] * b[3]};
  memcpy(b, c, sizeof c);
}
static int equal_matrix(const void* a, const void* b) { return memcmp(a, b, 4 * sizeof(unsigned)) == 0; }

/* Affine maps x -> a*x + b mod 2^32 with a gap between a and b (a vector
 * of stride 2), composed in order: not commutative, packed in transit. */
static void fill_affine(void* e, int r, int i) {
  unsigned* f = e;
  f[0] = (unsigned)(2 * ((r * 13 + i * 7) % 50) + 1);
  f[2] = (unsigned)((r * 31 + i * 17) % 1000);
}
static void compose(const void* in, void* inout) {
  const unsigned* f = in;
  unsigned* g = inout;
  const unsigned a = f[0] * g[0], b = f[2] * g[0] + g[2];
  g[0] = a;
  g[2] = b;
}
static int equal_affine(const void* a, const void* b) {
  return ((const unsigned*)a)[0] == ((const unsigned*)b)[0] && ((const unsigned*)a)[2] == ((const unsigned*)b)[2];
}

/* A struct {int; double} (a gap after the int): sum and max, commutative. */
typedef struct {
  int n;
  double d;
} Record;
static void fill_record(void* e, int r, int i) {
  Record* x = e;
  x->n = (r * 5 + i) % 11;
  x->d = (double)((r * 37 + i * 11) % 101 - 50);
}
static void combine_record(const void* in, void* inout) {
  const Record* a = in;
  Record* b = inout;
  b->n += a->n;
  b->d = a->d > b->d ? a->d : b->d;
}
static int equal_record(const void* a, const void* b) {
  return ((const Record*)a)->n == ((const Record*)b)->n && ((const Record*)a)->d == ((const Record*)b)->d;
}

static void user_ops(void) {
  MPI_Datatype matrix, affine, record;
  MPI_OK(MPI_Type_contiguous(4, MPI_UNSIGNED, &matrix));
  MPI_OK(MPI_Type_vector(2, 1, 2, MPI_UNSIGNED, &affine));
  int lengths[2] = {1, 1};
  MPI_Aint displs[2] = {offsetof(Record, n), offsetof(Record, d)};
  MPI_Datatype members[2] = {MPI_INT, MPI_DOUBLE};
  MPI_OK(MPI_Type_create_struct(2, lengths, displs, members, &record));
  MPI_OK(MPI_Type_commit(&matrix));
  MPI_OK(MPI_Type_commit(&affine));
  MPI_OK(MPI_Type_commit(&record));
  const Kind kinds[] = {
      {matrix, "2x2 matrices (contiguous(4, MPI_UNSIGNED))", fill_matrix, multiply, equal_matrix},
      {affine, "affine maps (vector(2, 1, 2, MPI_UNSIGNED))", fill_affine, compose, equal_affine},
      {record, "struct {int; double}", fill_record, combine_record, equal_record},
      {MPI_INT, "MPI_INT", fill_int, combine_int, equal_int},
  };
  const int commutes[] = {0, 0, 1, 1};
  for (int t = 0; t < COUNT_OF(kinds); ++t) {
    MPI_Op user;
    MPI_OK(MPI_Op_create(user_function, commutes[t], &user));
    int commute = -1;
    MPI_OK(MPI_Op_commutative(user, &commute));
    CHECK(commute == commutes[t], "MPI_Op_commutative of a user op made with commute %d says %d", commutes[t], commute);
    op = MPI_SUM;  /* MPI_INT's inputs and combination: a user SUM */
    op_name = commutes[t] ? "a commutative user op" : "a user op that does not commute";
    user_kind = &kinds[t];
    run_case(&kinds[t], user);
    MPI_OK(MPI_Op_free(&user));
    CHECK(user == MPI_OP_NULL, "MPI_Op_free left the handle 0x%x, not MPI_OP_NULL", (unsigned)user);
  }
  /* A user op freed while a call that uses it is in flight: the call goes on with it. */
  MPI_Op user;
  MPI_OK(MPI_Op_create(user_function, 0, &user));
  user_kind = &kinds[0];
  unsigned send[4 * 7], recv[4 * 7];
  fill_all(&kinds[0], (unsigned char*)send, rank, 0, 7);
  MPI_Request request;
  MPI_OK(MPI_Iallreduce(send, recv, 7, matrix, user, MPI_COMM_WORLD, &request));
  MPI_OK(MPI_Op_free(&user));
  MPI_OK(MPI_Wait(&request, MPI_STATUS_IGNORE));
  op_name = "a user op freed while in flight";
  check_elements(&kinds[0], "MPI_Iallreduce", (unsigned char*)recv, 0, 7);
  MPI_OK(MPI_Type_free(&matrix));
  MPI_OK(MPI_Type_free(&affine));
  MPI_OK(MPI_Type_free(&record));
}

/* ---- Errors: an op MPI does not define on a type is MPI_ERR_OP. */

static void errors(void) {
  MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  double d[2] = {1, 2}, d_out[2];
  float f[2] = {1, 2}, f_out[2];
  int n[2] = {1, 2}, n_out[2];
  bool b[2] = {true, false}, b_out[2];
  double _Complex z[2] = {1, 2}, z_out[2];
  double_int_t di[2] = {{1, 0}, {2, 1}}, di_out[2];
  if (!MPICH_BUGS) EXPECT_CLASS(MPI_Allreduce(f, f_out, 2, MPI_FLOAT, MPI_LAND, MPI_COMM_WORLD), MPI_ERR_OP);
  EXPECT_CLASS(MPI_Allreduce(d, d_out, 2, MPI_DOUBLE, MPI_BOR, MPI_COMM_WORLD), MPI_ERR_OP);
  EXPECT_CLASS(MPI_Allreduce(n, n_out, 2, MPI_INT, MPI_MINLOC, MPI_COMM_WORLD), MPI_ERR_OP);
  EXPECT_CLASS(MPI_Allreduce(b, b_out, 2, MPI_C_BOOL, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_OP);
  EXPECT_CLASS(MPI_Allreduce(z, z_out, 2, MPI_C_DOUBLE_COMPLEX, MPI_MAX, MPI_COMM_WORLD), MPI_ERR_OP);
  EXPECT_CLASS(MPI_Reduce(di, di_out, 2, MPI_DOUBLE_INT, MPI_SUM, 0, MPI_COMM_WORLD), MPI_ERR_OP);
  EXPECT_CLASS(MPI_Reduce_local(n, n_out, 2, MPI_INT, MPI_OP_NULL), MPI_ERR_OP);
  EXPECT_CLASS(MPI_Reduce_local(d, d_out, 2, MPI_DOUBLE, MPI_BXOR), MPI_ERR_OP);
  MPI_Op sum = MPI_SUM;
  EXPECT_CLASS(MPI_Op_free(&sum), MPI_ERR_OP);
  int commute = 0;
  MPI_OK(MPI_Op_commutative(MPI_MAXLOC, &commute));
  CHECK(commute == 1, "MPI_Op_commutative(MPI_MAXLOC) says %d", commute);
#ifdef HCOMM_MPI
  /* A freed op, and a predefined op on a struct of two basic types. */
  MPI_Op user;
  MPI_OK(MPI_Op_create(user_function, 1, &user));
  const MPI_Op freed = user;
  MPI_OK(MPI_Op_free(&user));
  EXPECT_CLASS(MPI_Allreduce(n, n_out, 2, MPI_INT, freed, MPI_COMM_WORLD), MPI_ERR_OP);
  MPI_Datatype mixed;
  int lengths[2] = {1, 1};
  MPI_Aint displs[2] = {offsetof(Record, n), offsetof(Record, d)};
  MPI_Datatype members[2] = {MPI_INT, MPI_DOUBLE};
  MPI_OK(MPI_Type_create_struct(2, lengths, displs, members, &mixed));
  MPI_OK(MPI_Type_commit(&mixed));
  Record r[1] = {{1, 2}}, r_out[1];
  EXPECT_CLASS(MPI_Allreduce(r, r_out, 1, mixed, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_OP);
  MPI_OK(MPI_Type_free(&mixed));
#endif
  MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char** argv) {
  start_test(&argc, &argv, &rank, &size);
  predefined_ops();
#ifdef HCOMM_MPI
  derived_predefined();
#endif
  user_ops();
  errors();
  MPI_OK(MPI_Finalize());
  return 0;
}
