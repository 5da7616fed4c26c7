// The plugin's process-wide state: one ucp_context (tag matching and worker
// wake-up), and what UCX reports about the transports it found.
#pragma once

#include <ucp/api/ucp.h>

#include <string>

#include "address.hpp"
#include "config.hpp"
#include "hcomm/plugin/util.hpp"

namespace hcomm::ucx {

class Context {
 public:
  Context(const plugin::Services& services, Config config);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  const plugin::Services& services() const { return services_; }
  const Config& config() const { return config_; }
  ucp_context_h ucp() const { return context_; }
  // kReach* bits: the kinds of UCX transport among the context's resources.
  uint32_t reach() const { return reach_; }
  // hcomm_mem_kind_t bits: host, plus CUDA when UCX was built with it.
  uint32_t mem_kinds() const { return mem_kinds_; }
  void log(hcomm_log_level_t level, const std::string& text) const { services_.log(level, "NET", text); }

 private:
  const plugin::Services& services_;
  const Config config_;
  ucp_context_h context_ = nullptr;
  uint32_t reach_ = 0;
  uint32_t mem_kinds_ = HCOMM_MEM_HOST;
};

// Throws HCOMM_ERR_SYSTEM with "ucx: <what>: <UCX's reason>" unless ok.
void check(ucs_status_t status, const char* what);

}  // namespace hcomm::ucx
