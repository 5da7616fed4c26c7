/* HComm public C API.
 *
 * Every function returns an hcomm_result_t; on failure hcomm_get_last_error()
 * gives this thread's text for the last error (what was wrong, which argument,
 * what to do). A communicator may be used by one thread at a time.
 *
 * Collectives take a stream argument: NULL means host-ordered execution (the
 * call, or the request, completes the operation). A non-NULL stream is a
 * cudaStream_t and needs the CUDA device plugin.
 */
#ifndef HCOMM_H
#define HCOMM_H

#include "hcomm/types.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HCOMM_VERSION_MAJOR 0
#define HCOMM_VERSION_MINOR 1
#define HCOMM_VERSION_PATCH 0

typedef struct hcomm_comm* hcomm_comm_t;
typedef struct hcomm_request* hcomm_request_t;
typedef void* hcomm_stream_t;

#define HCOMM_UNIQUE_ID_BYTES 128
/* Made by hcomm_get_unique_id on one process and handed by the application to
 * every rank; it carries the rendezvous address and the job's secret. */
typedef struct hcomm_unique_id {
  char internal[HCOMM_UNIQUE_ID_BYTES];
} hcomm_unique_id_t;

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
HCOMM_API hcomm_result_t hcomm_comm_destroy(hcomm_comm_t comm);
HCOMM_API hcomm_result_t hcomm_comm_rank(hcomm_comm_t comm, int* rank);
HCOMM_API hcomm_result_t hcomm_comm_size(hcomm_comm_t comm, int* size);

/* Collectives. sendbuf == recvbuf is in place. Blocking forms return when this
 * rank's part is done; the i-forms return a request to test or wait on. */
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

/* Requests: test sets *done to 1 once complete; wait blocks until then (or
 * until a peer fails or HCOMM_TIMEOUT passes). The request is freed when test
 * reports it done, when wait returns, and when either returns an error. */
HCOMM_API hcomm_result_t hcomm_test(hcomm_request_t request, int* done);
HCOMM_API hcomm_result_t hcomm_wait(hcomm_request_t request);

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

#ifdef __cplusplus
}
#endif

#endif /* HCOMM_H */
