/* Calls a function this library does not implement (MPI_Comm_group) under
 * the default error handler: the job must stop with a message naming it
 * (unsupported_test.sh checks both). */
#include "check.h"

int main(int argc, char** argv) {
  MPI_OK(MPI_Init(&argc, &argv));
  MPI_Group group;
  MPI_Comm_group(MPI_COMM_WORLD, &group);
  fprintf(stderr, "MPI_Comm_group returned instead of stopping the job\n");
  MPI_Finalize();
  return 0;
}
