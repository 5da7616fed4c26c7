/* The reductions the MPI test programs check: the types and ops they run,
 * elements read and written as doubles, and inputs whose sums and products
 * over any prefix of the ranks are exact in every one of those types (signed
 * char sums up to 7 ranks). */
#ifndef HCOMM_MPI_TEST_REDUCTIONS_H
#define HCOMM_MPI_TEST_REDUCTIONS_H

#include <mpi.h>

static const MPI_Datatype types[] = {MPI_INT, MPI_LONG, MPI_UNSIGNED, MPI_FLOAT, MPI_DOUBLE, MPI_SIGNED_CHAR};
static const char* type_names[] = {"MPI_INT", "MPI_LONG", "MPI_UNSIGNED", "MPI_FLOAT", "MPI_DOUBLE", "MPI_SIGNED_CHAR"};
static const MPI_Op ops[] = {MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN};
static const char* op_names[] = {"MPI_SUM", "MPI_PROD", "MPI_MAX", "MPI_MIN"};
#define NTYPES (int)(sizeof types / sizeof types[0])
#define NOPS (int)(sizeof ops / sizeof ops[0])

/* Element i of rank r's input. */
static inline double input(int r, int i, MPI_Op op) { return op == MPI_PROD ? 1 + (r + i) % 2 : (r + 1) + i % 7; }

/* Element i of the reduction of ranks 0..last's inputs, in rank order. */
static inline double reduced(int last, int i, MPI_Op op) {
  double acc = input(0, i, op);
  for (int r = 1; r <= last; ++r) {
    double v = input(r, i, op);
    if (op == MPI_SUM) acc += v;
    if (op == MPI_PROD) acc *= v;
    if (op == MPI_MAX) acc = v > acc ? v : acc;
    if (op == MPI_MIN) acc = v < acc ? v : acc;
  }
  return acc;
}

static inline void set(void* buf, MPI_Datatype t, int i, double v) {
  if (t == MPI_INT) ((int*)buf)[i] = (int)v;
  if (t == MPI_LONG) ((long*)buf)[i] = (long)v;
  if (t == MPI_UNSIGNED) ((unsigned*)buf)[i] = (unsigned)v;
  if (t == MPI_FLOAT) ((float*)buf)[i] = (float)v;
  if (t == MPI_DOUBLE) ((double*)buf)[i] = v;
  if (t == MPI_SIGNED_CHAR) ((signed char*)buf)[i] = (signed char)v;
}

static inline double get(const void* buf, MPI_Datatype t, int i) {
  if (t == MPI_INT) return ((const int*)buf)[i];
  if (t == MPI_LONG) return (double)((const long*)buf)[i];
  if (t == MPI_UNSIGNED) return ((const unsigned*)buf)[i];
  if (t == MPI_FLOAT) return ((const float*)buf)[i];
  if (t == MPI_DOUBLE) return ((const double*)buf)[i];
  return ((const signed char*)buf)[i];
}

#endif
