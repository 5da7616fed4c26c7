/* Calls a function this library does not implement (MPI_Cart_create) under
 * the default error handler: the job must stop with a message naming it
 * (unsupported_test.sh checks both). */
#include "check.h"

int main(int argc, char** argv) {
  MPI_OK(MPI_Init(&argc, &argv));
  int dims[1] = {0}, periods[1] = {0};
  MPI_Comm cart;
  MPI_Comm_size(MPI_COMM_WORLD, &dims[0]);
  MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart);
  fprintf(stderr, "MPI_Cart_create returned instead of stopping the job\n");
  MPI_Finalize();
  return 0;
}
