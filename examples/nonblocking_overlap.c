/* A nonblocking allreduce overlapped with computation, then waited for:
 *   hcomm-run -n 4 ./hcomm_example_nonblocking_overlap
 * HComm moves a request forward inside its own calls (it has no progress
 * thread), so the computation runs in slices and calls hcomm_test between
 * them: the allreduce advances while the rank computes. hcomm_wait finishes
 * what is left. */
#include <hcomm/hcomm.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(call)                                                      \
  do {                                                                   \
    hcomm_result_t rc_ = (call);                                         \
    if (rc_ != HCOMM_SUCCESS) {                                          \
      fprintf(stderr, "%s failed: %s\n", #call, hcomm_get_last_error()); \
      exit(1);                                                           \
    }                                                                    \
  } while (0)

enum { COUNT = 1 << 20, SLICES = 64, SLICE_WORK = 1 << 16 };

int main(void) {
  hcomm_comm_t comm;
  CHECK(hcomm_comm_init_env(&comm));
  int rank, size;
  CHECK(hcomm_comm_rank(comm, &rank));
  CHECK(hcomm_comm_size(comm, &size));

  float* grad = malloc(COUNT * sizeof *grad);
  if (!grad) return 1;
  for (int i = 0; i < COUNT; ++i) grad[i] = (float)(rank + 1);

  hcomm_request_t request;
  CHECK(hcomm_iallreduce(grad, grad, COUNT, HCOMM_FLOAT32, HCOMM_SUM, comm, &request));

  /* Work that does not touch grad: a sum of 0 .. SLICES * SLICE_WORK - 1. */
  int64_t work = 0;
  int done = 0, done_in_slice = -1;
  for (int slice = 0; slice < SLICES; ++slice) {
    for (int64_t i = (int64_t)slice * SLICE_WORK; i < (int64_t)(slice + 1) * SLICE_WORK; ++i) work += i;
    if (!done) {
      CHECK(hcomm_test(request, &done)); /* frees the request once it reports done */
      if (done) done_in_slice = slice;
    }
  }
  if (!done) CHECK(hcomm_wait(request));

  const int64_t n = (int64_t)SLICES * SLICE_WORK;
  const float expected = size * (size + 1) / 2.0f;
  int wrong = work != n * (n - 1) / 2;
  for (int i = 0; i < COUNT; ++i) wrong += grad[i] != expected;
  if (wrong)
    fprintf(stderr, "rank %d: %d wrong results\n", rank, wrong);
  else if (rank == 0)
    printf("allreduce of %d floats over %d ranks: finished %s %d of %d\n", COUNT, size,
           done_in_slice >= 0 ? "during the computation, at slice" : "by hcomm_wait after slice",
           done_in_slice >= 0 ? done_in_slice : SLICES - 1, SLICES);
  free(grad);
  CHECK(hcomm_comm_destroy(comm));
  return wrong ? 1 : 0;
}
