/* HComm transport plugin interface, ABI 1.0.
 *
 * Objects: a context per process (init), a net per communicator (open), an
 * endpoint per peer (connect), requests per message (isend/irecv).
 *
 * Threading: the core calls one net from one thread at a time; different nets
 * may be used from different threads.
 *
 * Connection: both ranks of a pair call connect with each other's address
 * (blobs from `address`, exchanged by the core's bootstrap). The plugin decides
 * which side initiates; connect never blocks, ep_ready is polled. Every
 * connection presents the communicator's key (open args) and is dropped
 * unless the key matches: a stray client cannot join or inject data.
 *
 * Messages: isend/irecv carry a 64-bit tag. Messages of one endpoint with the
 * same tag match in order; different tags may complete in any order. A
 * receive shorter than the matching message is an error. A call that returns
 * HCOMM_SUCCESS with *request == NULL means "no resources now, retry later".
 *
 * Errors: a failing call records its text with services->set_error and
 * returns a code; a peer that closed or died is HCOMM_ERR_REMOTE, reported by
 * test, ep_ready or progress on every request that involves it, promptly
 * (within a second of the death).
 */
#ifndef HCOMM_PLUGIN_TRANSPORT_H
#define HCOMM_PLUGIN_TRANSPORT_H

#include "hcomm/plugin/plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HCOMM_TRANSPORT_MAX_ADDRESS 256

typedef enum hcomm_transport_caps {
  HCOMM_CAP_TAGGED = 1u << 0, /* two-sided tagged send/recv */
  HCOMM_CAP_ORDERED = 1u << 1 /* messages of one endpoint complete in posting order */
} hcomm_transport_caps_t;

typedef struct hcomm_transport_props {
  size_t size;
  uint32_t mem_kinds;     /* hcomm_mem_kind_t bits it can move */
  uint32_t caps;          /* hcomm_transport_caps_t bits */
  double bandwidth_gbps;  /* typical per-link bandwidth, GB/s */
  double latency_us;      /* typical one-way small-message latency */
  double overhead_us;     /* CPU time per message */
  int priority;           /* breaks ties between equal scores, higher wins */
  uint64_t max_message;   /* largest single message, bytes */
} hcomm_transport_props_t;

typedef struct hcomm_transport_open_args {
  size_t size;
  int rank;   /* this process in the communicator */
  int nranks;
  uint8_t comm_key[16]; /* random per communicator, shared by its ranks only */
} hcomm_transport_open_args_t;

typedef struct hcomm_link_score {
  int reachable;
  double bandwidth_gbps;
  double latency_us;
} hcomm_link_score_t;

typedef struct hcomm_transport_v1 {
  size_t size; /* sizeof(hcomm_transport_v1_t) as the plugin was built */

  hcomm_result_t (*init)(const hcomm_plugin_services_t* services, void** ctx);
  hcomm_result_t (*finalize)(void* ctx);
  hcomm_result_t (*properties)(void* ctx, hcomm_transport_props_t* props);

  /* Per communicator. close frees every endpoint and request of the net. */
  hcomm_result_t (*open)(void* ctx, const hcomm_transport_open_args_t* args, void** net);
  hcomm_result_t (*close)(void* net);

  /* This rank's address blob; *len is the buffer's capacity in, the length out. */
  hcomm_result_t (*address)(void* net, void* buf, size_t* len);
  /* Both sides of a pair compute the same answer from the same two blobs. */
  hcomm_result_t (*score)(void* net, const void* local_addr, size_t local_len, const void* peer_addr,
                          size_t peer_len, hcomm_link_score_t* score);

  hcomm_result_t (*connect)(void* net, int peer_rank, const void* peer_addr, size_t peer_len, void** ep);
  hcomm_result_t (*ep_ready)(void* ep, int* ready);
  hcomm_result_t (*ep_close)(void* ep);

  hcomm_result_t (*isend)(void* ep, const void* buf, size_t len, uint64_t tag, void** request);
  hcomm_result_t (*irecv)(void* ep, void* buf, size_t len, uint64_t tag, void** request);
  /* *done = 1 once complete (then *bytes is the length moved and the request
   * is freed); an error also frees the request. */
  hcomm_result_t (*test)(void* request, int* done, size_t* bytes);
  /* Moves data for every request of the net. */
  hcomm_result_t (*progress)(void* net);

  /* Optional (NULL): blocks up to timeout_us until progress may be possible,
   * so that waiting ranks do not burn a core. */
  hcomm_result_t (*wait)(void* net, int64_t timeout_us);
} hcomm_transport_v1_t;

#ifdef __cplusplus
}
#endif

#endif /* HCOMM_PLUGIN_TRANSPORT_H */
