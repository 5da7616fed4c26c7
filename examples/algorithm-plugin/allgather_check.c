/* Checks an allgather algorithm on every rank of a job: the library must
 * choose ALGORITHM for every call (force it with HCOMM_TUNE), and every
 * element of every result must be right, in place and not, over a range of
 * counts and two dtypes.
 *   HCOMM_PLUGIN_PATH=DIR HCOMM_TUNE=allgather:@naive \
 *     hcomm-run -n 3 ./hcomm_example_allgather_check naive */
#include <hcomm/hcomm.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(call)                                                      \
  do {                                                                   \
    hcomm_result_t rc_ = (call);                                         \
    if (rc_ != HCOMM_SUCCESS) {                                          \
      fprintf(stderr, "%s failed: %s\n", #call, hcomm_get_last_error()); \
      exit(1);                                                           \
    }                                                                    \
  } while (0)

/* Element i of rank r's block: a value every dtype below holds exactly. */
static int64_t value(int r, size_t i) { return (int64_t)((r * 7919 + i * 31) % 100003); }

static void put(void* buf, hcomm_dtype_t dtype, size_t at, int64_t v) {
  if (dtype == HCOMM_INT32)
    ((int32_t*)buf)[at] = (int32_t)v;
  else
    ((double*)buf)[at] = (double)v;
}

static int64_t get(const void* buf, hcomm_dtype_t dtype, size_t at) {
  return dtype == HCOMM_INT32 ? ((const int32_t*)buf)[at] : (int64_t)((const double*)buf)[at];
}

/* One allgather of `count` elements per rank; returns the wrong elements. */
static size_t run(hcomm_comm_t comm, int rank, int size, size_t count, hcomm_dtype_t dtype, int in_place,
                  const char* algorithm) {
  const char* chosen = NULL;
  CHECK(hcomm_comm_query_algorithm(comm, HCOMM_COLL_ALLGATHER, count, dtype, &chosen));
  if (strcmp(chosen, algorithm) != 0) {
    fprintf(stderr, "rank %d: allgather of %zu %s runs %s, not %s\n", rank, count, hcomm_dtype_name(dtype), chosen,
            algorithm);
    exit(1);
  }
  const size_t es = hcomm_dtype_size(dtype), total = count * (size_t)size;
  char* recv = malloc(total * es + 1);
  char* send = in_place ? recv + (size_t)rank * count * es : malloc(count * es + 1);
  memset(recv, 0xA5, total * es); /* what the call does not write stays this */
  for (size_t i = 0; i < count; ++i) put(send, dtype, i, value(rank, i));
  CHECK(hcomm_allgather(send, recv, count, dtype, comm, NULL));
  size_t wrong = 0;
  for (int r = 0; r < size; ++r)
    for (size_t i = 0; i < count; ++i) {
      const int64_t got = get(recv, dtype, (size_t)r * count + i), expected = value(r, i);
      if (got != expected && wrong++ == 0)
        fprintf(stderr, "rank %d: allgather of %zu %s%s: block %d element %zu is %lld, expected %lld\n", rank, count,
                hcomm_dtype_name(dtype), in_place ? " in place" : "", r, i, (long long)got, (long long)expected);
    }
  if (!in_place) free(send);
  free(recv);
  return wrong;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s ALGORITHM (the allgather algorithm HCOMM_TUNE forces)\n", argv[0]);
    return 2;
  }
  hcomm_comm_t comm;
  CHECK(hcomm_comm_init_env(&comm));
  int rank, size;
  CHECK(hcomm_comm_rank(comm, &rank));
  CHECK(hcomm_comm_size(comm, &size));

  /* Up to several chunks per message (HCOMM_CHUNK_BYTES, 512K by default). */
  const size_t counts[] = {0, 1, 7, 1000, 300001};
  const hcomm_dtype_t dtypes[] = {HCOMM_INT32, HCOMM_FLOAT64};
  size_t wrong = 0, calls = 0;
  for (size_t c = 0; c < sizeof counts / sizeof counts[0]; ++c)
    for (size_t d = 0; d < sizeof dtypes / sizeof dtypes[0]; ++d)
      for (int in_place = 0; in_place < 2; ++in_place, ++calls)
        wrong += run(comm, rank, size, counts[c], dtypes[d], in_place, argv[1]);
  if (wrong)
    fprintf(stderr, "rank %d: %zu wrong elements\n", rank, wrong);
  else if (rank == 0)
    printf("allgather by %s over %d ranks: %zu calls, every element right\n", argv[1], size, calls);
  CHECK(hcomm_comm_destroy(comm));
  return wrong ? 1 : 0;
}
