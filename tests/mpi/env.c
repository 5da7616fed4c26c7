/* The environment: init and finalize flags, rank and size, versions, the
 * processor name, time, thread levels, MPI_TAG_UB, info objects and
 * MPI_Alloc_mem. */
#include <string.h>

#include "check.h"

int main(int argc, char** argv) {
  int flag = -1;
  MPI_OK(MPI_Initialized(&flag));
  CHECK(flag == 0, "MPI_Initialized before MPI_Init says %d", flag);
  int provided = -1;
  MPI_OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided));
  CHECK(provided >= MPI_THREAD_SINGLE && provided <= MPI_THREAD_FUNNELED,
        "MPI_Init_thread(FUNNELED) provided %d: more than asked, or nothing", provided);
  int queried = -1;
  MPI_OK(MPI_Query_thread(&queried));
  CHECK(queried == provided, "MPI_Query_thread says %d, MPI_Init_thread provided %d", queried, provided);
  MPI_OK(MPI_Is_thread_main(&flag));
  CHECK(flag == 1, "MPI_Is_thread_main on the thread that called MPI_Init_thread says %d", flag);
  MPI_OK(MPI_Initialized(&flag));
  CHECK(flag == 1, "MPI_Initialized after MPI_Init says %d", flag);

  int rank = -1, size = -1;
  MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
  check_rank = rank;
  CHECK(size >= 1 && rank >= 0 && rank < size, "rank %d of size %d", rank, size);
  int self_rank = -1, self_size = -1;
  MPI_OK(MPI_Comm_rank(MPI_COMM_SELF, &self_rank));
  MPI_OK(MPI_Comm_size(MPI_COMM_SELF, &self_size));
  CHECK(self_rank == 0 && self_size == 1, "MPI_COMM_SELF: rank %d of %d", self_rank, self_size);
  /* Every rank knows a different rank: their sum over MPI_COMM_WORLD tells. */
  int sum = 0;
  MPI_OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
  CHECK(sum == size * (size - 1) / 2, "the ranks sum to %d, expected %d", sum, size * (size - 1) / 2);
  MPI_OK(MPI_Allreduce(MPI_IN_PLACE, &self_rank, 1, MPI_INT, MPI_SUM, MPI_COMM_SELF));
  CHECK(self_rank == 0, "an allreduce over MPI_COMM_SELF gave %d", self_rank);

  int version = 0, subversion = -1;
  MPI_OK(MPI_Get_version(&version, &subversion));
  /* The library may be older than the header it was built with (a binary
   * built against MPICH 4.0 running on HComm's 3.1), never newer. */
  CHECK(version >= 3 && (version < MPI_VERSION || (version == MPI_VERSION && subversion <= MPI_SUBVERSION)),
        "MPI_Get_version %d.%d: below 3, or newer than the header's %d.%d", version, subversion, MPI_VERSION,
        MPI_SUBVERSION);
  char library[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = -1;
  MPI_OK(MPI_Get_library_version(library, &len));
  CHECK(len > 0 && (int)strlen(library) == len, "MPI_Get_library_version: length %d for \"%s\"", len, library);
  char name[MPI_MAX_PROCESSOR_NAME];
  MPI_OK(MPI_Get_processor_name(name, &len));
  CHECK(len > 0 && (int)strlen(name) == len, "MPI_Get_processor_name: length %d for \"%s\"", len, name);

  const double t0 = MPI_Wtime();
  CHECK(MPI_Wtick() > 0 && MPI_Wtick() < 1, "MPI_Wtick is %g", MPI_Wtick());
  double t1 = MPI_Wtime();
  while (t1 - t0 < 0.01) t1 = MPI_Wtime();
  CHECK(t1 - t0 < 10, "MPI_Wtime moved %g s during a 10 ms wait", t1 - t0);

  int* tag_ub = NULL;
  MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag));
  CHECK(flag && tag_ub && *tag_ub >= 32767, "MPI_TAG_UB: flag %d, value %d", flag, tag_ub ? *tag_ub : -1);

  MPI_Info info;
  MPI_OK(MPI_Info_create(&info));
  MPI_OK(MPI_Info_set(info, "key", "a value"));
  MPI_OK(MPI_Info_set(info, "other", "x"));
  char value[MPI_MAX_INFO_VAL + 1];
  MPI_OK(MPI_Info_get(info, "key", MPI_MAX_INFO_VAL, value, &flag));
  CHECK(flag && strcmp(value, "a value") == 0, "MPI_Info_get gave flag %d, \"%s\"", flag, flag ? value : "");
  MPI_OK(MPI_Info_get(info, "absent", MPI_MAX_INFO_VAL, value, &flag));
  CHECK(!flag, "MPI_Info_get found a key never set");
  int nkeys = 0;
  MPI_OK(MPI_Info_get_nkeys(info, &nkeys));
  CHECK(nkeys == 2, "MPI_Info_get_nkeys is %d, expected 2", nkeys);
  MPI_OK(MPI_Info_free(&info));
  CHECK(info == MPI_INFO_NULL, "MPI_Info_free left the handle 0x%x", (unsigned)info);

  /* Memory from MPI_Alloc_mem works in a collective. */
  enum { N = 4099 };
  double* buf = NULL;
  MPI_OK(MPI_Alloc_mem(N * sizeof(double), MPI_INFO_NULL, &buf));
  CHECK(buf != NULL, "MPI_Alloc_mem gave NULL");
  for (int i = 0; i < N; ++i) buf[i] = rank + i;
  MPI_OK(MPI_Allreduce(MPI_IN_PLACE, buf, N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
  for (int i = 0; i < N; ++i)
    CHECK(buf[i] == (double)size * (size - 1) / 2 + (double)size * i, "element %d of the allreduce is %g", i, buf[i]);
  MPI_OK(MPI_Free_mem(buf));

  MPI_OK(MPI_Finalized(&flag));
  CHECK(flag == 0, "MPI_Finalized before MPI_Finalize says %d", flag);
  MPI_OK(MPI_Finalize());
  MPI_OK(MPI_Finalized(&flag));
  CHECK(flag == 1, "MPI_Finalized after MPI_Finalize says %d", flag);
  return 0;
}
