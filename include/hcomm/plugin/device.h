/* HComm device plugin interface (ABI 1.15; the header's kind is
 * HCOMM_PLUGIN_DEVICE, the file libhcomm_device_<name>.so).
 *
 * A device plugin serves one kind of accelerator memory (mem_kind): it tells
 * that memory from the host's, allocates it and pinned host memory, and
 * copies and reduces on its device. Work takes a stream of the device's
 * runtime (cudaStream_t for CUDA) and is queued on it; with a NULL stream it
 * comes after the work the process queued on the device's ordinary streams
 * (CUDA: the legacy default stream) and the call returns once it is done. The core
 * never links the device's runtime: everything it does with such memory
 * goes through these functions.
 */
#ifndef HCOMM_PLUGIN_DEVICE_H
#define HCOMM_PLUGIN_DEVICE_H

#include "hcomm/plugin/plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a pointer points at. */
typedef struct hcomm_pointer_attr {
  size_t size;
  uint32_t mem_kind; /* hcomm_mem_kind_t: HCOMM_MEM_HOST for memory the device does not own */
  int device;        /* the device that owns it; -1 for host memory */
  int managed;       /* 1: migrates between host and device (never allocated by HComm) */
  int pinned_host;   /* 1: host memory registered with the device */
} hcomm_pointer_attr_t;

typedef enum hcomm_device_alloc_kind {
  HCOMM_DEVICE_ALLOC_DEVICE = 0,      /* memory of the current device */
  HCOMM_DEVICE_ALLOC_PINNED_HOST = 1, /* host memory the device reaches directly (bounce buffers) */
  /* Memory of the current device that other processes of the host can map
   * (CUDA: IPC), starting at a 2 MiB boundary: hcomm_mem_alloc_device's. A
   * plugin that does not know the kind refuses it (HCOMM_ERR_INVALID_ARGUMENT). */
  HCOMM_DEVICE_ALLOC_SHAREABLE = 2
} hcomm_device_alloc_kind_t;

typedef struct hcomm_device_v1 {
  size_t size;
  hcomm_result_t (*init)(const hcomm_plugin_services_t* services);
  uint32_t mem_kind; /* the hcomm_mem_kind_t this plugin serves */
  /* Devices this process can use; 0 where there are none (no driver, no
   * device): the plugin then serves nothing and says why in the error text. */
  int (*device_count)(void);
  /* Fills *attr for ptr (attr->size set by the caller). */
  hcomm_result_t (*pointer_attr)(const void* ptr, hcomm_pointer_attr_t* attr);
  hcomm_result_t (*alloc)(size_t bytes, hcomm_device_alloc_kind_t kind, void** ptr);
  hcomm_result_t (*free)(void* ptr, hcomm_device_alloc_kind_t kind);
  /* dst = src, either of them on the device or on the host. */
  hcomm_result_t (*copy)(void* dst, const void* src, size_t bytes, void* stream);
  /* dst[i] = a[i] op b[i] for i < count on the device that owns dst, as the
   * core's CPU kernels compute it: integers wrap; float16 and bfloat16 are
   * computed in float and rounded to nearest even once; float MIN and MAX
   * return NaN where either operand is NaN and order -0 below +0; AVG sums,
   * and where avg_divisor > 1 divides the result by it in the same pass
   * (integers truncate). dst may be a or b, but must not otherwise overlap
   * them. */
  hcomm_result_t (*reduce)(hcomm_dtype_t dtype, hcomm_op_t op, void* dst, const void* a, const void* b, size_t count,
                           int avg_divisor, void* stream);
  /* Returns once all work queued on stream (NULL: the default one) is done. */
  hcomm_result_t (*synchronize)(void* stream);

  /* ABI 1.15: what stream-ordered calls queue (a plugin without these, by
   * its size, serves blocking calls only). None of them waits for the device.
   * The streams HComm queues its own work on, for the current device: each
   * communicator asks for stream_count() of them (the plugin's setting, at
   * least 1), created with the plugin's priority setting. */
  int (*stream_count)(void);
  hcomm_result_t (*stream_create)(void** stream);
  hcomm_result_t (*stream_destroy)(void* stream);
  /* A marker in a stream's work, for other streams to wait for. */
  hcomm_result_t (*event_create)(void** event);
  hcomm_result_t (*event_destroy)(void* event);
  /* Marks the work queued on stream so far; a later record moves the mark. */
  hcomm_result_t (*event_record)(void* event, void* stream);
  /* Work queued on stream after this waits for event's mark as it is now. */
  hcomm_result_t (*stream_wait_event)(void* stream, void* event);
  /* Queues fn(arg): it runs on a thread of the device runtime once the work
   * queued before it is done, and must not call the runtime. */
  hcomm_result_t (*host_call)(void* stream, void (*fn)(void*), void* arg);
  /* Queues a wait on the device until *flag, in pinned host memory
   * (HCOMM_DEVICE_ALLOC_PINNED_HOST), is non-zero; the wait then sets it back
   * to 0, and the work queued after it runs. The host sets it with a release
   * store once the data that work reads is in place. */
  hcomm_result_t (*wait_flag)(void* stream, uint32_t* flag);
  /* *capturing: 1 while stream's work is being captured into a graph (each
   * replay of which runs the host calls and waits again), else 0. */
  hcomm_result_t (*capturing)(void* stream, int* capturing);
} hcomm_device_v1_t;

#ifdef __cplusplus
}
#endif

#endif /* HCOMM_PLUGIN_DEVICE_H */
