/* Bad arguments under MPI_ERRORS_RETURN: each call returns an error whose
 * class names what was wrong, and nothing else happens (the next calls work). */
#include <string.h>

#include "check.h"

static int rank, size;

/* Bad arguments MPICH 4.0.2 does not catch (it crashes or goes on): left
 * out when this program is built against it. */
#define MPICH_ARGUMENT_GAPS MPICH_BUGS

int main(int argc, char** argv) {
  start_test(&argc, &argv, &rank, &size);
  MPI_Errhandler handler = MPI_ERRHANDLER_NULL;
  MPI_OK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &handler));
  CHECK(handler == MPI_ERRORS_ARE_FATAL, "the default error handler is 0x%x, not MPI_ERRORS_ARE_FATAL",
        (unsigned)handler);
  MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  MPI_OK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &handler));
  CHECK(handler == MPI_ERRORS_RETURN, "MPI_Comm_get_errhandler after setting MPI_ERRORS_RETURN: 0x%x",
        (unsigned)handler);

  int buf[4] = {1, 2, 3, 4}, out[4] = {0};
  MPI_Request req;
  /* Communicators. */
  EXPECT_CLASS(MPI_Barrier(MPI_COMM_NULL), MPI_ERR_COMM);
  EXPECT_CLASS(MPI_Allreduce(buf, out, 4, MPI_INT, MPI_SUM, (MPI_Comm)0x12345678), MPI_ERR_COMM);
  EXPECT_CLASS(MPI_Send(buf, 1, MPI_INT, 0, 0, MPI_COMM_NULL), MPI_ERR_COMM);
  /* Ranks and roots. */
  EXPECT_CLASS(MPI_Send(buf, 1, MPI_INT, size, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
  EXPECT_CLASS(MPI_Send(buf, 1, MPI_INT, -5, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
  EXPECT_CLASS(MPI_Irecv(out, 1, MPI_INT, size + 3, 0, MPI_COMM_WORLD, &req), MPI_ERR_RANK);
  EXPECT_CLASS(MPI_Bcast(buf, 1, MPI_INT, size, MPI_COMM_WORLD), MPI_ERR_ROOT);
  EXPECT_CLASS(MPI_Reduce(buf, out, 1, MPI_INT, MPI_SUM, -1, MPI_COMM_WORLD), MPI_ERR_ROOT);
  EXPECT_CLASS(MPI_Gather(buf, 1, MPI_INT, out, 1, MPI_INT, size + 1, MPI_COMM_WORLD), MPI_ERR_ROOT);
  /* Counts. */
  EXPECT_CLASS(MPI_Send(buf, -1, MPI_INT, 0, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
  if (!MPICH_ARGUMENT_GAPS) EXPECT_CLASS(MPI_Allreduce(buf, out, -3, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_COUNT);
  EXPECT_CLASS(MPI_Bcast(buf, -1, MPI_INT, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
  /* Datatypes. */
  EXPECT_CLASS(MPI_Send(buf, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
  if (!MPICH_ARGUMENT_GAPS) EXPECT_CLASS(MPI_Send(buf, 1, (MPI_Datatype)0x4c00ff77, 0, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
  EXPECT_CLASS(MPI_Bcast(buf, 1, MPI_DATATYPE_NULL, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
  /* Ops: none, or one MPI does not define on the type. */
  EXPECT_CLASS(MPI_Allreduce(buf, out, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD), MPI_ERR_OP);
  EXPECT_CLASS(MPI_Allreduce(buf, out, 1, MPI_FLOAT, MPI_BAND, MPI_COMM_WORLD), MPI_ERR_OP);
  EXPECT_CLASS(MPI_Reduce(buf, out, 1, MPI_DOUBLE, MPI_BXOR, 0, MPI_COMM_WORLD), MPI_ERR_OP);
  /* Tags. */
  EXPECT_CLASS(MPI_Send(buf, 1, MPI_INT, 0, -7, MPI_COMM_WORLD), MPI_ERR_TAG);
  int* tag_ub = NULL;
  int flag = 0;
  MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag));
  if (*tag_ub < 0x7fffffff) EXPECT_CLASS(MPI_Send(buf, 1, MPI_INT, 0, *tag_ub + 1, MPI_COMM_WORLD), MPI_ERR_TAG);
  /* Buffers. */
  EXPECT_CLASS(MPI_Send(NULL, 3, MPI_INT, 0, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER);
  if (!MPICH_ARGUMENT_GAPS) EXPECT_CLASS(MPI_Allreduce(buf, NULL, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_BUFFER);
  /* Requests. */
  req = (MPI_Request)0x2c0fff01;
  EXPECT_CLASS(MPI_Wait(&req, MPI_STATUS_IGNORE), MPI_ERR_REQUEST);
  /* Freeing a predefined communicator. */
  MPI_Comm world = MPI_COMM_WORLD;
  EXPECT_CLASS(MPI_Comm_free(&world), MPI_ERR_COMM);
  /* A message longer than its receive, small and large; wildcards too. */
  int big[8] = {0}, small[2] = {0};
  MPI_Status st;
  MPI_OK(MPI_Isend(big, 8, MPI_INT, rank, 3, MPI_COMM_WORLD, &req));
  EXPECT_CLASS(MPI_Recv(small, 2, MPI_INT, rank, 3, MPI_COMM_WORLD, &st), MPI_ERR_TRUNCATE);
  MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
  int* large = calloc(9000, sizeof(int));
  MPI_OK(MPI_Isend(large, 5000, MPI_INT, rank, 4, MPI_COMM_WORLD, &req));
  EXPECT_CLASS(MPI_Recv(large + 5000, 4000, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st),
               MPI_ERR_TRUNCATE);
  MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
  free(large);
  /* A wildcard where MPI takes none. */
  EXPECT_CLASS(MPI_Send(buf, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
  EXPECT_CLASS(MPI_Send(buf, 1, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD), MPI_ERR_TAG);

#ifdef HCOMM_MPI
  /* What HComm's MPI does not implement yet says so, under MPI_ERRORS_RETURN too. */
  int dims[1] = {size}, periods[1] = {0};
  MPI_Comm cart;
  EXPECT_CLASS(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart), MPI_ERR_UNSUPPORTED_OPERATION);
#endif

  /* The handler is per communicator: a dup inherits MPI_ERRORS_RETURN. */
  MPI_Comm dup;
  MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
  MPI_OK(MPI_Comm_get_errhandler(dup, &handler));
  CHECK(handler == MPI_ERRORS_RETURN, "a dup's error handler is 0x%x, not its parent's", (unsigned)handler);
  EXPECT_CLASS(MPI_Send(buf, 1, MPI_INT, size, 0, dup), MPI_ERR_RANK);
  MPI_OK(MPI_Comm_free(&dup));

  /* Every class has a text. */
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_OK(MPI_Error_string(MPI_ERR_RANK, text, &len));
  CHECK(len > 0, "MPI_Error_string(MPI_ERR_RANK) is empty");

  /* After all that, the communicator works. */
  MPI_OK(MPI_Allreduce(buf, out, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
  for (int i = 0; i < 4; ++i) CHECK(out[i] == (i + 1) * size, "allreduce after the errors: element %d is %d", i, out[i]);
  MPI_OK(MPI_Finalize());
  return 0;
}
