/* HComm public C API.
 *
 * Every function returns an hcomm_result_t; on failure hcomm_get_last_error()
 * gives this thread's text for the last error (what was wrong, which argument,
 * what to do). A communicator may be used by one thread at a time.
 *
 * Collectives, hcomm_send and hcomm_recv take a stream argument: NULL means
 * host-ordered execution (the call, or the request, completes the
 * operation). A non-NULL stream is a cudaStream_t (where a device plugin
 * with a device is loaded): the call is stream-ordered. It returns once the
 * operation is queued behind the work queued on the stream so far, and the
 * stream's later work sees its results; it may be captured into a CUDA
 * graph, each replay running it again. A communicator's stream-ordered calls
 * run in the order they were made, whatever their streams, so every rank
 * makes them in one order, as blocking calls. A host-ordered call on the
 * communicator first waits for the stream-ordered ones made before it (a
 * graph's replays must not overlap host-ordered calls). A stream-ordered
 * call's failure (a peer gone, a timeout) comes from
 * hcomm_comm_get_async_error; the stream's work goes on, on undefined data.
 * Point to point is stream-ordered in exact matching mode only.
 *
 * Buffers may be CUDA device memory where the CUDA device plugin is loaded
 * and sees a device: calls copy such buffers through pinned host memory
 * around the operation. A nonblocking call on device buffers is queued as a
 * stream-ordered one on the legacy default stream (after the work queued
 * there, and on the blocking streams, before it), its request done once its
 * results are back in place; stream-ordered and nonblocking calls run
 * allreduce, broadcast and reduce in pieces of HCOMM_STAGING_CHUNK_BYTES, so
 * that the copies overlap the transfers. Without the plugin, or without a
 * device, a device pointer is taken for host memory.
 */
#ifndef HCOMM_H
#define HCOMM_H

#include "hcomm/types.h"
#include "hcomm/version.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hcomm_comm* hcomm_comm_t;
typedef struct hcomm_request* hcomm_request_t;
typedef void* hcomm_stream_t;

#define HCOMM_UNIQUE_ID_BYTES 128
/* Made by hcomm_get_unique_id on one process and handed by the application to
 * every rank; it carries the rendezvous address and the job's secret. */
typedef struct hcomm_unique_id {
  char internal[HCOMM_UNIQUE_ID_BYTES];
} hcomm_unique_id_t;

/* The version of the library the program runs with, as HCOMM_VERSION_CODE
 * gives the headers' (major * 10000 + minor * 100 + patch; like
 * ncclGetVersion): compare it with HCOMM_VERSION(major, minor, patch). */
HCOMM_API hcomm_result_t hcomm_get_version(int* version);
HCOMM_API const char* hcomm_get_last_error(void);
HCOMM_API const char* hcomm_result_string(hcomm_result_t result);
HCOMM_API const char* hcomm_dtype_name(hcomm_dtype_t dtype);
HCOMM_API const char* hcomm_op_name(hcomm_op_t op);
HCOMM_API size_t hcomm_dtype_size(hcomm_dtype_t dtype); /* 0 for an unknown dtype */

/* Communicators. */
HCOMM_API hcomm_result_t hcomm_get_unique_id(hcomm_unique_id_t* id);
HCOMM_API hcomm_result_t hcomm_comm_init_rank(hcomm_comm_t* comm, const hcomm_unique_id_t* id, int nranks,
                                              int rank);
/* Rank, size and rendezvous from the environment (HCOMM_RANK, HCOMM_SIZE,
 * HCOMM_ROOT, HCOMM_SECRET), as set by hcomm-run. */
HCOMM_API hcomm_result_t hcomm_comm_init_env(hcomm_comm_t* comm);
/* Per-communicator settings, like NCCL's ncclConfig_t: start from
 * HCOMM_CONFIG_INITIALIZER and set the fields you want. A field left as the
 * initializer has it takes its environment variable, else the default; an
 * environment variable that is set wins over the field (with an INFO INIT
 * log line saying so). A NULL config is the initializer. */
#define HCOMM_CONFIG_VERSION 1
/* Whether a split's communicator uses its parent's connections (hcomm_comm_split). */
typedef enum hcomm_split_share {
  HCOMM_SPLIT_SHARE_OFF = 0, /* it connects anew */
  HCOMM_SPLIT_SHARE_ON = 1,  /* it shares them; the communicators sharing them are used by one thread at a time */
  HCOMM_SPLIT_SHARE_AUTO = 2 /* it shares them where their transports may be called from any thread */
} hcomm_split_share_t;
/* How point to point matches sends and receives (see "Point to point"). */
typedef enum hcomm_p2p_matching {
  HCOMM_P2P_MATCHING_EXACT = 0, /* by peer and tag, each receive of its send's count, in one message */
  HCOMM_P2P_MATCHING_ANY = 1    /* as MPI: wildcards, probes, statuses, cancel, receives with room to spare */
} hcomm_p2p_matching_t;
typedef struct hcomm_config {
  size_t size;            /* sizeof(hcomm_config_t) */
  unsigned int version;   /* HCOMM_CONFIG_VERSION */
  const char* transports; /* as HCOMM_TRANSPORTS ("shm,tcp", "^shm"); NULL: unset */
  double timeout_s;       /* as HCOMM_TIMEOUT, above 0; below 0: unset */
  size_t chunk_bytes;     /* as HCOMM_CHUNK_BYTES, above 0; 0: unset */
  int split_share;        /* as HCOMM_SPLIT_SHARE: an hcomm_split_share_t; -1: unset (see hcomm_comm_split) */
  int p2p_matching;       /* as HCOMM_P2P_MATCHING: an hcomm_p2p_matching_t; -1: unset (a split's, dup's or
                             group's: its parent's) */
} hcomm_config_t;
#define HCOMM_CONFIG_INITIALIZER {sizeof(hcomm_config_t), HCOMM_CONFIG_VERSION, NULL, -1.0, 0, -1, -1}
HCOMM_API hcomm_result_t hcomm_comm_init_rank_config(hcomm_comm_t* comm, const hcomm_unique_id_t* id, int nranks,
                                                     int rank, const hcomm_config_t* config);
HCOMM_API hcomm_result_t hcomm_comm_init_env_config(hcomm_comm_t* comm, const hcomm_config_t* config);
/* Splits comm as MPI_Comm_split and ncclCommSplit do: the ranks that pass
 * one color form a new communicator, ranked by key, then by their rank in
 * comm. A rank that passes HCOMM_SPLIT_NOCOLOR takes part and gets *newcomm
 * NULL. Collective: every rank of comm calls it. config NULL: comm's
 * settings. The new communicator has its own rendezvous; it uses comm's
 * connections under a tag context of its own (16 per connections) where
 * its config's split_share (HCOMM_SPLIT_SHARE) allows (by default where
 * their transports may be called from any thread, so that the two may run
 * on different threads: shm, tcp), it allows comm's transports and a context
 * is free on all its ranks; else it connects anew. Destroy it before or
 * after comm, as any other. */
#define HCOMM_SPLIT_NOCOLOR (-1)
HCOMM_API hcomm_result_t hcomm_comm_split(hcomm_comm_t comm, int color, int key, const hcomm_config_t* config,
                                          hcomm_comm_t* newcomm);
/* A new communicator of comm's ranks in comm's order, with comm's settings
 * (hcomm_comm_split with one color, the rank as key). Collective. */
HCOMM_API hcomm_result_t hcomm_comm_dup(hcomm_comm_t comm, hcomm_comm_t* newcomm);
/* The communicator of ranks[0..nranks) of comm, in that order (ranks[i]
 * becomes rank i), as MPI_Comm_create_group makes it: collective over those
 * ranks only, each passing the same ranks and tag (0..HCOMM_TAG_MAX; groups
 * made at once from one comm need different tags). It shares comm's
 * connections as hcomm_comm_split's communicator does. config NULL: comm's
 * settings. */
HCOMM_API hcomm_result_t hcomm_comm_create_group(hcomm_comm_t comm, int nranks, const int* ranks, int tag,
                                                 const hcomm_config_t* config, hcomm_comm_t* newcomm);
/* Operations in flight on comm complete first (each waits up to HCOMM_TIMEOUT
 * without progress), as MPI_Comm_free has them do. If they fail on
 * connections comm shares with other communicators, those fail from then on
 * too, as receives posted into freed memory might still land. */
HCOMM_API hcomm_result_t hcomm_comm_destroy(hcomm_comm_t comm);
/* *error: the first failure of comm's stream-ordered calls, HCOMM_SUCCESS
 * while none failed; its text is then hcomm_get_last_error()'s. The failed
 * call's stream work went on (no kernel waits forever), its results
 * undefined; the communicator is unusable after it. */
HCOMM_API hcomm_result_t hcomm_comm_get_async_error(hcomm_comm_t comm, hcomm_result_t* error);
HCOMM_API hcomm_result_t hcomm_comm_rank(hcomm_comm_t comm, int* rank);
HCOMM_API hcomm_result_t hcomm_comm_size(hcomm_comm_t comm, int* size);
/* The communicator's topology as JSON, in the format HCOMM_TOPO_FILE reads
 * (what hcomm-topo prints): hosts, ranks with their NUMA nodes and CPUs, the
 * class, transport, bandwidth and latency of every pair of ranks, and the
 * levels (each rank's host, the ranks of each host, the hosts' leaders,
 * rails), and its connections (whether a parent's, and its tag context:
 * hcomm_comm_split). Collective: every rank of the communicator calls it. *json stays
 * valid until the next call of it on this communicator or its destruction. */
HCOMM_API hcomm_result_t hcomm_comm_topology(hcomm_comm_t comm, const char** json);

/* User reduction ops (as MPI_Op_create makes them). fn computes
 * inout[i] = in[i] op inout[i] for i < count, in elements of dtype (the
 * call's): `in` is the operand of the lower ranks, as MPI's user functions
 * take it. HComm calls fn on the host, inside the calls on the
 * communicator that make progress (blocking calls, the start of any
 * operation, hcomm_test, hcomm_wait, hcomm_comm_destroy), wherever a
 * built-in op's kernel would run, on whole elements of the
 * call's buffers or of HComm's own (in and inout never overlap; count is
 * any part of the call's). The op must be associative. A commutative one
 * (commutative != 0) may be combined in any order, as the built-in ops are;
 * one that is not is combined in rank order, r0 op r1 op ... op r(n-1), by
 * the algorithms that keep that order (the selector picks among those only;
 * see the algorithm plugins' READMEs). *op is a value apart from the
 * built-in ops, valid in every reducing call until hcomm_op_destroy(op),
 * which may be called while operations that use it are in flight: they go
 * on with it, and user_data must stay valid until they complete. Every rank
 * of a call passes a user op of the same commutativity (the values may
 * differ between ranks). User ops reduce host memory only: a call on device
 * buffers fails with HCOMM_ERR_UNSUPPORTED. HCOMM_AVG stays built in.
 * Opaque dtypes (HCOMM_DTYPE_OPAQUE) reduce with user ops only. These three
 * functions may be called from any thread. */
typedef void (*hcomm_user_op_fn)(const void* in, void* inout, size_t count, hcomm_dtype_t dtype, void* user_data);
HCOMM_API hcomm_result_t hcomm_op_create(hcomm_user_op_fn fn, void* user_data, int commutative, hcomm_op_t* op);
HCOMM_API hcomm_result_t hcomm_op_destroy(hcomm_op_t op);
/* inout[i] = in[i] op inout[i] for i < count, on this process's host memory
 * (MPI_Reduce_local): a built-in op but HCOMM_AVG, or a user op. in may
 * equal inout; the two must not overlap otherwise. */
HCOMM_API hcomm_result_t hcomm_reduce_local(const void* in, void* inout, size_t count, hcomm_dtype_t dtype,
                                            hcomm_op_t op);

/* Collectives. sendbuf == recvbuf is in place. Blocking forms return when this
 * rank's part is done; the i-forms return a request to test or wait on.
 * Every rank of the communicator makes the same collective calls in the same
 * order, with the same count, dtype, op, root and recvcounts; where they
 * differ, the call (or, on a rank that receives nothing in it, the next one)
 * fails on every rank with HCOMM_ERR_INVALID_ARGUMENT naming both ranks'
 * arguments, after the ranks waited about 100 ms for each other. */
HCOMM_API hcomm_result_t hcomm_allreduce(const void* sendbuf, void* recvbuf, size_t count, hcomm_dtype_t dtype,
                                         hcomm_op_t op, hcomm_comm_t comm, hcomm_stream_t stream);
HCOMM_API hcomm_result_t hcomm_iallreduce(const void* sendbuf, void* recvbuf, size_t count, hcomm_dtype_t dtype,
                                          hcomm_op_t op, hcomm_comm_t comm, hcomm_request_t* request);
/* sendbuf is read on the root only; every rank receives into recvbuf. */
HCOMM_API hcomm_result_t hcomm_broadcast(const void* sendbuf, void* recvbuf, size_t count, hcomm_dtype_t dtype,
                                         int root, hcomm_comm_t comm, hcomm_stream_t stream);
HCOMM_API hcomm_result_t hcomm_ibroadcast(const void* sendbuf, void* recvbuf, size_t count, hcomm_dtype_t dtype,
                                          int root, hcomm_comm_t comm, hcomm_request_t* request);
HCOMM_API hcomm_result_t hcomm_barrier(hcomm_comm_t comm, hcomm_stream_t stream);
HCOMM_API hcomm_result_t hcomm_ibarrier(hcomm_comm_t comm, hcomm_request_t* request);

/* The rest of the collectives. count is elements per rank; "block r" is rank
 * r's part of a buffer of nranks blocks. The i-forms take a request instead
 * of a stream. In place, where a collective has it, is stated per function
 * as a pointer relation (as NCCL states it); MPI_IN_PLACE maps onto it.
 * Ops are treated as associative, and the built-in ones and commutative user
 * ops as commutative: every rank computes the same result, but the order of
 * operands is the algorithm's (floating-point sums may differ from a serial
 * sum in the last bits). A user op that is not commutative is combined in
 * rank order (hcomm_op_create); scan and exscan always combine in rank order. */

/* The reduction of every rank's sendbuf lands in recvbuf on root only;
 * recvbuf is not touched elsewhere (it may be NULL). In place: sendbuf ==
 * recvbuf on the root. */
HCOMM_API hcomm_result_t hcomm_reduce(const void* sendbuf, void* recvbuf, size_t count, hcomm_dtype_t dtype,
                                      hcomm_op_t op, int root, hcomm_comm_t comm, hcomm_stream_t stream);
HCOMM_API hcomm_result_t hcomm_ireduce(const void* sendbuf, void* recvbuf, size_t count, hcomm_dtype_t dtype,
                                       hcomm_op_t op, int root, hcomm_comm_t comm, hcomm_request_t* request);
/* recvbuf (nranks*count) gets rank r's sendbuf (count) as block r. In place:
 * sendbuf == recvbuf + rank*count elements. */
HCOMM_API hcomm_result_t hcomm_allgather(const void* sendbuf, void* recvbuf, size_t count, hcomm_dtype_t dtype,
                                         hcomm_comm_t comm, hcomm_stream_t stream);
HCOMM_API hcomm_result_t hcomm_iallgather(const void* sendbuf, void* recvbuf, size_t count, hcomm_dtype_t dtype,
                                          hcomm_comm_t comm, hcomm_request_t* request);
/* Rank r contributes recvcounts[r] elements, placed at recvbuf + displs[r]
 * elements on every rank. In place: sendbuf == recvbuf + displs[rank]. */
HCOMM_API hcomm_result_t hcomm_allgatherv(const void* sendbuf, void* recvbuf, const size_t* recvcounts,
                                          const size_t* displs, hcomm_dtype_t dtype, hcomm_comm_t comm,
                                          hcomm_stream_t stream);
HCOMM_API hcomm_result_t hcomm_iallgatherv(const void* sendbuf, void* recvbuf, const size_t* recvcounts,
                                           const size_t* displs, hcomm_dtype_t dtype, hcomm_comm_t comm,
                                           hcomm_request_t* request);
/* sendbuf holds nranks blocks of recvcount; rank r receives the reduction of
 * every rank's block r. In place: recvbuf == sendbuf + rank*recvcount. */
HCOMM_API hcomm_result_t hcomm_reduce_scatter(const void* sendbuf, void* recvbuf, size_t recvcount,
                                              hcomm_dtype_t dtype, hcomm_op_t op, hcomm_comm_t comm,
                                              hcomm_stream_t stream);
HCOMM_API hcomm_result_t hcomm_ireduce_scatter(const void* sendbuf, void* recvbuf, size_t recvcount,
                                               hcomm_dtype_t dtype, hcomm_op_t op, hcomm_comm_t comm,
                                               hcomm_request_t* request);
/* As reduce_scatter with block r of recvcounts[r] elements, the blocks packed
 * in rank order in sendbuf. In place: recvbuf == sendbuf + (the sum of
 * recvcounts[0..rank-1]) elements. */
HCOMM_API hcomm_result_t hcomm_reduce_scatter_v(const void* sendbuf, void* recvbuf, const size_t* recvcounts,
                                                hcomm_dtype_t dtype, hcomm_op_t op, hcomm_comm_t comm,
                                                hcomm_stream_t stream);
HCOMM_API hcomm_result_t hcomm_ireduce_scatter_v(const void* sendbuf, void* recvbuf, const size_t* recvcounts,
                                                 hcomm_dtype_t dtype, hcomm_op_t op, hcomm_comm_t comm,
                                                 hcomm_request_t* request);
/* Block r of sendbuf goes to rank r; block r of recvbuf comes from rank r
 * (count elements each). In place: sendbuf == recvbuf. */
HCOMM_API hcomm_result_t hcomm_alltoall(const void* sendbuf, void* recvbuf, size_t count, hcomm_dtype_t dtype,
                                        hcomm_comm_t comm, hcomm_stream_t stream);
HCOMM_API hcomm_result_t hcomm_ialltoall(const void* sendbuf, void* recvbuf, size_t count, hcomm_dtype_t dtype,
                                         hcomm_comm_t comm, hcomm_request_t* request);
/* sendcounts[r] elements at sendbuf + sdispls[r] go to rank r, recvcounts[r]
 * from rank r land at recvbuf + rdispls[r]; sendcounts[r] here must equal
 * recvcounts[rank] at rank r. In place: sendbuf == recvbuf, and sendcounts and
 * sdispls are ignored (the receive layout is the send layout). */
HCOMM_API hcomm_result_t hcomm_alltoallv(const void* sendbuf, const size_t* sendcounts, const size_t* sdispls,
                                         void* recvbuf, const size_t* recvcounts, const size_t* rdispls,
                                         hcomm_dtype_t dtype, hcomm_comm_t comm, hcomm_stream_t stream);
HCOMM_API hcomm_result_t hcomm_ialltoallv(const void* sendbuf, const size_t* sendcounts, const size_t* sdispls,
                                          void* recvbuf, const size_t* recvcounts, const size_t* rdispls,
                                          hcomm_dtype_t dtype, hcomm_comm_t comm, hcomm_request_t* request);
/* The root's recvbuf (nranks*count) gets rank r's sendbuf as block r; recvbuf
 * is not touched elsewhere. In place: sendbuf == recvbuf + root*count on the root. */
HCOMM_API hcomm_result_t hcomm_gather(const void* sendbuf, void* recvbuf, size_t count, hcomm_dtype_t dtype, int root,
                                      hcomm_comm_t comm, hcomm_stream_t stream);
HCOMM_API hcomm_result_t hcomm_igather(const void* sendbuf, void* recvbuf, size_t count, hcomm_dtype_t dtype,
                                       int root, hcomm_comm_t comm, hcomm_request_t* request);
/* Block r of the root's sendbuf (nranks*count) lands in rank r's recvbuf;
 * sendbuf is read on the root only. In place: recvbuf == sendbuf + root*count on the root. */
HCOMM_API hcomm_result_t hcomm_scatter(const void* sendbuf, void* recvbuf, size_t count, hcomm_dtype_t dtype,
                                       int root, hcomm_comm_t comm, hcomm_stream_t stream);
HCOMM_API hcomm_result_t hcomm_iscatter(const void* sendbuf, void* recvbuf, size_t count, hcomm_dtype_t dtype,
                                        int root, hcomm_comm_t comm, hcomm_request_t* request);
/* Prefix reductions, as MPI_Scan and MPI_Exscan: rank r's recvbuf (count)
 * gets the reduction of the sendbufs of ranks 0..r (scan) or 0..r-1
 * (exscan). Unlike the other reductions these combine in rank order: each
 * combination's left operand is the reduction of a range of ranks just below
 * its right operand's (floating-point sums may still differ from a serial
 * sum in the last bits). op is HCOMM_SUM, HCOMM_PROD, HCOMM_MIN or
 * HCOMM_MAX; HCOMM_AVG, whose divisor would differ from rank to rank, is
 * HCOMM_ERR_INVALID_ARGUMENT. Exscan on rank 0: sendbuf is read, recvbuf is
 * not touched (it may be NULL there), as MPI leaves it undefined. In place:
 * sendbuf == recvbuf. */
HCOMM_API hcomm_result_t hcomm_scan(const void* sendbuf, void* recvbuf, size_t count, hcomm_dtype_t dtype,
                                    hcomm_op_t op, hcomm_comm_t comm, hcomm_stream_t stream);
HCOMM_API hcomm_result_t hcomm_iscan(const void* sendbuf, void* recvbuf, size_t count, hcomm_dtype_t dtype,
                                     hcomm_op_t op, hcomm_comm_t comm, hcomm_request_t* request);
HCOMM_API hcomm_result_t hcomm_exscan(const void* sendbuf, void* recvbuf, size_t count, hcomm_dtype_t dtype,
                                      hcomm_op_t op, hcomm_comm_t comm, hcomm_stream_t stream);
HCOMM_API hcomm_result_t hcomm_iexscan(const void* sendbuf, void* recvbuf, size_t count, hcomm_dtype_t dtype,
                                       hcomm_op_t op, hcomm_comm_t comm, hcomm_request_t* request);

/* Point to point. A send matches a receive on `peer` with the same tag
 * (0..HCOMM_TAG_MAX); messages between two ranks with one tag arrive in the
 * order they were sent. A rank may send to itself. How sends and receives
 * match is the communicator's matching mode (hcomm_config_t.p2p_matching,
 * HCOMM_P2P_MATCHING):
 *  - exact (the default): a receive names its peer and tag, and its count
 *    must equal the send's; the message goes from the send buffer into the
 *    receive buffer as one transport message (as NCCL's send and receive).
 *  - any (MPI's matching): a receive may take HCOMM_ANY_SOURCE and
 *    HCOMM_ANY_TAG, and its count is room: the message may be shorter (its
 *    status says its bytes); a longer one fails its receive with
 *    HCOMM_ERR_TRUNCATED, the communicator staying usable. Messages from one
 *    rank never overtake each other: a receive takes, of each rank, the
 *    first-sent message that matches it, whatever their tags. Each message
 *    sends an envelope (tag, bytes, and up to 4 KiB of data) that the
 *    receiver takes into buffers of its own and matches there; larger data
 *    moves once its envelope matched a receive, which asks for it, straight
 *    into the receive buffer. A receive from a rank that destroyed its
 *    communicator fails alone (HCOMM_ERR_REMOTE). Probes (hcomm_probe,
 *    hcomm_mprobe), synchronous sends (hcomm_ssend) and hcomm_cancel need
 *    this mode.
 * A wildcard, a probe or a synchronous send on a communicator in exact mode
 * is HCOMM_ERR_INVALID_ARGUMENT. */
#define HCOMM_TAG_MAX 0x7FFFFFFF
#define HCOMM_ANY_SOURCE (-1) /* as a receive's or probe's peer: any rank (matching mode any) */
#define HCOMM_ANY_TAG (-1)    /* as a receive's or probe's tag: any tag (matching mode any) */
/* What a receive got; a probe's message. For a send, a collective or a
 * cancelled receive: source HCOMM_ANY_SOURCE, tag HCOMM_ANY_TAG, bytes 0. */
typedef struct hcomm_status {
  int source;    /* the rank that sent it */
  int tag;       /* its tag */
  size_t bytes;  /* the message's bytes (above the receive's room when HCOMM_ERR_TRUNCATED: the room's worth landed) */
  int cancelled; /* 1: hcomm_cancel withdrew the receive before a message matched it */
} hcomm_status_t;
HCOMM_API hcomm_result_t hcomm_send(const void* buf, size_t count, hcomm_dtype_t dtype, int peer, int tag,
                                    hcomm_comm_t comm, hcomm_stream_t stream);
HCOMM_API hcomm_result_t hcomm_isend(const void* buf, size_t count, hcomm_dtype_t dtype, int peer, int tag,
                                     hcomm_comm_t comm, hcomm_request_t* request);
HCOMM_API hcomm_result_t hcomm_recv(void* buf, size_t count, hcomm_dtype_t dtype, int peer, int tag,
                                    hcomm_comm_t comm, hcomm_stream_t stream);
HCOMM_API hcomm_result_t hcomm_irecv(void* buf, size_t count, hcomm_dtype_t dtype, int peer, int tag,
                                     hcomm_comm_t comm, hcomm_request_t* request);
/* hcomm_recv that also tells what came (status may be NULL). */
HCOMM_API hcomm_result_t hcomm_recv_status(void* buf, size_t count, hcomm_dtype_t dtype, int peer, int tag,
                                           hcomm_comm_t comm, hcomm_stream_t stream, hcomm_status_t* status);
/* Synchronous sends (matching mode any): complete once a receive has taken
 * the message, as MPI_Ssend. */
HCOMM_API hcomm_result_t hcomm_ssend(const void* buf, size_t count, hcomm_dtype_t dtype, int peer, int tag,
                                     hcomm_comm_t comm, hcomm_stream_t stream);
HCOMM_API hcomm_result_t hcomm_issend(const void* buf, size_t count, hcomm_dtype_t dtype, int peer, int tag,
                                      hcomm_comm_t comm, hcomm_request_t* request);
/* Probes (matching mode any): whether a message that a receive of (peer,
 * tag) would take has arrived, without taking it; peer and tag may be
 * wildcards. iprobe sets *flag (1: arrived, and *status says what it is);
 * probe waits for one (up to HCOMM_TIMEOUT without progress). status may be
 * NULL. */
HCOMM_API hcomm_result_t hcomm_iprobe(int peer, int tag, hcomm_comm_t comm, int* flag, hcomm_status_t* status);
HCOMM_API hcomm_result_t hcomm_probe(int peer, int tag, hcomm_comm_t comm, hcomm_status_t* status);
/* Matched probes (matching mode any), as MPI_Mprobe: the message found is
 * taken out of matching, so that no other receive or probe sees it, and
 * *message hands it to hcomm_mrecv or hcomm_imrecv, which receive it (and
 * set *message to NULL). Receive every message so taken before the
 * communicator is destroyed. improbe sets *flag, and *message NULL when none
 * arrived. */
typedef struct hcomm_message* hcomm_message_t;
HCOMM_API hcomm_result_t hcomm_improbe(int peer, int tag, hcomm_comm_t comm, int* flag, hcomm_message_t* message,
                                       hcomm_status_t* status);
HCOMM_API hcomm_result_t hcomm_mprobe(int peer, int tag, hcomm_comm_t comm, hcomm_message_t* message,
                                      hcomm_status_t* status);
HCOMM_API hcomm_result_t hcomm_mrecv(void* buf, size_t count, hcomm_dtype_t dtype, hcomm_message_t* message,
                                     hcomm_status_t* status);
HCOMM_API hcomm_result_t hcomm_imrecv(void* buf, size_t count, hcomm_dtype_t dtype, hcomm_message_t* message,
                                      hcomm_request_t* request);

/* Algorithm choice. force names the algorithm for every later call of `coll`
 * on this communicator (NULL goes back to HCOMM_TUNE and the cost model);
 * an algorithm that does not serve a call falls back to the selector's choice
 * with a log line. query tells which algorithm a call of `count` elements of
 * `dtype` would use, without running it. */
HCOMM_API hcomm_result_t hcomm_comm_force_algorithm(hcomm_comm_t comm, hcomm_coll_t coll, const char* algorithm);
HCOMM_API hcomm_result_t hcomm_comm_query_algorithm(hcomm_comm_t comm, hcomm_coll_t coll, size_t count,
                                                    hcomm_dtype_t dtype, const char** algorithm);

/* Memory that the ranks of one host can map, for zero-copy collectives (like
 * MPI_Alloc_mem and ncclMemAlloc). hcomm_mem_alloc's memory is HComm's: give
 * it back with hcomm_mem_free. Calls on any other buffer (malloc, the stack)
 * work too, without touching its pages: peers copy it (cross-memory attach)
 * or it is staged through shared memory.
 *
 * hcomm_mem_register makes the caller's buffer [ptr, ptr + bytes) mappable
 * by the communicator's peers until hcomm_mem_deregister(handle), by moving
 * its whole pages (those entirely inside the range; the partial pages at its
 * ends stay as they are) from private memory onto a shared memory file, in
 * place: the same contents at the same addresses. Until it is deregistered,
 * the caller gives up for those pages:
 *  - what madvise(MADV_DONTNEED) does to private memory: a shared page keeps
 *    its data, so purged pages no longer read as zero (MADV_FREE fails on
 *    them). Memory allocators purge freed memory that way and then hand it
 *    out as zeroed (jemalloc's calloc does): call hcomm_mem_deregister before
 *    the buffer is freed, unmapped or handed back to an allocator, never
 *    after.
 *  - private pages: they count as shared memory (Shmem, not AnonPages);
 *    a child forked meanwhile gets private copies of them, made at the fork
 *    (writes the parent makes during that copy may show in the child's).
 *  - moving them: memory that is locked, kept from children (MADV_DONTFORK),
 *    file-backed or shared already is not moved and registers as not
 *    mappable. Do not register memory a device or driver has pinned without
 *    such a mark (cudaHostRegister): it would go on using the old pages.
 * hcomm_mem_deregister moves the data back into private memory at the same
 * addresses. With HCOMM_AUTO_REGISTER set (off by default) the core itself
 * registers buffers of at least that many bytes that a call uses again, with
 * the same consequences and no handle to deregister them: set it only where
 * nothing in the process takes memory purged with madvise to be zero
 * (glibc's malloc does not; jemalloc does). */
HCOMM_API hcomm_result_t hcomm_mem_alloc(void** ptr, size_t bytes);
/* Device memory of the calling thread's current device (CUDA's current
 * device), starting at a 2 MiB boundary, that the ranks of one host can map
 * (CUDA IPC), as ncclMemAlloc's is; give it back with hcomm_mem_free.
 * HCOMM_ERR_UNSUPPORTED where no device plugin sees a device. */
HCOMM_API hcomm_result_t hcomm_mem_alloc_device(void** ptr, size_t bytes);
HCOMM_API hcomm_result_t hcomm_mem_free(void* ptr);
HCOMM_API hcomm_result_t hcomm_mem_register(hcomm_comm_t comm, void* ptr, size_t bytes, void** handle);
HCOMM_API hcomm_result_t hcomm_mem_deregister(hcomm_comm_t comm, void* handle);

/* Requests: test sets *done to 1 once complete; wait blocks until then (or
 * until a peer fails or HCOMM_TIMEOUT passes). The request is freed when test
 * reports it done, when wait returns, and when either returns an error. */
HCOMM_API hcomm_result_t hcomm_test(hcomm_request_t request, int* done);
HCOMM_API hcomm_result_t hcomm_wait(hcomm_request_t request);
/* test and wait that also fill *status (it may be NULL) once the request is
 * done: what a receive got (hcomm_status_t), also when it fails with
 * HCOMM_ERR_TRUNCATED. */
HCOMM_API hcomm_result_t hcomm_test_status(hcomm_request_t request, int* done, hcomm_status_t* status);
HCOMM_API hcomm_result_t hcomm_wait_status(hcomm_request_t request, hcomm_status_t* status);
/* Withdraws a receive of a communicator in matching mode any that no message
 * has matched yet: its request is then done, with status.cancelled 1 (test
 * or wait it as any other). A receive that matched, and a send, complete as
 * they would (cancelled 0), as MPI_Cancel allows. A receive in exact mode is
 * posted in the transport and cannot be withdrawn (HCOMM_ERR_UNSUPPORTED); a
 * collective's request is HCOMM_ERR_INVALID_ARGUMENT. The request stays the
 * caller's in every case. */
HCOMM_API hcomm_result_t hcomm_cancel(hcomm_request_t request);

/* Introspection: the plugins found and every setting (what hcomm-info prints).
 * The strings stay valid for the life of the process. */
typedef struct hcomm_plugin_desc {
  const char* file;     /* its path */
  const char* kind;     /* transport, algorithm, device */
  const char* name;
  const char* vendor;   /* NULL when not loaded */
  const char* version;  /* NULL when not loaded */
  int abi_major, abi_minor;
  const char* provides; /* algorithm plugins: their algorithms, comma separated */
  hcomm_result_t status;
  const char* error;    /* why it did not load; "" when loaded */
} hcomm_plugin_desc_t;

typedef struct hcomm_setting_desc {
  const char* name;
  const char* type;  /* int, size, bool, double, string */
  const char* default_value;
  const char* value; /* from the environment, NULL when unset */
  const char* doc;
  const char* owner; /* core or the plugin's name */
} hcomm_setting_desc_t;

HCOMM_API int hcomm_plugin_count(void);
HCOMM_API hcomm_result_t hcomm_plugin_get(int index, hcomm_plugin_desc_t* desc);
HCOMM_API int hcomm_setting_count(void);
HCOMM_API hcomm_result_t hcomm_setting_get(int index, hcomm_setting_desc_t* desc);
/* What setting `index` accepts, in words ("a byte count from 1K to 1G, with
 * an optional K, M or G suffix", "one of auto, on, off"); NULL for an index
 * out of range. Every value is checked against it at communicator creation. */
HCOMM_API const char* hcomm_setting_accepted(int index);
/* Checks setting `index` as communicator creation does: HCOMM_SUCCESS when
 * it is unset in the environment or its value is accepted; otherwise
 * HCOMM_ERR_CONFIG, with hcomm_get_last_error() naming the variable, its
 * value and what it accepts (HCOMM_ERR_INVALID_ARGUMENT for an index out of
 * range). */
HCOMM_API hcomm_result_t hcomm_setting_check(int index);
/* Whether `name` is a setting HComm knows (declared by the core or a plugin,
 * or under the HCOMM_<PLUGIN>_ prefix of a plugin found but not loaded):
 * 1 if so; 0 if communicators ignore it (with a warning), and then
 * *nearest, when nearest is not NULL, is the declared name nearest to it (a
 * likely misspelling) or NULL; -1 if name is NULL. */
HCOMM_API int hcomm_setting_known(const char* name, const char** nearest);

#ifdef __cplusplus
}
#endif

#endif /* HCOMM_H */
