// The C boundary of the verbs transport: the plugin header, and every
// function of hcomm_transport_v1_t turning C++ exceptions into status codes.
#include <cstddef>
#include <iterator>
#include <limits>
#include <memory>
#include <utility>

#include "config.hpp"
#include "device.hpp"
#include "endpoint.hpp"
#include "hcomm/plugin/transport.h"
#include "hcomm/plugin/util.hpp"
#include "net.hpp"
#include "request.hpp"
#include "score.hpp"

#ifndef HCOMM_VERBS_VERSION
#error "HCOMM_VERBS_VERSION must be defined by the build"
#endif

namespace hcomm::verbs {
namespace {

plugin::Services g_services;  // from init; one per loaded plugin

// A process without a usable RDMA port still initialises: the core lists the
// plugin, and the scores keep it from ever being chosen.
struct Context {
  Config config;
  std::unique_ptr<Device> device;
  std::string no_device;  // why device is null
};

template <class T>
T* need(T* pointer, const char* call, const char* argument) {
  if (!pointer) HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT, "verbs: %s: %s is NULL", call, argument);
  return pointer;
}

template <class F>
hcomm_result_t boundary(F&& body) noexcept {
  return plugin::boundary(g_services, std::forward<F>(body));
}

hcomm_result_t verbs_init(const hcomm_plugin_services_t* services, void** ctx) {
  if (services) g_services.set(services);
  return boundary([&] {
    need(services, "init", "services");
    need(ctx, "init", "ctx");
    auto context = std::make_unique<Context>();
    context->config = Config::read(g_services);
    context->device = Device::open(context->config, g_services, &context->no_device);
    if (!context->device)
      g_services.log(HCOMM_LOG_INFO, "INIT", "verbs: " + context->no_device + "; every link scores unreachable");
    *ctx = context.release();
  });
}

hcomm_result_t verbs_finalize(void* ctx) {
  return boundary([&] { delete static_cast<Context*>(ctx); });
}

hcomm_result_t verbs_properties(void* ctx, hcomm_transport_props_t* props) {
  return boundary([&] {
    const Context& context = *need(static_cast<Context*>(ctx), "properties", "ctx");
    uint32_t rate = context.device ? context.device->port().rate_mbps : 0;
    *need(props, "properties", "props") = hcomm_transport_props_t{
        .size = sizeof(hcomm_transport_props_t),
        .mem_kinds = HCOMM_MEM_HOST,
        .caps = HCOMM_CAP_TAGGED,
        .bandwidth_gbps = link_bandwidth_gbps(rate),
        .latency_us = kLatencyUs,
        .overhead_us = 0.5,
        .priority = 1,
        .max_message = std::numeric_limits<uint64_t>::max(),
    };
  });
}

hcomm_result_t verbs_open(void* ctx, const hcomm_transport_open_args_t* args, void** net) {
  return boundary([&] {
    Context& context = *need(static_cast<Context*>(ctx), "open", "ctx");
    need(args, "open", "args");
    need(net, "open", "net");
    if (args->size < sizeof(hcomm_transport_open_args_t))
      HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT, "verbs: open: args->size is %zu; set it to sizeof(%s), %zu",
                         args->size, "hcomm_transport_open_args_t", sizeof(hcomm_transport_open_args_t));
    if (args->nranks < 1 || args->rank < 0 || args->rank >= args->nranks)
      HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT,
                         "verbs: open: rank %d of %d ranks; need nranks >= 1 and 0 <= rank < nranks", args->rank,
                         args->nranks);
    *net = new Net(g_services, context.config, context.device.get(), context.no_device, *args);
  });
}

hcomm_result_t verbs_close(void* net) {
  return boundary([&] { delete static_cast<Net*>(net); });
}

hcomm_result_t verbs_address(void* net, void* buf, size_t* len) {
  return boundary([&] {
    const Net& self = *need(static_cast<Net*>(net), "address", "net");
    self.local().encode(need(buf, "address", "buf"), need(len, "address", "len"));
  });
}

hcomm_result_t verbs_score(void* net, const void* local_addr, size_t local_len, const void* peer_addr, size_t peer_len,
                           hcomm_link_score_t* score) {
  return boundary([&] {
    need(net, "score", "net");
    Address local = Address::decode(local_addr, local_len, "score: local_addr");
    Address peer = Address::decode(peer_addr, peer_len, "score: peer_addr");
    *need(score, "score", "score") = score_link(local, peer);
  });
}

hcomm_result_t verbs_connect(void* net, int peer_rank, const void* peer_addr, size_t peer_len, void** ep) {
  return boundary([&] {
    Net& self = *need(static_cast<Net*>(net), "connect", "net");
    need(ep, "connect", "ep");
    *ep = &self.connect(peer_rank, Address::decode(peer_addr, peer_len, "connect: peer_addr"));
  });
}

// Polled by the core while connecting, so it also moves the handshake on.
hcomm_result_t verbs_ep_ready(void* ep, int* ready) {
  return boundary([&] {
    Endpoint& endpoint = *need(static_cast<Endpoint*>(ep), "ep_ready", "ep");
    need(ready, "ep_ready", "ready");
    if (!endpoint.ready()) endpoint.net().poll();
    *ready = endpoint.ready();
  });
}

hcomm_result_t verbs_ep_close(void* ep) {
  return boundary([&] {
    Endpoint& endpoint = *need(static_cast<Endpoint*>(ep), "ep_close", "ep");
    endpoint.net().close_endpoint(endpoint);
  });
}

hcomm_result_t verbs_isend(void* ep, const void* buf, size_t len, uint64_t tag, void** request) {
  return boundary([&] {
    Endpoint& endpoint = *need(static_cast<Endpoint*>(ep), "isend", "ep");
    need(request, "isend", "request");
    if (!buf && len > 0) HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT, "verbs: isend: buf is NULL with len %zu", len);
    *request = endpoint.isend(buf, len, tag);
  });
}

hcomm_result_t verbs_irecv(void* ep, void* buf, size_t len, uint64_t tag, void** request) {
  return boundary([&] {
    Endpoint& endpoint = *need(static_cast<Endpoint*>(ep), "irecv", "ep");
    need(request, "irecv", "request");
    if (!buf && len > 0) HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT, "verbs: irecv: buf is NULL with len %zu", len);
    *request = endpoint.irecv(buf, len, tag);
  });
}

hcomm_result_t verbs_test(void* request, int* done, size_t* bytes) {
  return boundary([&] {
    Request& r = *need(static_cast<Request*>(request), "test", "request");
    need(done, "test", "done");
    size_t moved = 0;
    *done = 1;  // stays so when test throws: a failed request is finished (and freed) too
    *done = r.owner().test(&r, &moved) ? 1 : 0;
    if (*done && bytes) *bytes = moved;
  });
}

hcomm_result_t verbs_progress(void* net) {
  return boundary([&] { need(static_cast<Net*>(net), "progress", "net")->progress(); });
}

hcomm_result_t verbs_wait(void* net, int64_t timeout_us) {
  return boundary([&] {
    Net& self = *need(static_cast<Net*>(net), "wait", "net");
    if (timeout_us < 0)
      HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT, "verbs: wait: timeout_us is %lld; give 0 or more microseconds",
                         static_cast<long long>(timeout_us));
    self.wait(timeout_us);
  });
}

const hcomm_transport_v1_t kTransport = {
    .size = sizeof(hcomm_transport_v1_t),
    .init = verbs_init,
    .finalize = verbs_finalize,
    .properties = verbs_properties,
    .open = verbs_open,
    .close = verbs_close,
    .address = verbs_address,
    .score = verbs_score,
    .connect = verbs_connect,
    .ep_ready = verbs_ep_ready,
    .ep_close = verbs_ep_close,
    .isend = verbs_isend,
    .irecv = verbs_irecv,
    .test = verbs_test,
    .progress = verbs_progress,
    .wait = verbs_wait,
};

const hcomm_plugin_header_t kHeader = {
    .size = sizeof(hcomm_plugin_header_t),
    .abi_major = HCOMM_PLUGIN_ABI_MAJOR,
    .abi_minor = HCOMM_PLUGIN_ABI_MINOR,
    .kind = HCOMM_PLUGIN_TRANSPORT,
    .name = "verbs",
    .vendor = "HComm",
    .version = HCOMM_VERBS_VERSION,
    .settings = kSettings,
    .num_settings = std::size(kSettings),
    .iface = &kTransport,
    .setting_size = sizeof(hcomm_setting_decl_t),
};

}  // namespace
}  // namespace hcomm::verbs

extern "C" __attribute__((visibility("default"))) const hcomm_plugin_header_t* hcomm_plugin_v1(void) {
  return &hcomm::verbs::kHeader;
}
