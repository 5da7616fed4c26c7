#include "context.hpp"

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <utility>

namespace hcomm::ucx {

using plugin::format;

namespace {

using UcpConfig = std::unique_ptr<ucp_config_t, decltype(&ucp_config_release)>;

UcpConfig read_config(const Config& config) {
  ucp_config_t* raw = nullptr;
  check(ucp_config_read(nullptr, nullptr, &raw), "reading UCX's configuration (UCX_* variables)");
  UcpConfig ucp_config(raw, &ucp_config_release);
  auto set = [&](const char* setting, const char* name, const std::string& value) {
    if (ucs_status_t status = ucp_config_modify(raw, name, value.c_str()); status != UCS_OK)
      HCOMM_PLUGIN_THROW(HCOMM_ERR_CONFIG, "%s=%s: UCX refused it as UCX_%s: %s", setting, value.c_str(), name,
                         ucs_status_string(status));
  };
  if (!config.tls.empty()) set("HCOMM_UCX_TLS", "TLS", config.tls);
  if (!config.net_devices.empty()) set("HCOMM_UCX_NET_DEVICES", "NET_DEVICES", config.net_devices);
  // An explicit UCX_KEEPALIVE_INTERVAL wins over the plugin's default.
  if (config.keepalive_ms > 0 && !std::getenv("UCX_KEEPALIVE_INTERVAL"))
    set("HCOMM_UCX_KEEPALIVE_MS", "KEEPALIVE_INTERVAL", format("%lldms", config.keepalive_ms));
  return ucp_config;
}

// UCX prints its resources (one "transport/device" per line, after the
// transports were filtered by UCX_TLS and UCX_NET_DEVICES); there is no query
// for them in the API.
std::string resource_listing(ucp_context_h context) {
  char* text = nullptr;
  size_t length = 0;
  FILE* out = ::open_memstream(&text, &length);
  if (!out) return {};
  ucp_context_print_info(context, out);
  std::fclose(out);
  std::string listing(text, length);
  std::free(text);
  return listing;
}

ucp_context_h init_context(const ucp_config_t* ucp_config) {
  // Nets of one context may be driven from different threads.
  ucp_params_t params{.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED,
                      .features = UCP_FEATURE_TAG | UCP_FEATURE_WAKEUP,
                      .mt_workers_shared = 1};
  ucp_context_h context = nullptr;
  if (ucs_status_t status = ucp_init(&params, ucp_config, &context); status != UCS_OK)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_SYSTEM,
                       "ucx: ucp_init failed: %s; check HCOMM_UCX_TLS / UCX_TLS and HCOMM_UCX_NET_DEVICES / "
                       "UCX_NET_DEVICES (ucx_info -d lists the transports and devices)",
                       ucs_status_string(status));
  return context;
}

}  // namespace

void check(ucs_status_t status, const char* what) {
  if (status != UCS_OK) HCOMM_PLUGIN_THROW(HCOMM_ERR_SYSTEM, "ucx: %s: %s", what, ucs_status_string(status));
}

// UCX's shared-memory transports serve endpoints with peer-failure handling
// only when their ERROR_HANDLING is on, which it is not by default; UCX warns
// about that setting where no such transport exists, so it is set only after
// a first context showed one (and never over the user's own UCX_* choice).
Context::Context(const plugin::Services& services, Config config) : services_(services), config_(std::move(config)) {
  UcpConfig ucp_config = read_config(config_);
  context_ = init_context(ucp_config.get());
  reach_ = reach_of_resources(resource_listing(context_));
  bool user_choice = std::getenv("UCX_MM_ERROR_HANDLING") || std::getenv("UCX_POSIX_ERROR_HANDLING") ||
                     std::getenv("UCX_SYSV_ERROR_HANDLING");
  if ((reach_ & kReachSharedMemory) && !user_choice) {
    ucp_cleanup(context_);
    context_ = nullptr;
    check(ucp_config_modify(ucp_config.get(), "MM_ERROR_HANDLING", "y"), "enabling shared-memory error handling");
    context_ = init_context(ucp_config.get());
  }

  ucp_context_attr_t attr{.field_mask = UCP_ATTR_FIELD_MEMORY_TYPES};
  if (ucp_context_query(context_, &attr) == UCS_OK && (attr.memory_types & (1ull << UCS_MEMORY_TYPE_CUDA)))
    mem_kinds_ |= HCOMM_MEM_CUDA;
  std::string kinds;
  for (auto [bit, name] :
       {std::pair{kReachSharedMemory, "shared memory"}, std::pair{kReachTcpLoopback, "tcp on loopback"},
        std::pair{kReachTcpNetwork, "tcp"}, std::pair{kReachRdma, "rdma"}})
    if (reach_ & bit) kinds += (kinds.empty() ? "" : ", ") + std::string(name);
  log(HCOMM_LOG_INFO, format("ucx: UCX %s; reaches peers through: %s; CUDA memory: %s", ucp_get_version_string(),
                             kinds.empty() ? "nothing" : kinds.c_str(), (mem_kinds_ & HCOMM_MEM_CUDA) ? "yes" : "no"));
}

Context::~Context() { ucp_cleanup(context_); }

}  // namespace hcomm::ucx
