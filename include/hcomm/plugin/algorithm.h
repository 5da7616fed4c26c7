/* HComm algorithm plugin interface (ABI HCOMM_PLUGIN_ABI_MAJOR.MINOR of
 * plugin.h; what a minor version added is marked "ABI 1.n" where it is).
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

/* One call's arguments. Buffer layouts (elements of dtype; n ranks; "block r"
 * is the part that belongs to rank r):
 *   allreduce, broadcast, reduce: SEND and RECV hold count (RECV at the root
 *     only for reduce; broadcast reads SEND at the root only).
 *   allgather: SEND count, RECV n*count with block r at r*count.
 *   reduce_scatter: SEND n*count with block r at r*count, RECV count.
 *   alltoall: SEND and RECV n*count; SEND block r goes to rank r, RECV block r
 *     came from rank r.
 *   gather: SEND count, RECV (root only) n*count.
 *   scatter: SEND (root only) n*count, RECV count.
 *   allgatherv: SEND recv_counts[rank], RECV block r of recv_counts[r] at
 *     recv_displs[r]. count is 0.
 *   reduce_scatter_v: SEND holds the blocks packed in rank order (block r of
 *     recv_counts[r] elements), RECV recv_counts[rank]. count is 0.
 *   alltoallv: SEND block r of send_counts[r] at send_displs[r] goes to rank
 *     r; RECV block r of recv_counts[r] at recv_displs[r] came from rank r.
 *     count is 0.
 *   scan, exscan: SEND and RECV hold count; RECV gets the reduction of ranks
 *     0..rank (scan) or 0..rank-1 (exscan; rank 0 has no RECV: a schedule
 *     there must not name it). Their reductions keep rank order: the left
 *     operand of each (src of REDUCE and RECV_REDUCE, whose received data is
 *     the right operand) reduces ranks just below those of the right one.
 * in_place: this rank's input already lies where its output goes, and SEND
 * resolves to that place (allgather: RECV block rank; reduce_scatter: SEND is
 * the whole input in RECV's buffer, RECV its block; gather at the root: RECV
 * block root; scatter at the root: SEND block root is RECV; alltoall(v): SEND
 * is RECV and the send layout is the receive layout). The count arrays live
 * as long as the schedule the builder makes: the core copies them. */
typedef struct hcomm_coll_args {
  size_t size;
  hcomm_coll_t coll;
  size_t count;       /* elements per rank as the public API defines it */
  hcomm_dtype_t dtype;
  size_t dtype_size;  /* bytes per element; ABI 1.14: any number (opaque dtypes), not only powers of two */
  hcomm_op_t op;      /* reductions only; ABI 1.14: a user op is one of HCOMM_OP_USER_* */
  int root;           /* rooted collectives only */
  int in_place;       /* see above */
  uint32_t mem_kind;  /* hcomm_mem_kind_t of the buffers */
  /* ABI 1.1: the variable-size collectives' layouts, nranks entries each, in
   * elements; NULL for the other collectives. */
  const size_t* send_counts;
  const size_t* send_displs;
  const size_t* recv_counts;
  const size_t* recv_displs;
} hcomm_coll_args_t;

/* ABI 1.14: user ops (hcomm_op_create) reach algorithms as one of these two
 * values, so that one schedule serves every user op of a kind; the executor
 * applies the call's own op. An element may then be any record of
 * dtype_size bytes (an opaque dtype): steps cut messages only at multiples
 * of dtype_size, as chunks do. HCOMM_OP_USER_ORDERED is an op that does not
 * commute: the selector gives such calls only to algorithms that list their
 * collective in ordered_colls (hcomm_algorithm_desc_t), which combine in
 * rank order: the result is x0 op x1 op ... op x(n-1) for rank r's input
 * xr, in any grouping (the op is associative) but with the operands of
 * lower ranks always on the left. The reduction steps' left operand is
 * their src (RECV_REDUCE: dst = src op the peer's data; REDUCE: dst = src op
 * src2; LOAD_REDUCE: dst = src op the peer's src2), so such an algorithm
 * keeps the lower ranks' partial result in src. */
#define HCOMM_OP_USER_COMMUTATIVE ((hcomm_op_t)0x3FFFFF00)
#define HCOMM_OP_USER_ORDERED ((hcomm_op_t)0x3FFFFF01)

/* The link model an algorithm's cost function uses (alpha-beta-gamma). */
typedef struct hcomm_link_model {
  double alpha_us;         /* per message */
  double beta_us_per_byte; /* per byte moved */
  double gamma_us_per_byte;/* per byte reduced */
} hcomm_link_model_t;

typedef enum hcomm_view_flags {
  /* Every rank maps every other rank's window and flags (one host, a
   * transport that maps memory): the mapped-memory steps may be used. */
  HCOMM_VIEW_MAPPED = 1u << 0,
  /* Mapped steps may also name peers' SEND and RECV buffers: the core reads
   * them in place when they are mapped (hcomm_mem_alloc or registered) and
   * with one copy (cross-memory attach) otherwise. */
  HCOMM_VIEW_PEER_BUFFERS = 1u << 1,
  /* ABI 1.3: SIGNAL and WAIT may carry a payload (HCOMM_SIGNAL_PAYLOAD_BYTES;
   * ABI 1.6: up to HCOMM_SIGNAL_MAX_PAYLOAD_BYTES over several flags' lines). */
  HCOMM_VIEW_SIGNAL_PAYLOAD = 1u << 2,
  /* ABI 1.5: this host's ranks outnumber its cores, so a rank that waits
   * may hold the CPU a peer needs to get on. */
  HCOMM_VIEW_OVERSUBSCRIBED = 1u << 3,
  /* ABI 1.10: some ranks of a host lie under different last-level caches
   * (HCOMM_CACHES_APART): a line one of them wrote reaches another through
   * memory, or a slower path between the caches, not through a cache both
   * share. Where this is off, a store into a peer's memory is best left in
   * the caches and a peer's data best read where it lies. */
  HCOMM_VIEW_CACHES_APART = 1u << 4
} hcomm_view_flags_t;

/* A read-only view of the communicator. */
typedef struct hcomm_comm_view {
  size_t size;
  int rank;
  int nranks;
  hcomm_link_model_t link; /* the slowest link of the communicator */
  /* ABI 1.1 */
  uint32_t flags;           /* hcomm_view_flags_t */
  uint64_t window_bytes;    /* HCOMM_BUF_WINDOW bytes per rank and call; 0 without HCOMM_VIEW_MAPPED */
  hcomm_link_model_t mapped;/* loads and stores through mapped memory (alpha: a flag's round trip) */
  /* ABI 1.2: the hosts the ranks live on, as the topology module sees them. */
  int nnodes;               /* hosts the communicator spans (1: all on one) */
  const int* node_of;       /* nranks entries: each rank's host, numbered 0.. in order of each host's lowest rank */
  hcomm_link_model_t intra; /* the slowest link between two ranks of one host */
  hcomm_link_model_t inter; /* the slowest link between hosts; equals intra when nnodes is 1 */
  /* ABI 1.12: the bytes per chunk the core cuts this communicator's transfers
   * into (hcomm_config_t.chunk_bytes, or HCOMM_CHUNK_BYTES): a cost function
   * counts a transfer's chunks as hcomm_chunk_count(bytes, elem_size,
   * chunk_bytes), as the builder's chunks_for does. */
  uint64_t chunk_bytes;
} hcomm_comm_view_t;

typedef enum hcomm_step_kind {
  HCOMM_STEP_SEND = 0,        /* src -> peer */
  HCOMM_STEP_RECV = 1,        /* peer -> dst */
  HCOMM_STEP_RECV_REDUCE = 2, /* dst = src op (peer's data): src is the left operand */
  HCOMM_STEP_REDUCE = 3,      /* dst = src op src2: src is the left operand */
  HCOMM_STEP_COPY = 4,        /* dst = src */
  /* Mapped-memory steps (HCOMM_VIEW_MAPPED only). A reference to the peer's
   * buffer means that rank's buffer in this same call. */
  HCOMM_STEP_LOAD = 5,        /* dst = the peer's src */
  HCOMM_STEP_LOAD_REDUCE = 6, /* dst = src op the peer's src2: src is the left operand */
  HCOMM_STEP_STORE = 7,       /* the peer's dst = src (from 4 KiB past this core's caches: the peer reads memory) */
  HCOMM_STEP_SIGNAL = 8,      /* tells the peer this rank got here (flag `match`); ABI 1.3: with bytes, carries src */
  HCOMM_STEP_WAIT = 9         /* waits for the peer's SIGNAL with the same match; ABI 1.3: with bytes, into dst */
} hcomm_step_kind_t;

typedef enum hcomm_buffer {
  HCOMM_BUF_SEND = 0,   /* the user's send buffer (the receive buffer when in place) */
  HCOMM_BUF_RECV = 1,   /* the user's receive buffer */
  HCOMM_BUF_SCRATCH = 2, /* core-owned scratch of the size the builder asked for */
  /* ABI 1.1: this call's part of the rank's window, memory every rank of the
   * host maps (view->window_bytes). Calls alternate between two parts, so a
   * call may write its window while peers still read the previous call's. */
  HCOMM_BUF_WINDOW = 3
} hcomm_buffer_t;

typedef struct hcomm_bufref {
  uint32_t buffer; /* hcomm_buffer_t */
  uint64_t offset; /* bytes */
} hcomm_bufref_t;

#define HCOMM_STEP_MAX_DEPS 8
#define HCOMM_MAX_SIGNALS 64
/* ABI 1.3: the most bytes a SIGNAL carries in its flag's cache line. */
#define HCOMM_SIGNAL_PAYLOAD_BYTES 56
/* ABI 1.6: the most flags' lines one SIGNAL's payload spans. */
#define HCOMM_SIGNAL_MAX_LINES 8
#define HCOMM_SIGNAL_MAX_PAYLOAD_BYTES (HCOMM_SIGNAL_MAX_LINES * HCOMM_SIGNAL_PAYLOAD_BYTES)

typedef enum hcomm_step_flags {
  /* This reduction produces the final value of its elements: AVG divides here. */
  HCOMM_STEP_FINAL = 1u << 0,
  /* ABI 1.4: no later step of this call, on this rank or a peer, reads what
   * this step writes: the core may write a large result past the cache. */
  HCOMM_STEP_UNREAD = 1u << 1,
  /* ABI 1.7: a COPY into this rank's WINDOW that publishes its RECV at the
   * same offsets (dst.offset is the RECV offset it stands for). Peers LOAD
   * this rank's RECV there (HCOMM_VIEW_PEER_BUFFERS, as for any reference
   * to a peer's RECV): where they cannot map RECV, the core points
   * those loads at the window copy; where they can, they read RECV in
   * place and the core skips the copy. Peers may load only RECV bytes so
   * published, and only after a WAIT for a signal raised once they were. */
  HCOMM_STEP_PUBLISH = 1u << 2,
  /* ABI 1.9: a SIGNAL telling the peer it may read this rank's SEND. The
   * core describes a rank's SEND to its peers (mapped, registered, or
   * copied into its window) only where its schedule has such a signal; a
   * SEND read without one is copied by address, more slowly. Every rank of
   * a schedule where all read each other's SEND flags its ready signals;
   * in a rooted one, the ranks whose SEND the root reads, or the root whose
   * SEND the others read. */
  HCOMM_STEP_SEND_READY = 1u << 3
} hcomm_step_flags_t;

/* A step is cut into nchunks chunks of whole elements (chunk i covers
 * elements [i*n/nchunks, (i+1)*n/nchunks)); chunks pipeline. A dependency is
 * chunk-wise (chunk i waits for chunk i of the other step, which must have as
 * many chunks) unless its bit in whole_deps says it waits for the whole step.
 * Send and receive steps of a pair match by `match` (below 2^24), which both
 * sides choose alike, and must have the same bytes and nchunks (at most
 * HCOMM_MAX_CHUNKS).
 *
 * Mapped-memory steps synchronise through flags. Each chunk of a SIGNAL(peer,
 * match) step is one signal: a release store into the peer's flag `match`
 * (below HCOMM_MAX_SIGNALS). Signals pair with waits as messages of one tag
 * do: within a call, the j-th signal this rank raises towards (peer, match)
 * pairs with the j-th WAIT(this rank, match) chunk on the peer, in step
 * order, and a WAIT chunk completes once its signal was raised (at most
 * HCOMM_MAX_SIGNAL_OCCURRENCES per pair and match in a call). The core raises
 * the signals of one pair and match in that order. A step may touch a peer's
 * window or buffers only after a WAIT for a signal the peer raised once that
 * memory was ready; a rank whose SEND or RECV peers read or write must not
 * finish before a WAIT for each such peer's "done" signal (its buffers belong
 * to the caller again when the call returns). Within a call, window space
 * reused for new data needs the same: its readers' "done" signals first.
 * Across calls the core keeps windows safe: a call writes its half only once
 * every rank finished the call two before, which used the same half.
 * ABI 1.3: a SIGNAL with bytes (at most HCOMM_SIGNAL_PAYLOAD_BYTES, one
 * chunk) copies src's bytes into the flag's own cache line before raising
 * it, and the WAIT it pairs with (bytes equal, one chunk) copies them to dst
 * when it completes: a small message arrives with its flag, in one cache-line
 * transfer. Such a signal must be the only one of its peer and match in the
 * call, and its WAIT the only one of the pair on the peer.
 * ABI 1.6: a payload may span up to HCOMM_SIGNAL_MAX_LINES lines: bytes
 * up to HCOMM_SIGNAL_MAX_PAYLOAD_BYTES fill the lines of flags match,
 * match + 1, ... (HCOMM_SIGNAL_PAYLOAD_BYTES each; all below
 * HCOMM_MAX_SIGNALS), which lie next to each other, and the WAIT completes
 * once every one of them is raised, so that the lines travel together.
 * Each of those flags counts as its pair's one signal in the call.
 * LOAD, LOAD_REDUCE and STORE may name this rank as the peer (its own
 * window or buffers). Mapped steps run one call at a time per communicator,
 * in call order, so a call must use mapped steps or the WINDOW on every rank
 * or on none (the calls of every rank are counted alike). */
#define HCOMM_MAX_SIGNAL_OCCURRENCES ((1u << 20) - 1)
#define HCOMM_MAX_CHUNKS (1u << 16) /* tags carry a chunk's number in 16 bits */

/* The chunks a transfer of `bytes`, in elements of `elem_size` bytes, is cut
 * into at `chunk_bytes` per chunk: one per started chunk_bytes, at most one
 * per element and HCOMM_MAX_CHUNKS, at least one. */
static inline uint32_t hcomm_chunk_count(uint64_t bytes, size_t elem_size, uint64_t chunk_bytes) {
  const uint64_t elements = elem_size ? bytes / elem_size : bytes;
  uint64_t n = chunk_bytes ? bytes / chunk_bytes + (bytes % chunk_bytes != 0) : 1;
  if (n > elements) n = elements;
  if (n > HCOMM_MAX_CHUNKS) n = HCOMM_MAX_CHUNKS;
  return n ? (uint32_t)n : 1u;
}

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

/* ABI 1.13: a collective over a group of this communicator's ranks, added to
 * a schedule as one of its parts (hcomm_schedule_builder_t.add_coll): the
 * core builds it as the group's own communicator would (the algorithm the
 * selector picks for the group, whose view is this one's restricted to the
 * group, without mapped memory) and adds its steps to this schedule, so an
 * algorithm composes flat collectives over hosts, rails or leaders. */
typedef enum hcomm_part_flags {
  /* Its reductions finish their elements: AVG divides there (by this
   * communicator's rank count); in the other parts it sums. */
  HCOMM_PART_FINISHES = 1u << 0,
  /* Its results are the call's: no later step reads them, so its steps keep
   * HCOMM_STEP_UNREAD. */
  HCOMM_PART_LAST = 1u << 1
} hcomm_part_flags_t;

/* Parts' ids: each part's messages are matched by (id + 1) << 16 | the match
 * its algorithm gave them, so the algorithm's own steps keep their matches
 * below 2^16 and the parts' algorithms theirs too. */
#define HCOMM_MAX_PARTS 255

typedef struct hcomm_coll_part {
  size_t size;
  /* The call in the group's terms: root and the layout arrays by group rank. */
  const hcomm_coll_args_t* args;
  /* ranks[i] is group rank i's rank in this communicator; this rank is one of them. */
  const int* ranks;
  int nranks;
  /* Where the part's SEND and RECV lie in this schedule's buffers, the
   * in-place conventions already applied (as hcomm_coll_args_t says). */
  hcomm_bufref_t send;
  hcomm_bufref_t recv;
  /* Below HCOMM_MAX_PARTS; parts that may be in flight at once between the
   * same ranks have different ids, and every rank of the group passes the same. */
  uint32_t id;
  uint32_t flags; /* hcomm_part_flags_t */
  /* Steps of this schedule that the whole part waits for, each as a whole. */
  const int32_t* deps;
  uint32_t ndeps; /* at most HCOMM_STEP_MAX_DEPS */
} hcomm_coll_part_t;

typedef struct hcomm_schedule_builder {
  void* ctx;
  /* Appends a step; returns its index, or -1 (the text is recorded). */
  int32_t (*add)(struct hcomm_schedule_builder* builder, const hcomm_step_t* step);
  /* Asks for scratch memory (bytes) for HCOMM_BUF_SCRATCH references. */
  void (*need_scratch)(struct hcomm_schedule_builder* builder, uint64_t bytes);
  /* The number of chunks for a transfer of `bytes`: hcomm_chunk_count() at
   * the view's chunk_bytes. */
  uint32_t (*chunks_for)(struct hcomm_schedule_builder* builder, uint64_t bytes, size_t elem_size);
  /* ABI 1.13 (where the services' abi_minor is at least 13): adds `part`'s
   * steps; returns the index of a step that completes once this rank's share
   * of the part has, or -1 (the text is recorded). The part's scratch lies
   * past every byte the algorithm asks for with need_scratch. */
  int32_t (*add_coll)(struct hcomm_schedule_builder* builder, const hcomm_coll_part_t* part);
} hcomm_schedule_builder_t;

typedef struct hcomm_algorithm_desc {
  size_t size;
  const char* name;
  uint32_t colls;     /* bit (1u << hcomm_coll_t) per collective served */
  uint32_t mem_kinds; /* hcomm_mem_kind_t bits */
  uint64_t min_bytes, max_bytes; /* message sizes served, inclusive */
  int min_ranks, max_ranks;      /* communicator sizes served, inclusive */
  /* Estimated time in microseconds; the selector takes the cheapest. Infinity
   * (or NaN): the algorithm does not serve this call on this communicator (it
   * is then neither chosen nor forced). */
  double (*cost)(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm);
  /* Fills the builder, or returns HCOMM_ERR_UNSUPPORTED to let the next
   * candidate try. */
  hcomm_result_t (*build)(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm,
                          hcomm_schedule_builder_t* builder);
  /* ABI 1.14: the collectives (bits as in colls) whose calls with
   * HCOMM_OP_USER_ORDERED this algorithm combines in rank order; only these
   * serve such calls. 0 (or a descriptor too small to hold the field): none. */
  uint32_t ordered_colls;
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
