// The C boundary of the shared-memory transport: hcomm_plugin_v1 and the
// functions of hcomm_transport_v1_t. Exceptions become status codes here.
#include <cstddef>
#include <cstdint>
#include <memory>

#include "config.hpp"
#include "endpoint.hpp"
#include "hcomm/plugin/transport.h"
#include "memory.hpp"
#include "hcomm/plugin/util.hpp"
#include "net.hpp"

#ifndef HCOMM_SHM_VERSION
#error "HCOMM_SHM_VERSION must be defined by the build"
#endif

namespace hcomm::shm {
namespace {

plugin::Services g_services;

// Typical numbers for two ranks of one host, well above TCP over loopback
// (tcp/address.hpp): the topology prefers shm wherever it reaches.
constexpr double kBandwidthGbps = 10.0;
constexpr double kLatencyUs = 0.5;

// Per process: the settings, read once at init.
struct Context {
  Config config;
};

template <class T>
T& checked(void* handle, const char* what) {
  if (!handle) HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT, "shm: %s is NULL", what);
  return *static_cast<T*>(handle);
}

template <class T>
T* checked_out(T* out, const char* what) {
  if (!out) HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT, "shm: %s is NULL (an output argument)", what);
  return out;
}

void check_buffer(const void* buf, size_t len, const char* call) {
  if (!buf && len) HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT, "shm: %s: buf is NULL with len %zu", call, len);
}

hcomm_result_t shm_init(const hcomm_plugin_services_t* services, void** ctx) {
  g_services.set(services);
  return plugin::boundary(g_services, [&] {
    if (!services) HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT, "shm: init: services is NULL");
    *checked_out(ctx, "init: ctx") = new Context{Config::read(g_services)};
  });
}

hcomm_result_t shm_finalize(void* ctx) {
  return plugin::boundary(g_services, [&] { delete &checked<Context>(ctx, "finalize: ctx"); });
}

hcomm_result_t shm_properties(void* ctx, hcomm_transport_props_t* props) {
  return plugin::boundary(g_services, [&] {
    checked<Context>(ctx, "properties: ctx");
    *checked_out(props, "properties: props") = hcomm_transport_props_t{
        .size = sizeof(hcomm_transport_props_t),
        .mem_kinds = HCOMM_MEM_HOST,
        .caps = HCOMM_CAP_TAGGED | HCOMM_CAP_ANY_THREAD,
        .bandwidth_gbps = kBandwidthGbps,
        .latency_us = kLatencyUs,
        .overhead_us = 0.2,
        .priority = 10,
        .max_message = kMaxMessage,
    };
  });
}

hcomm_result_t shm_open(void* ctx, const hcomm_transport_open_args_t* args, void** net) {
  return plugin::boundary(g_services, [&] {
    const Context& c = checked<Context>(ctx, "open: ctx");
    if (!args || args->size < sizeof(hcomm_transport_open_args_t))
      HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT, "shm: open: args is NULL or smaller than ABI 1.0's (%zu bytes)",
                         sizeof(hcomm_transport_open_args_t));
    *checked_out(net, "open: net") = new Net(c.config, g_services, *args);
  });
}

hcomm_result_t shm_close(void* net) {
  return plugin::boundary(g_services, [&] { delete &checked<Net>(net, "close: net"); });
}

hcomm_result_t shm_address(void* net, void* buf, size_t* len) {
  return plugin::boundary(g_services, [&] { checked<Net>(net, "address: net").address(buf, len); });
}

hcomm_result_t shm_score(void* net, const void* local_addr, size_t local_len, const void* peer_addr, size_t peer_len,
                         hcomm_link_score_t* score) {
  return plugin::boundary(g_services, [&] {
    checked<Net>(net, "score: net");
    const Address local = Address::decode(local_addr, local_len, "score: local_addr");
    const Address peer = Address::decode(peer_addr, peer_len, "score: peer_addr");
    const bool reachable = local.can_share_memory_with(peer);
    *checked_out(score, "score: score") = hcomm_link_score_t{
        .reachable = reachable ? 1 : 0,
        .bandwidth_gbps = reachable ? kBandwidthGbps : 0.0,
        .latency_us = reachable ? kLatencyUs : 0.0,
    };
  });
}

hcomm_result_t shm_connect(void* net, int peer_rank, const void* peer_addr, size_t peer_len, void** ep) {
  return plugin::boundary(g_services, [&] {
    void** out = checked_out(ep, "connect: ep");
    *out = &checked<Net>(net, "connect: net").connect(peer_rank, peer_addr, peer_len);
  });
}

hcomm_result_t shm_ep_ready(void* ep, int* ready) {
  return plugin::boundary(g_services, [&] {
    Endpoint& e = checked<Endpoint>(ep, "ep_ready: ep");
    int* out = checked_out(ready, "ep_ready: ready");
    *out = e.ready() ? 1 : 0;
  });
}

hcomm_result_t shm_ep_close(void* ep) {
  return plugin::boundary(g_services, [&] {
    Endpoint& e = checked<Endpoint>(ep, "ep_close: ep");
    e.net().close(e);
  });
}

hcomm_result_t shm_isend(void* ep, const void* buf, size_t len, uint64_t tag, void** request) {
  return plugin::boundary(g_services, [&] {
    Endpoint& e = checked<Endpoint>(ep, "isend: ep");
    void** out = checked_out(request, "isend: request");
    check_buffer(buf, len, "isend");
    *out = &e.isend(buf, len, tag);
  });
}

hcomm_result_t shm_irecv(void* ep, void* buf, size_t len, uint64_t tag, void** request) {
  return plugin::boundary(g_services, [&] {
    Endpoint& e = checked<Endpoint>(ep, "irecv: ep");
    void** out = checked_out(request, "irecv: request");
    check_buffer(buf, len, "irecv");
    *out = &e.irecv(buf, len, tag);
  });
}

hcomm_result_t shm_test(void* request, int* done, size_t* bytes) {
  return plugin::boundary(g_services, [&] {
    Request& r = checked<Request>(request, "test: request");
    int* done_out = checked_out(done, "test: done");
    size_t* bytes_out = checked_out(bytes, "test: bytes");
    if (r.pending()) r.net->progress();
    *done_out = r.pending() ? 0 : 1;
    *bytes_out = 0;
    if (r.pending()) return;
    // Done or failed, the request ends here.
    if (r.state == Request::State::Failed) {
      plugin::Error error(r.error, std::move(r.error_text));
      r.net->release(r);
      throw error;
    }
    *bytes_out = static_cast<size_t>(r.bytes);
    r.net->release(r);
  });
}

hcomm_result_t shm_progress(void* net) {
  return plugin::boundary(g_services, [&] { checked<Net>(net, "progress: net").progress(); });
}

hcomm_result_t shm_wait(void* net, int64_t timeout_us) {
  return plugin::boundary(g_services, [&] { checked<Net>(net, "wait: net").wait(timeout_us); });
}

hcomm_result_t shm_mem_alloc(void* ctx, size_t bytes, void** ptr, void** mem, hcomm_mem_desc_t* desc) {
  return plugin::boundary(g_services, [&] {
    checked<Context>(ctx, "mem_alloc: ctx");
    void** ptr_out = checked_out(ptr, "mem_alloc: ptr");
    void** mem_out = checked_out(mem, "mem_alloc: mem");
    hcomm_mem_desc_t* desc_out = checked_out(desc, "mem_alloc: desc");
    Region* r = Region::allocate(bytes);
    *ptr_out = r->data();
    *mem_out = r;
    *desc_out = r->desc();
  });
}

hcomm_result_t shm_mem_register(void* ctx, void* ptr, size_t bytes, void** mem, hcomm_mem_desc_t* desc) {
  return plugin::boundary(g_services, [&] {
    checked<Context>(ctx, "mem_register: ctx");
    check_buffer(ptr, bytes, "mem_register");
    void** mem_out = checked_out(mem, "mem_register: mem");
    hcomm_mem_desc_t* desc_out = checked_out(desc, "mem_register: desc");
    Region* r = Region::enroll(ptr, bytes);
    *mem_out = r;
    *desc_out = r->desc();
  });
}

hcomm_result_t shm_mem_release(void* mem) {
  return plugin::boundary(g_services, [&] {
    std::unique_ptr<Region> r(&checked<Region>(mem, "mem_release: mem"));
    r->restore_pages();
  });
}

hcomm_result_t shm_mem_held(void* mem, int* held) {
  return plugin::boundary(g_services, [&] {
    const Region& r = checked<Region>(mem, "mem_held: mem");
    int* held_out = checked_out(held, "mem_held: held");
    if (!Region::can_tell_held())
      HCOMM_PLUGIN_THROW(HCOMM_ERR_UNSUPPORTED, "shm: mem_held: /proc/self/map_files is not readable here");
    *held_out = r.held() ? 1 : 0;
  });
}

hcomm_result_t shm_mem_map(void* ctx, const hcomm_mem_desc_t* desc, void** ptr, void** mapping) {
  return plugin::boundary(g_services, [&] {
    checked<Context>(ctx, "mem_map: ctx");
    if (!desc) HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT, "shm: mem_map: desc is NULL");
    void** ptr_out = checked_out(ptr, "mem_map: ptr");
    void** mapping_out = checked_out(mapping, "mem_map: mapping");
    auto* m = new PeerMapping(*desc);
    *ptr_out = m->data();
    *mapping_out = m;
  });
}

hcomm_result_t shm_mem_unmap(void* mapping) {
  return plugin::boundary(g_services, [&] { delete &checked<PeerMapping>(mapping, "mem_unmap: mapping"); });
}

hcomm_result_t shm_ep_read(void* ep, void* local, uint64_t remote_address, size_t bytes) {
  return plugin::boundary(g_services, [&] {
    Endpoint& e = checked<Endpoint>(ep, "ep_read: ep");
    check_buffer(local, bytes, "ep_read");
    e.read(local, remote_address, bytes);
  });
}

hcomm_result_t shm_ep_write(void* ep, const void* local, uint64_t remote_address, size_t bytes) {
  return plugin::boundary(g_services, [&] {
    Endpoint& e = checked<Endpoint>(ep, "ep_write: ep");
    check_buffer(local, bytes, "ep_write");
    e.write(local, remote_address, bytes);
  });
}

const hcomm_transport_v1_t kTransport = {
    .size = sizeof(hcomm_transport_v1_t),
    .init = shm_init,
    .finalize = shm_finalize,
    .properties = shm_properties,
    .open = shm_open,
    .close = shm_close,
    .address = shm_address,
    .score = shm_score,
    .connect = shm_connect,
    .ep_ready = shm_ep_ready,
    .ep_close = shm_ep_close,
    .isend = shm_isend,
    .irecv = shm_irecv,
    .test = shm_test,
    .progress = shm_progress,
    .wait = shm_wait,
    .mem_alloc = shm_mem_alloc,
    .mem_register = shm_mem_register,
    .mem_release = shm_mem_release,
    .mem_map = shm_mem_map,
    .mem_unmap = shm_mem_unmap,
    .ep_read = shm_ep_read,
    .ep_write = shm_ep_write,
    .mem_held = shm_mem_held,
};

const hcomm_plugin_header_t kHeader = {
    .size = sizeof(hcomm_plugin_header_t),
    .abi_major = HCOMM_PLUGIN_ABI_MAJOR,
    .abi_minor = HCOMM_PLUGIN_ABI_MINOR,
    .kind = HCOMM_PLUGIN_TRANSPORT,
    .name = "shm",
    .vendor = "HComm",
    .version = HCOMM_SHM_VERSION,
    .settings = kSettings,
    .num_settings = kNumSettings,
    .iface = &kTransport,
    .setting_size = sizeof(hcomm_setting_decl_t),
};

}  // namespace
}  // namespace hcomm::shm

extern "C" __attribute__((visibility("default"))) const hcomm_plugin_header_t* hcomm_plugin_v1(void) {
  return &hcomm::shm::kHeader;
}
