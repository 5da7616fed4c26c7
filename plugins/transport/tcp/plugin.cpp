// The C boundary of the TCP transport: the plugin header, and every function
// of hcomm_transport_v1_t turning C++ exceptions into status codes.
#include <cstddef>
#include <iterator>
#include <limits>
#include <utility>

#include "address.hpp"
#include "config.hpp"
#include "endpoint.hpp"
#include "hcomm/plugin/transport.h"
#include "hcomm/plugin/util.hpp"
#include "net.hpp"
#include "request.hpp"

#ifndef HCOMM_TCP_VERSION
#error "HCOMM_TCP_VERSION must be defined by the build"
#endif

namespace hcomm::tcp {
namespace {

plugin::Services g_services;  // from init; one per loaded plugin

struct Context {
  Config config;
};

template <class T>
T* need(T* pointer, const char* call, const char* argument) {
  if (!pointer) HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT, "tcp: %s: %s is NULL", call, argument);
  return pointer;
}

template <class F>
hcomm_result_t boundary(F&& body) noexcept {
  return plugin::boundary(g_services, std::forward<F>(body));
}

hcomm_result_t tcp_init(const hcomm_plugin_services_t* services, void** ctx) {
  if (services) g_services.set(services);
  return boundary([&] {
    need(services, "init", "services");
    *need(ctx, "init", "ctx") = new Context{Config::read(g_services)};
  });
}

hcomm_result_t tcp_finalize(void* ctx) {
  return boundary([&] { delete static_cast<Context*>(ctx); });
}

hcomm_result_t tcp_properties(void* ctx, hcomm_transport_props_t* props) {
  return boundary([&] {
    need(ctx, "properties", "ctx");
    // Typical of the links tcp serves when a faster transport takes the same host.
    *need(props, "properties", "props") = hcomm_transport_props_t{
        .size = sizeof(hcomm_transport_props_t),
        .mem_kinds = HCOMM_MEM_HOST,
        .caps = HCOMM_CAP_TAGGED | HCOMM_CAP_ANY_THREAD,
        .bandwidth_gbps = 1.25,
        .latency_us = 20.0,
        .overhead_us = 2.0,
        .priority = 0,
        .max_message = std::numeric_limits<uint64_t>::max(),
    };
  });
}

hcomm_result_t tcp_open(void* ctx, const hcomm_transport_open_args_t* args, void** net) {
  return boundary([&] {
    const Context& context = *need(static_cast<Context*>(ctx), "open", "ctx");
    need(args, "open", "args");
    need(net, "open", "net");
    if (args->size < sizeof(hcomm_transport_open_args_t))
      HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT, "tcp: open: args->size is %zu; set it to sizeof(%s), %zu",
                         args->size, "hcomm_transport_open_args_t", sizeof(hcomm_transport_open_args_t));
    if (args->nranks < 1 || args->rank < 0 || args->rank >= args->nranks)
      HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT,
                         "tcp: open: rank %d of %d ranks; need nranks >= 1 and 0 <= rank < nranks", args->rank,
                         args->nranks);
    *net = new Net(g_services, context.config, *args);
  });
}

hcomm_result_t tcp_close(void* net) {
  return boundary([&] { delete static_cast<Net*>(net); });
}

hcomm_result_t tcp_address(void* net, void* buf, size_t* len) {
  return boundary([&] {
    const Net& self = *need(static_cast<Net*>(net), "address", "net");
    self.local().encode(need(buf, "address", "buf"), need(len, "address", "len"));
  });
}

hcomm_result_t tcp_score(void* net, const void* local_addr, size_t local_len, const void* peer_addr, size_t peer_len,
                         hcomm_link_score_t* score) {
  return boundary([&] {
    need(net, "score", "net");
    PeerAddress local = PeerAddress::decode(local_addr, local_len, "score: local_addr");
    PeerAddress peer = PeerAddress::decode(peer_addr, peer_len, "score: peer_addr");
    *need(score, "score", "score") = score_link(local, peer);
  });
}

hcomm_result_t tcp_connect(void* net, int peer_rank, const void* peer_addr, size_t peer_len, void** ep) {
  return boundary([&] {
    Net& self = *need(static_cast<Net*>(net), "connect", "net");
    need(ep, "connect", "ep");
    *ep = &self.connect(peer_rank, PeerAddress::decode(peer_addr, peer_len, "connect: peer_addr"));
  });
}

// Polled by the core while connecting, so it also moves the connection on.
hcomm_result_t tcp_ep_ready(void* ep, int* ready) {
  return boundary([&] {
    Endpoint& endpoint = *need(static_cast<Endpoint*>(ep), "ep_ready", "ep");
    need(ready, "ep_ready", "ready");
    if (!endpoint.ready()) endpoint.net().poll();
    *ready = endpoint.ready();
  });
}

hcomm_result_t tcp_ep_close(void* ep) {
  return boundary([&] {
    Endpoint& endpoint = *need(static_cast<Endpoint*>(ep), "ep_close", "ep");
    endpoint.net().close_endpoint(endpoint);
  });
}

hcomm_result_t tcp_isend(void* ep, const void* buf, size_t len, uint64_t tag, void** request) {
  return boundary([&] {
    Endpoint& endpoint = *need(static_cast<Endpoint*>(ep), "isend", "ep");
    need(request, "isend", "request");
    if (!buf && len > 0) HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT, "tcp: isend: buf is NULL with len %zu", len);
    *request = endpoint.isend(buf, len, tag);
  });
}

hcomm_result_t tcp_irecv(void* ep, void* buf, size_t len, uint64_t tag, void** request) {
  return boundary([&] {
    Endpoint& endpoint = *need(static_cast<Endpoint*>(ep), "irecv", "ep");
    need(request, "irecv", "request");
    if (!buf && len > 0) HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT, "tcp: irecv: buf is NULL with len %zu", len);
    *request = endpoint.irecv(buf, len, tag);
  });
}

hcomm_result_t tcp_test(void* request, int* done, size_t* bytes) {
  return boundary([&] {
    Request& r = *need(static_cast<Request*>(request), "test", "request");
    need(done, "test", "done");
    size_t moved = 0;
    *done = 1;  // stays so when test throws: a failed request is finished (and freed) too
    *done = r.owner().test(&r, &moved) ? 1 : 0;
    if (*done && bytes) *bytes = moved;
  });
}

hcomm_result_t tcp_progress(void* net) {
  return boundary([&] { need(static_cast<Net*>(net), "progress", "net")->progress(); });
}

hcomm_result_t tcp_wait(void* net, int64_t timeout_us) {
  return boundary([&] {
    Net& self = *need(static_cast<Net*>(net), "wait", "net");
    if (timeout_us < 0)
      HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT, "tcp: wait: timeout_us is %lld; give 0 or more microseconds",
                         static_cast<long long>(timeout_us));
    self.wait(timeout_us);
  });
}

const hcomm_transport_v1_t kTransport = {
    .size = sizeof(hcomm_transport_v1_t),
    .init = tcp_init,
    .finalize = tcp_finalize,
    .properties = tcp_properties,
    .open = tcp_open,
    .close = tcp_close,
    .address = tcp_address,
    .score = tcp_score,
    .connect = tcp_connect,
    .ep_ready = tcp_ep_ready,
    .ep_close = tcp_ep_close,
    .isend = tcp_isend,
    .irecv = tcp_irecv,
    .test = tcp_test,
    .progress = tcp_progress,
    .wait = tcp_wait,
};

const hcomm_plugin_header_t kHeader = {
    .size = sizeof(hcomm_plugin_header_t),
    .abi_major = HCOMM_PLUGIN_ABI_MAJOR,
    .abi_minor = HCOMM_PLUGIN_ABI_MINOR,
    .kind = HCOMM_PLUGIN_TRANSPORT,
    .name = "tcp",
    .vendor = "HComm",
    .version = HCOMM_TCP_VERSION,
    .settings = kSettings,
    .num_settings = std::size(kSettings),
    .iface = &kTransport,
    .setting_size = sizeof(hcomm_setting_decl_t),
};

}  // namespace
}  // namespace hcomm::tcp

extern "C" __attribute__((visibility("default"))) const hcomm_plugin_header_t* hcomm_plugin_v1(void) {
  return &hcomm::tcp::kHeader;
}
