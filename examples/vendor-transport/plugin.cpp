// The C boundary of the example transport: the plugin header HComm looks up
// (hcomm_plugin_v1), its one setting, and hcomm_transport_v1_t, each function
// turning C++ exceptions into a status code and an error text.
#include <cstddef>
#include <cstring>
#include <iterator>
#include <limits>
#include <utility>

#include "example_net.hpp"
#include "hcomm/plugin/transport.h"
#include "hcomm/plugin/util.hpp"

#ifndef EXAMPLE_VERSION
#error "EXAMPLE_VERSION must be defined by the build"
#endif

namespace example {
namespace {

using hcomm::plugin::Error;

// Declared here, listed by hcomm-info, validated by HComm before init.
const hcomm_setting_decl_t kSettings[] = {
    {.name = "HCOMM_EXAMPLE_MAX_SENDS",
     .type = HCOMM_SETTING_INT,
     .default_value = "64",
     .doc = "sends one endpoint holds at once; more get a null request (retry later)",
     .min = "1",
     .max = "1000000"},
};

Services g_services;  // from init; the callbacks carry no context, so one per loaded plugin

struct Context {
  int max_sends;
};

template <class T>
T* need(T* pointer, const char* call, const char* argument) {
  if (!pointer) HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT, "example: %s: %s is NULL", call, argument);
  return pointer;
}

template <class F>
hcomm_result_t boundary(F&& body) noexcept {
  return hcomm::plugin::boundary(g_services, std::forward<F>(body));
}

hcomm_result_t example_init(const hcomm_plugin_services_t* services, void** ctx) {
  if (services) g_services.set(services);
  return boundary([&] {
    need(services, "init", "services");
    // HComm checked the value against the declared range before init.
    const long long max_sends = g_services.setting_int("HCOMM_EXAMPLE_MAX_SENDS");
    *need(ctx, "init", "ctx") = new Context{.max_sends = static_cast<int>(max_sends)};
  });
}

hcomm_result_t example_finalize(void* ctx) {
  return boundary([&] { delete static_cast<Context*>(ctx); });
}

hcomm_result_t example_properties(void* ctx, hcomm_transport_props_t* props) {
  return boundary([&] {
    need(ctx, "properties", "ctx");
    *need(props, "properties", "props") = hcomm_transport_props_t{
        .size = sizeof(hcomm_transport_props_t),
        .mem_kinds = HCOMM_MEM_HOST,
        .caps = HCOMM_CAP_TAGGED,  // not ORDERED: receives of different tags may finish out of posting order
        .bandwidth_gbps = 4.0,
        .latency_us = 5.0,
        .overhead_us = 1.0,
        .priority = -1,  // loses ties to the built-in transports
        .max_message = std::numeric_limits<uint64_t>::max(),
    };
  });
}

hcomm_result_t example_open(void* ctx, const hcomm_transport_open_args_t* args, void** net) {
  return boundary([&] {
    const Context& context = *need(static_cast<Context*>(ctx), "open", "ctx");
    need(args, "open", "args");
    need(net, "open", "net");
    if (args->size < sizeof(hcomm_transport_open_args_t))
      HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT, "example: open: args->size is %zu; set it to %zu", args->size,
                         sizeof(hcomm_transport_open_args_t));
    if (args->nranks < 1 || args->rank < 0 || args->rank >= args->nranks)
      HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT, "example: open: rank %d of %d ranks", args->rank, args->nranks);
    *net = new Net(g_services, context.max_sends, *args);
  });
}

hcomm_result_t example_close(void* net) {
  return boundary([&] { delete static_cast<Net*>(net); });
}

hcomm_result_t example_address(void* net, void* buf, size_t* len) {
  return boundary([&] {
    const Address& address = need(static_cast<Net*>(net), "address", "net")->address();
    need(buf, "address", "buf");
    if (*need(len, "address", "len") < sizeof address)
      HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT, "example: address: *len is %zu, the address needs %zu bytes", *len,
                         sizeof address);
    std::memcpy(buf, &address, sizeof address);
    *len = sizeof address;
  });
}

hcomm_result_t example_score(void* net, const void* local_addr, size_t local_len, const void* peer_addr,
                             size_t peer_len, hcomm_link_score_t* score) {
  return boundary([&] {
    need(net, "score", "net");
    *need(score, "score", "score") = score_link(decode_address(local_addr, local_len, "score: local_addr"),
                                                decode_address(peer_addr, peer_len, "score: peer_addr"));
  });
}

// Never blocks: the core polls ep_ready (and progress) until the endpoint is ready.
hcomm_result_t example_connect(void* net, int peer_rank, const void* peer_addr, size_t peer_len, void** ep) {
  return boundary([&] {
    Net& self = *need(static_cast<Net*>(net), "connect", "net");
    *need(ep, "connect", "ep") = &self.connect(peer_rank, decode_address(peer_addr, peer_len, "connect: peer_addr"));
  });
}

hcomm_result_t example_ep_ready(void* ep, int* ready) {
  return boundary([&] {
    Endpoint& endpoint = *need(static_cast<Endpoint*>(ep), "ep_ready", "ep");
    *need(ready, "ep_ready", "ready") = endpoint.ready() ? 1 : 0;
  });
}

hcomm_result_t example_ep_close(void* ep) {
  return boundary([&] {
    Endpoint& endpoint = *need(static_cast<Endpoint*>(ep), "ep_close", "ep");
    endpoint.net().close_endpoint(endpoint);
  });
}

hcomm_result_t example_isend(void* ep, const void* buf, size_t len, uint64_t tag, void** request) {
  return boundary([&] {
    Endpoint& endpoint = *need(static_cast<Endpoint*>(ep), "isend", "ep");
    if (!buf && len > 0) HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT, "example: isend: buf is NULL, len %zu", len);
    *need(request, "isend", "request") = endpoint.isend(buf, len, tag);  // NULL: retry later
  });
}

hcomm_result_t example_irecv(void* ep, void* buf, size_t len, uint64_t tag, void** request) {
  return boundary([&] {
    Endpoint& endpoint = *need(static_cast<Endpoint*>(ep), "irecv", "ep");
    if (!buf && len > 0) HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT, "example: irecv: buf is NULL, len %zu", len);
    *need(request, "irecv", "request") = endpoint.irecv(buf, len, tag);  // NULL: retry later
  });
}

hcomm_result_t example_test(void* request, int* done, size_t* bytes) {
  return boundary([&] {
    Request& r = *need(static_cast<Request*>(request), "test", "request");
    need(done, "test", "done");
    size_t moved = 0;
    *done = 1;  // stays so when test throws: a failed request is finished (and freed) too
    *done = r.owner->test(&r, &moved) ? 1 : 0;
    if (*done && bytes) *bytes = moved;
  });
}

hcomm_result_t example_progress(void* net) {
  return boundary([&] { need(static_cast<Net*>(net), "progress", "net")->progress(); });
}

hcomm_result_t example_wait(void* net, int64_t timeout_us) {
  return boundary([&] {
    Net& self = *need(static_cast<Net*>(net), "wait", "net");
    if (timeout_us < 0)
      HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT, "example: wait: timeout_us is %lld; give 0 or more",
                         static_cast<long long>(timeout_us));
    self.wait(timeout_us);
  });
}

// ABI 1.0's functions; the optional mapped-memory ones (ABI 1.1) stay NULL.
const hcomm_transport_v1_t kTransport = {
    .size = sizeof(hcomm_transport_v1_t),
    .init = example_init,
    .finalize = example_finalize,
    .properties = example_properties,
    .open = example_open,
    .close = example_close,
    .address = example_address,
    .score = example_score,
    .connect = example_connect,
    .ep_ready = example_ep_ready,
    .ep_close = example_ep_close,
    .isend = example_isend,
    .irecv = example_irecv,
    .test = example_test,
    .progress = example_progress,
    .wait = example_wait,
};

const hcomm_plugin_header_t kHeader = {
    .size = sizeof(hcomm_plugin_header_t),
    .abi_major = HCOMM_PLUGIN_ABI_MAJOR,
    .abi_minor = HCOMM_PLUGIN_ABI_MINOR,
    .kind = HCOMM_PLUGIN_TRANSPORT,
    .name = "example",  // the library must be libhcomm_transport_example.so
    .vendor = "Example Vendor",
    .version = EXAMPLE_VERSION,
    .settings = kSettings,
    .num_settings = std::size(kSettings),
    .iface = &kTransport,
    .setting_size = sizeof(hcomm_setting_decl_t),
};

}  // namespace
}  // namespace example

extern "C" __attribute__((visibility("default"))) const hcomm_plugin_header_t* hcomm_plugin_v1(void) {
  return &example::kHeader;
}
