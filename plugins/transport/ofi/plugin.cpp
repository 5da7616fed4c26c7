// The C boundary of the libfabric transport: the plugin header, and every
// function of hcomm_transport_v1_t turning C++ exceptions into status codes.
#include <cstdlib>
#include <iterator>
#include <limits>
#include <memory>
#include <mutex>
#include <utility>

#include "address.hpp"
#include "config.hpp"
#include "endpoint.hpp"
#include "fabric.hpp"
#include "hcomm/plugin/transport.h"
#include "hcomm/plugin/util.hpp"
#include "net.hpp"
#include "request.hpp"

#ifndef HCOMM_OFI_VERSION
#error "HCOMM_OFI_VERSION must be defined by the build"
#endif

namespace hcomm::ofi {
namespace {

plugin::Services g_services;  // from init; one per loaded plugin

struct Context {
  Config config;
  std::mutex mutex;  // guards the first open, which opens the fabric
  std::unique_ptr<Fabric> fabric;

  Fabric& fabric_once() {
    std::lock_guard lock(mutex);
    if (!fabric) fabric = std::make_unique<Fabric>(config, g_services);
    return *fabric;
  }
};

template <class T>
T* need(T* pointer, const char* call, const char* argument) {
  if (!pointer) HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT, "ofi: %s: %s is NULL", call, argument);
  return pointer;
}

template <class F>
hcomm_result_t boundary(F&& body) noexcept {
  return plugin::boundary(g_services, std::forward<F>(body));
}

hcomm_result_t ofi_init(const hcomm_plugin_services_t* services, void** ctx) {
  if (services) g_services.set(services);
  return boundary([&] {
    need(services, "init", "services");
    *need(ctx, "init", "ctx") = new Context{.config = Config::read(g_services)};
  });
}

hcomm_result_t ofi_finalize(void* ctx) {
  return boundary([&] { delete static_cast<Context*>(ctx); });
}

hcomm_result_t ofi_properties(void* ctx, hcomm_transport_props_t* props) {
  return boundary([&] {
    const Context& context = *need(static_cast<Context*>(ctx), "properties", "ctx");
    need(props, "properties", "props");
    // Before the fabric is open the provider is known by name only: HCOMM_OFI_PROVIDER or
    // libfabric's FI_PROVIDER, else a network provider is assumed (libfabric lists those first).
    std::string provider = context.config.provider;
    if (provider.empty() && std::getenv("FI_PROVIDER")) provider = std::getenv("FI_PROVIDER");
    bool host_local = host_local_provider(provider);
    *props = hcomm_transport_props_t{
        .size = sizeof(hcomm_transport_props_t),
        .mem_kinds = HCOMM_MEM_HOST,
        .caps = HCOMM_CAP_TAGGED,
        .bandwidth_gbps = host_local ? 8.0 : 1.25,
        .latency_us = host_local ? 1.0 : 20.0,
        .overhead_us = host_local ? 0.5 : 2.0,
        .priority = -5,  // below the native shm and tcp transports on equal scores
        .max_message = std::numeric_limits<uint64_t>::max(),
    };
  });
}

hcomm_result_t ofi_open(void* ctx, const hcomm_transport_open_args_t* args, void** net) {
  return boundary([&] {
    Context& context = *need(static_cast<Context*>(ctx), "open", "ctx");
    need(args, "open", "args");
    need(net, "open", "net");
    if (args->size < sizeof(hcomm_transport_open_args_t))
      HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT, "ofi: open: args->size is %zu; set it to sizeof(%s), %zu",
                         args->size, "hcomm_transport_open_args_t", sizeof(hcomm_transport_open_args_t));
    if (args->nranks < 1 || args->rank < 0 || args->rank >= args->nranks)
      HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT,
                         "ofi: open: rank %d of %d ranks; need nranks >= 1 and 0 <= rank < nranks", args->rank,
                         args->nranks);
    *net = new Net(context.fabric_once(), context.config, g_services, *args);
  });
}

hcomm_result_t ofi_close(void* net) {
  return boundary([&] { delete static_cast<Net*>(net); });
}

hcomm_result_t ofi_address(void* net, void* buf, size_t* len) {
  return boundary([&] {
    const Net& self = *need(static_cast<Net*>(net), "address", "net");
    self.local().encode(need(buf, "address", "buf"), need(len, "address", "len"));
  });
}

hcomm_result_t ofi_score(void* net, const void* local_addr, size_t local_len, const void* peer_addr, size_t peer_len,
                         hcomm_link_score_t* score) {
  return boundary([&] {
    need(net, "score", "net");
    Address local = Address::decode(local_addr, local_len, "score: local_addr");
    Address peer = Address::decode(peer_addr, peer_len, "score: peer_addr");
    *need(score, "score", "score") = score_link(local, peer);
  });
}

hcomm_result_t ofi_connect(void* net, int peer_rank, const void* peer_addr, size_t peer_len, void** ep) {
  return boundary([&] {
    Net& self = *need(static_cast<Net*>(net), "connect", "net");
    need(ep, "connect", "ep");
    *ep = &self.connect(peer_rank, Address::decode(peer_addr, peer_len, "connect: peer_addr"));
  });
}

// Reliable datagram endpoints need no handshake: an endpoint is ready at
// once unless its peer already failed; polling it moves the net on.
hcomm_result_t ofi_ep_ready(void* ep, int* ready) {
  return boundary([&] {
    Endpoint& endpoint = *need(static_cast<Endpoint*>(ep), "ep_ready", "ep");
    need(ready, "ep_ready", "ready");
    *ready = endpoint.net().ready(endpoint) ? 1 : 0;
  });
}

hcomm_result_t ofi_ep_close(void* ep) {
  return boundary([&] {
    Endpoint& endpoint = *need(static_cast<Endpoint*>(ep), "ep_close", "ep");
    endpoint.net().close_endpoint(endpoint);
  });
}

hcomm_result_t ofi_isend(void* ep, const void* buf, size_t len, uint64_t tag, void** request) {
  return boundary([&] {
    Endpoint& endpoint = *need(static_cast<Endpoint*>(ep), "isend", "ep");
    need(request, "isend", "request");
    if (!buf && len > 0) HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT, "ofi: isend: buf is NULL with len %zu", len);
    *request = endpoint.net().isend(endpoint, buf, len, tag);
  });
}

hcomm_result_t ofi_irecv(void* ep, void* buf, size_t len, uint64_t tag, void** request) {
  return boundary([&] {
    Endpoint& endpoint = *need(static_cast<Endpoint*>(ep), "irecv", "ep");
    need(request, "irecv", "request");
    if (!buf && len > 0) HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT, "ofi: irecv: buf is NULL with len %zu", len);
    *request = endpoint.net().irecv(endpoint, buf, len, tag);
  });
}

hcomm_result_t ofi_test(void* request, int* done, size_t* bytes) {
  return boundary([&] {
    Request& r = *need(static_cast<Request*>(request), "test", "request");
    need(done, "test", "done");
    size_t moved = 0;
    *done = 1;  // stays so when test throws: a failed request is finished (and freed) too
    *done = r.ep->net().test(r, &moved) ? 1 : 0;
    if (*done && bytes) *bytes = moved;
  });
}

hcomm_result_t ofi_progress(void* net) {
  return boundary([&] { need(static_cast<Net*>(net), "progress", "net")->progress(); });
}

hcomm_result_t ofi_wait(void* net, int64_t timeout_us) {
  return boundary([&] {
    Net& self = *need(static_cast<Net*>(net), "wait", "net");
    if (timeout_us < 0)
      HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT, "ofi: wait: timeout_us is %lld; give 0 or more microseconds",
                         static_cast<long long>(timeout_us));
    self.wait(timeout_us);
  });
}

const hcomm_transport_v1_t kTransport = {
    .size = sizeof(hcomm_transport_v1_t),
    .init = ofi_init,
    .finalize = ofi_finalize,
    .properties = ofi_properties,
    .open = ofi_open,
    .close = ofi_close,
    .address = ofi_address,
    .score = ofi_score,
    .connect = ofi_connect,
    .ep_ready = ofi_ep_ready,
    .ep_close = ofi_ep_close,
    .isend = ofi_isend,
    .irecv = ofi_irecv,
    .test = ofi_test,
    .progress = ofi_progress,
    .wait = ofi_wait,
};

const hcomm_plugin_header_t kHeader = {
    .size = sizeof(hcomm_plugin_header_t),
    .abi_major = HCOMM_PLUGIN_ABI_MAJOR,
    .abi_minor = HCOMM_PLUGIN_ABI_MINOR,
    .kind = HCOMM_PLUGIN_TRANSPORT,
    .name = "ofi",
    .vendor = "HComm",
    .version = HCOMM_OFI_VERSION,
    .settings = kSettings,
    .num_settings = std::size(kSettings),
    .iface = &kTransport,
    .setting_size = sizeof(hcomm_setting_decl_t),
};

}  // namespace
}  // namespace hcomm::ofi

extern "C" __attribute__((visibility("default"))) const hcomm_plugin_header_t* hcomm_plugin_v1(void) {
  return &hcomm::ofi::kHeader;
}
