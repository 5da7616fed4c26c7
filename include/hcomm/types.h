/* HComm basic types shared by the public API and the plugin ABI. C99. */
#ifndef HCOMM_TYPES_H
#define HCOMM_TYPES_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define HCOMM_API
#else
#define HCOMM_API __attribute__((visibility("default")))
#endif

/* Status codes: every C entry point of the API and of the plugin ABI returns one. */
typedef enum hcomm_result {
  HCOMM_SUCCESS = 0,
  HCOMM_ERR_INVALID_ARGUMENT = 1, /* a caller's argument is wrong; the text names it */
  HCOMM_ERR_UNSUPPORTED = 2,      /* valid, but not available here (plugin, memory kind, ...) */
  HCOMM_ERR_SYSTEM = 3,           /* an OS call failed (socket, mmap, ...) */
  HCOMM_ERR_TIMEOUT = 4,          /* a peer did not answer within HCOMM_TIMEOUT */
  HCOMM_ERR_REMOTE = 5,           /* a peer closed its connection or died */
  HCOMM_ERR_PLUGIN = 6,           /* a plugin could not be found, loaded or checked */
  HCOMM_ERR_INTERNAL = 7,         /* a broken invariant inside HComm (a bug) */
  HCOMM_ERR_CONFIG = 8,           /* an HCOMM_* setting does not parse */
  HCOMM_IN_PROGRESS = 9,          /* not an error: the operation has not finished */
  HCOMM_ERR_TRUNCATED = 10        /* a message was longer than the receive's room (point to point) */
} hcomm_result_t;

/* The enums a caller passes in end with an enumerator that is no valid
   argument (*_ENUM_MIN): it makes every int32_t a value of the type in C++
   too, so that a wrong value is an error HComm reports, not undefined
   behaviour. */
typedef enum hcomm_dtype {
  HCOMM_INT8 = 0,
  HCOMM_UINT8 = 1,
  HCOMM_INT32 = 2,
  HCOMM_UINT32 = 3,
  HCOMM_INT64 = 4,
  HCOMM_UINT64 = 5,
  HCOMM_FLOAT16 = 6,
  HCOMM_BFLOAT16 = 7,
  HCOMM_FLOAT32 = 8,
  HCOMM_FLOAT64 = 9,
  HCOMM_NUM_DTYPES = 10,
  HCOMM_DTYPE_ENUM_MIN = INT32_MIN
} hcomm_dtype_t;

/* Opaque elements: HCOMM_DTYPE_OPAQUE(bytes) is the dtype of elements of
 * `bytes` bytes (1 .. HCOMM_OPAQUE_MAX_BYTES, any number, not only powers of
 * two), which HComm treats as wholes: counts are in them, every collective
 * and point to point moves them, and no algorithm ever cuts one (its chunks,
 * blocks and slices end on element boundaries). They reduce with user ops
 * only (hcomm_op_create), which see whole elements: structs such as MPI's
 * value-and-index pairs, or any record a user op combines. */
#define HCOMM_DTYPE_OPAQUE_BASE 0x40000000
#define HCOMM_OPAQUE_MAX_BYTES (1 << 24)
#define HCOMM_DTYPE_OPAQUE(bytes) ((hcomm_dtype_t)(HCOMM_DTYPE_OPAQUE_BASE + (int32_t)(bytes)))

/* AVG is SUM divided by the number of ranks (integer types: truncating division).
 * hcomm_op_create makes user ops, whose values lie apart from these. */
typedef enum hcomm_op {
  HCOMM_SUM = 0,
  HCOMM_PROD = 1,
  HCOMM_MIN = 2,
  HCOMM_MAX = 3,
  HCOMM_AVG = 4,
  HCOMM_NUM_OPS = 5,
  HCOMM_OP_ENUM_MIN = INT32_MIN
} hcomm_op_t;

typedef enum hcomm_coll {
  HCOMM_COLL_ALLREDUCE = 0,
  HCOMM_COLL_BROADCAST = 1,
  HCOMM_COLL_REDUCE = 2,
  HCOMM_COLL_ALLGATHER = 3,
  HCOMM_COLL_REDUCE_SCATTER = 4,
  HCOMM_COLL_ALLTOALL = 5,
  HCOMM_COLL_GATHER = 6,
  HCOMM_COLL_SCATTER = 7,
  HCOMM_COLL_BARRIER = 8,
  HCOMM_COLL_SENDRECV = 9,  /* point-to-point send and receive */
  HCOMM_COLL_ALLGATHERV = 10,
  HCOMM_COLL_REDUCE_SCATTER_V = 11,
  HCOMM_COLL_ALLTOALLV = 12,
  HCOMM_COLL_SCAN = 13,
  HCOMM_COLL_EXSCAN = 14,
  HCOMM_NUM_COLLS = 15,
  HCOMM_COLL_ENUM_MIN = INT32_MIN
} hcomm_coll_t;

/* Memory kinds, as bits so that capabilities can be masks. */
typedef enum hcomm_mem_kind {
  HCOMM_MEM_HOST = 1u << 0,
  HCOMM_MEM_CUDA = 1u << 1
} hcomm_mem_kind_t;

#ifdef __cplusplus
}
#endif

#endif /* HCOMM_TYPES_H */
