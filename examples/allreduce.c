/* An allreduce with the C API. hcomm-run starts the ranks and gives each
 * its rank, the job's size and the rendezvous:
 *   hcomm-run -n 4 ./hcomm_example_allreduce
 * Every rank contributes rank + 1 in each element and checks the sum. */
#include <hcomm/hcomm.h>
#include <stdio.h>
#include <stdlib.h>

/* Every call returns an hcomm_result_t; hcomm_get_last_error() says why. */
#define CHECK(call)                                                      \
  do {                                                                   \
    hcomm_result_t rc_ = (call);                                         \
    if (rc_ != HCOMM_SUCCESS) {                                          \
      fprintf(stderr, "%s failed: %s\n", #call, hcomm_get_last_error()); \
      exit(1);                                                           \
    }                                                                    \
  } while (0)

int main(void) {
  hcomm_comm_t comm;
  CHECK(hcomm_comm_init_env(&comm)); /* rank, size and rendezvous from hcomm-run */
  int rank, size;
  CHECK(hcomm_comm_rank(comm, &rank));
  CHECK(hcomm_comm_size(comm, &size));

  enum { COUNT = 1000 };
  float send[COUNT], recv[COUNT];
  for (int i = 0; i < COUNT; ++i) send[i] = (float)(rank + 1);
  CHECK(hcomm_allreduce(send, recv, COUNT, HCOMM_FLOAT32, HCOMM_SUM, comm, NULL));

  const float expected = size * (size + 1) / 2.0f;
  int wrong = 0;
  for (int i = 0; i < COUNT; ++i) wrong += recv[i] != expected;
  if (wrong)
    fprintf(stderr, "rank %d: %d of %d elements differ from %g\n", rank, wrong, COUNT, expected);
  else if (rank == 0)
    printf("allreduce over %d ranks: every element is %g\n", size, expected);
  CHECK(hcomm_comm_destroy(comm));
  return wrong ? 1 : 0;
}
