// The predefined datatypes and operations: sizes for moving data, and the
// HComm dtype and op a reduction maps onto.
#pragma once

#include <hcomm/hcomm.h>
#include <mpi.h>

#include <cstddef>

namespace hcomm::mpi {

struct TypeInfo {
  MPI_Datatype handle;
  const char* name;
  size_t size;           // bytes of data (MPI_Type_size)
  size_t extent;         // bytes from one element to the next (MPI_Type_get_extent)
  int category;          // which reductions MPI defines on it (datatypes.cpp)
  hcomm_dtype_t reduce;  // HComm's type for reductions; HCOMM_NUM_DTYPES: none
};

// The type behind a handle, or MPI_ERR_TYPE naming the argument.
const TypeInfo& type_of(MPI_Datatype type, const char* argument = "datatype");
// count elements of type in bytes; MPI_ERR_COUNT for a negative count.
size_t bytes_of(int count, MPI_Datatype type, const char* argument = "count");
const char* op_name(MPI_Op op);
// The HComm dtype and op that reduce count elements of type with op:
// MPI_ERR_OP where MPI does not define op on type (or op is no reduction
// op), MPI_ERR_UNSUPPORTED_OPERATION where MPI does but HComm cannot.
struct Reduction {
  hcomm_dtype_t dtype;
  hcomm_op_t op;
};
Reduction reduction_of(MPI_Datatype type, MPI_Op op);

}  // namespace hcomm::mpi
