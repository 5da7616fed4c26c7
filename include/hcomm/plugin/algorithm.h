/* HComm algorithm plugin interface, ABI 1.0.
 *
 * An algorithm turns one collective call into a schedule for this rank: a
 * list of steps, each naming a peer, buffer slices and the steps it waits for.
 * The core's executor runs schedules; an algorithm never touches a transport.
 * Schedules hold buffer references, not pointers, so the core caches them per
 * call key (collective, count, dtype, op, root, in-place, memory kind).
 */
#ifndef HCOMM_PLUGIN_ALGORITHM_H
#define HCOMM_PLUGIN_ALGORITHM_H

#include "hcomm/plugin/plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hcomm_coll_args {
  size_t size;
  hcomm_coll_t coll;
  size_t count;       /* elements per rank as the public API defines it */
  hcomm_dtype_t dtype;
  size_t dtype_size;  /* bytes per element */
  hcomm_op_t op;      /* reductions only */
  int root;           /* rooted collectives only */
  int in_place;       /* send and receive buffers are the same */
  uint32_t mem_kind;  /* hcomm_mem_kind_t of the buffers */
} hcomm_coll_args_t;

/* The link model an algorithm's cost function uses (alpha-beta-gamma). */
typedef struct hcomm_link_model {
  double alpha_us;         /* per message */
  double beta_us_per_byte; /* per byte moved */
  double gamma_us_per_byte;/* per byte reduced */
} hcomm_link_model_t;

/* A read-only view of the communicator. */
typedef struct hcomm_comm_view {
  size_t size;
  int rank;
  int nranks;
  hcomm_link_model_t link; /* the slowest link of the communicator */
} hcomm_comm_view_t;

typedef enum hcomm_step_kind {
  HCOMM_STEP_SEND = 0,        /* src -> peer */
  HCOMM_STEP_RECV = 1,        /* peer -> dst */
  HCOMM_STEP_RECV_REDUCE = 2, /* dst = src op (peer's data) */
  HCOMM_STEP_REDUCE = 3,      /* dst = src op src2 */
  HCOMM_STEP_COPY = 4         /* dst = src */
} hcomm_step_kind_t;

typedef enum hcomm_buffer {
  HCOMM_BUF_SEND = 0,   /* the user's send buffer (the receive buffer when in place) */
  HCOMM_BUF_RECV = 1,   /* the user's receive buffer */
  HCOMM_BUF_SCRATCH = 2 /* core-owned scratch of the size the builder asked for */
} hcomm_buffer_t;

typedef struct hcomm_bufref {
  uint32_t buffer; /* hcomm_buffer_t */
  uint64_t offset; /* bytes */
} hcomm_bufref_t;

#define HCOMM_STEP_MAX_DEPS 8

typedef enum hcomm_step_flags {
  /* This reduction produces the final value of its elements: AVG divides here. */
  HCOMM_STEP_FINAL = 1u << 0
} hcomm_step_flags_t;

/* A step is cut into nchunks chunks of whole elements (chunk i covers
 * elements [i*n/nchunks, (i+1)*n/nchunks)); chunks pipeline. A dependency is
 * chunk-wise (chunk i waits for chunk i of the other step, which must have as
 * many chunks) unless its bit in whole_deps says it waits for the whole step.
 * Send and receive steps of a pair match by `match` (below 2^24), which both
 * sides choose alike, and must have the same bytes and nchunks (at most 2^16). */
typedef struct hcomm_step {
  uint32_t kind; /* hcomm_step_kind_t */
  uint32_t flags;
  int32_t peer;  /* rank in the communicator: SEND, RECV, RECV_REDUCE */
  uint32_t match;
  hcomm_bufref_t src;
  hcomm_bufref_t src2;
  hcomm_bufref_t dst;
  uint64_t bytes;
  uint32_t nchunks;
  uint32_t ndeps;
  int32_t deps[HCOMM_STEP_MAX_DEPS]; /* indices of earlier steps */
  uint32_t whole_deps;               /* bit i: deps[i] waits for the whole step */
} hcomm_step_t;

typedef struct hcomm_schedule_builder {
  void* ctx;
  /* Appends a step; returns its index, or -1 (the text is recorded). */
  int32_t (*add)(struct hcomm_schedule_builder* builder, const hcomm_step_t* step);
  /* Asks for scratch memory (bytes) for HCOMM_BUF_SCRATCH references. */
  void (*need_scratch)(struct hcomm_schedule_builder* builder, uint64_t bytes);
  /* The number of chunks for a transfer of `bytes` (HCOMM_CHUNK_BYTES). */
  uint32_t (*chunks_for)(struct hcomm_schedule_builder* builder, uint64_t bytes, size_t elem_size);
} hcomm_schedule_builder_t;

typedef struct hcomm_algorithm_desc {
  size_t size;
  const char* name;
  uint32_t colls;     /* bit (1u << hcomm_coll_t) per collective served */
  uint32_t mem_kinds; /* hcomm_mem_kind_t bits */
  uint64_t min_bytes, max_bytes; /* message sizes served, inclusive */
  int min_ranks, max_ranks;      /* communicator sizes served, inclusive */
  /* Estimated time in microseconds; the selector takes the cheapest. */
  double (*cost)(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm);
  /* Fills the builder, or returns HCOMM_ERR_UNSUPPORTED to let the next
   * candidate try. */
  hcomm_result_t (*build)(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm,
                          hcomm_schedule_builder_t* builder);
} hcomm_algorithm_desc_t;

typedef struct hcomm_algorithm_v1 {
  size_t size;
  hcomm_result_t (*init)(const hcomm_plugin_services_t* services);
  size_t num_algorithms;
  const hcomm_algorithm_desc_t* algorithms;
} hcomm_algorithm_v1_t;

#ifdef __cplusplus
}
#endif

#endif /* HCOMM_PLUGIN_ALGORITHM_H */
