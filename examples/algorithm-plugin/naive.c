/* An algorithm plugin: a naive allgather. Every rank sends its block to every
 * other rank and receives each peer's block straight into its place; the
 * executor posts all of them at once. docs/writing-an-algorithm.md walks
 * through it. */
#include <hcomm/plugin/algorithm.h>
#include <limits.h>
#include <stddef.h>

static const hcomm_plugin_services_t* services; /* logging and error texts */

static hcomm_result_t naive_init(const hcomm_plugin_services_t* core_services) {
  services = core_services;
  return HCOMM_SUCCESS;
}

/* The time of one call in microseconds, from the communicator's slowest link:
 * n - 1 sends and n - 1 receives posted one after the other (2 alpha each
 * pair), and n - 1 blocks through this rank's link (beta per byte). */
static double naive_cost(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm) {
  const double others = comm->nranks - 1;
  const double block = (double)args->count * (double)args->dtype_size;
  return others * (2 * comm->link.alpha_us + block * comm->link.beta_us_per_byte);
}

/* Records why a call is refused; the core shows the text with the error. */
static hcomm_result_t refuse(const char* why) {
  services->set_error(why);
  return HCOMM_ERR_INVALID_ARGUMENT;
}

/* Appends one step; on failure the builder has recorded why. */
static int add(hcomm_schedule_builder_t* builder, hcomm_step_t step) { return builder->add(builder, &step) >= 0; }

static hcomm_result_t naive_build(const hcomm_coll_args_t* args, const hcomm_comm_view_t* comm,
                                  hcomm_schedule_builder_t* builder) {
  /* The core passes sound arguments; a plugin still checks what it relies
   * on, and reads only the fields inside the sizes it was handed. */
  if (!args || !comm || !builder) return refuse("naive: args, comm and builder must not be NULL");
  if (args->size < offsetof(hcomm_coll_args_t, send_counts))
    return refuse("naive: args is smaller than the fields of ABI 1.0");
  if (comm->size < offsetof(hcomm_comm_view_t, flags))
    return refuse("naive: comm is smaller than the fields of ABI 1.0");
  if (args->coll != HCOMM_COLL_ALLGATHER) return refuse("naive: args->coll is not allgather, the one it serves");
  if (comm->nranks < 1) return refuse("naive: comm->nranks is below 1");
  if (comm->rank < 0 || comm->rank >= comm->nranks) return refuse("naive: comm->rank is not a rank of comm");
  if (args->count > 0 && args->dtype_size == 0) return refuse("naive: args->dtype_size is 0");
  if (args->count > 0 && args->count > UINT64_MAX / args->dtype_size / (uint64_t)comm->nranks)
    return refuse("naive: the receive buffer's size (args->count * dtype_size * nranks) overflows 64 bits");

  const uint64_t bytes = (uint64_t)args->count * args->dtype_size; /* one block */
  if (bytes == 0) return HCOMM_SUCCESS;                            /* nothing to move: no steps */
  /* Both ranks of a pair ask for the same bytes, so their sends and
   * receives get the same number of chunks, as they must. */
  const uint32_t nchunks = builder->chunks_for(builder, bytes, args->dtype_size);
  const uint64_t own = (uint64_t)comm->rank * bytes;
  /* In place, SEND already is this rank's block of RECV. */
  if (!args->in_place && !add(builder, (hcomm_step_t){.kind = HCOMM_STEP_COPY,
                                                      .src = {HCOMM_BUF_SEND, 0},
                                                      .dst = {HCOMM_BUF_RECV, own},
                                                      .bytes = bytes,
                                                      .nchunks = 1}))
    return HCOMM_ERR_INTERNAL;
  for (int peer = 0; peer < comm->nranks; ++peer) {
    if (peer == comm->rank) continue;
    /* One message each way per pair: match id 0 pairs this send with the
     * peer's receive from this rank. No step writes what another reads, so
     * none depends on another. */
    if (!add(builder, (hcomm_step_t){.kind = HCOMM_STEP_SEND,
                                     .peer = peer,
                                     .match = 0,
                                     .src = {HCOMM_BUF_SEND, 0},
                                     .bytes = bytes,
                                     .nchunks = nchunks}) ||
        !add(builder, (hcomm_step_t){.kind = HCOMM_STEP_RECV,
                                     .peer = peer,
                                     .match = 0,
                                     .dst = {HCOMM_BUF_RECV, (uint64_t)peer * bytes},
                                     .bytes = bytes,
                                     .nchunks = nchunks}))
      return HCOMM_ERR_INTERNAL;
  }
  return HCOMM_SUCCESS;
}

static const hcomm_algorithm_desc_t algorithms[] = {{
    .size = sizeof(hcomm_algorithm_desc_t),
    .name = "naive",
    .colls = 1u << HCOMM_COLL_ALLGATHER,
    .mem_kinds = HCOMM_MEM_HOST,
    .min_bytes = 0,
    .max_bytes = UINT64_MAX,
    .min_ranks = 1,
    .max_ranks = INT_MAX,
    .cost = naive_cost,
    .build = naive_build,
}};

static const hcomm_algorithm_v1_t iface = {
    .size = sizeof(hcomm_algorithm_v1_t),
    .init = naive_init,
    .num_algorithms = sizeof algorithms / sizeof algorithms[0],
    .algorithms = algorithms,
};

static const hcomm_plugin_header_t header = {
    .size = sizeof(hcomm_plugin_header_t),
    .abi_major = HCOMM_PLUGIN_ABI_MAJOR,
    .abi_minor = HCOMM_PLUGIN_ABI_MINOR,
    .kind = HCOMM_PLUGIN_ALGORITHM,
    .name = "naive", /* the file is libhcomm_algorithm_naive.so */
    .vendor = "HComm example",
    .version = "1.0.0",
    .iface = &iface,
    .setting_size = sizeof(hcomm_setting_decl_t),
};

/* The one symbol the library exports (exports.map). */
__attribute__((visibility("default"))) const hcomm_plugin_header_t* hcomm_plugin_v1(void) { return &header; }
