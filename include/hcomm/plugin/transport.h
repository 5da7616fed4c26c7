/* HComm transport plugin interface, ABI 1.8 (1.1 added the optional
 * mapped-memory functions at the end of hcomm_transport_v1_t, 1.8 mem_held).
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
 *
 * Mapped memory (ABI 1.1, optional): processes of one host can share memory.
 * A transport that can offers mem_alloc, mem_register, mem_release, mem_map
 * and mem_unmap (all five or none) and may offer ep_read / ep_write. The core
 * then gives every rank of a communicator a window the others map, and lets
 * them read each other's buffers in place (algorithm.h, mapped-memory steps).
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
  HCOMM_CAP_ORDERED = 1u << 1, /* messages of one endpoint complete in posting order */
  /* Its nets and endpoints may be called from different threads, one call
   * at a time (the core then lets communicators split from one another,
   * which may run on different threads, share them). */
  HCOMM_CAP_ANY_THREAD = 1u << 2
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

/* Memory of one process that the other processes of its host can map: the
 * range [address, address + bytes) of the owner's address space, and what a
 * peer hands to mem_map to reach it. bytes is 0 when nothing is mappable. */
#define HCOMM_MEM_BLOB_BYTES 64
typedef struct hcomm_mem_desc {
  uint64_t address;
  uint64_t bytes;
  uint32_t blob_len;
  uint8_t blob[HCOMM_MEM_BLOB_BYTES];
} hcomm_mem_desc_t;

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

  /* ABI 1.1, optional (NULL), per process; calls may come from any thread.
   *
   * mem_alloc: `bytes` (above 0) of zeroed, page-aligned host memory that
   * other processes of this host can map; *desc covers all of it.
   * mem_register: makes the caller's [ptr, ptr + bytes) mappable in place,
   * keeping its addresses and contents; *desc may cover only part of it
   * (whole pages, say) or nothing (bytes 0), and mem_release undoes it.
   * *mem is the handle of either. The caller must not touch the range from
   * another thread while mem_register or mem_release runs.
   * mem_release: frees (mem_alloc) or unregisters (mem_register) `mem`;
   * peers' mappings of it stay valid until they unmap them.
   * mem_map: maps a peer's desc into this process; *ptr is where
   * desc->address lies here, *mapping the handle for mem_unmap. A peer that
   * died is HCOMM_ERR_REMOTE. */
  hcomm_result_t (*mem_alloc)(void* ctx, size_t bytes, void** ptr, void** mem, hcomm_mem_desc_t* desc);
  hcomm_result_t (*mem_register)(void* ctx, void* ptr, size_t bytes, void** mem, hcomm_mem_desc_t* desc);
  hcomm_result_t (*mem_release)(void* mem);
  hcomm_result_t (*mem_map)(void* ctx, const hcomm_mem_desc_t* desc, void** ptr, void** mapping);
  hcomm_result_t (*mem_unmap)(void* mapping);

  /* ABI 1.1, optional (NULL): one blocking copy from (read) or into (write)
   * the peer's memory at `remote_address` of its address space, which need
   * not be mapped (cross-memory attach). HCOMM_ERR_UNSUPPORTED when the
   * system or a setting forbids it towards this peer, HCOMM_ERR_REMOTE when
   * the peer died or the range is not in its memory. */
  hcomm_result_t (*ep_read)(void* ep, void* local, uint64_t remote_address, size_t bytes);
  hcomm_result_t (*ep_write)(void* ep, const void* local, uint64_t remote_address, size_t bytes);

  /* ABI 1.8, optional (NULL): *held = 1 while the registration `mem` still
   * holds the range mem_register made mappable, 0 once the caller unmapped or
   * replaced any of its pages (it freed the buffer without unregistering it);
   * HCOMM_ERR_UNSUPPORTED where the system cannot tell. With it the core may
   * register buffers on its own where the caller set HCOMM_AUTO_REGISTER (off
   * by default), so a registration must
   * then keep the process's view of the memory: the same contents at the
   * same addresses, and private pages in a child forked later. */
  hcomm_result_t (*mem_held)(void* mem, int* held);
} hcomm_transport_v1_t;

#ifdef __cplusplus
}
#endif

#endif /* HCOMM_PLUGIN_TRANSPORT_H */
