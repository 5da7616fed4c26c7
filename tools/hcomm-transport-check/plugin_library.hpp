// A transport plugin opened with dlopen and checked against ABI 1: every
// problem found is listed, so that a plugin author sees them all at once.
#pragma once

#include <string>
#include <vector>

#include "hcomm/plugin/transport.h"

namespace hcomm::tcheck {

class PluginLibrary {
 public:
  // Opens and inspects `path`; never throws. Check problems() before use.
  explicit PluginLibrary(const std::string& path);
  // The library stays loaded: plugin threads may outlive any scope here.
  PluginLibrary(const PluginLibrary&) = delete;
  PluginLibrary& operator=(const PluginLibrary&) = delete;

  const std::vector<std::string>& problems() const { return problems_; }
  bool usable() const { return problems_.empty(); }
  // Throws CheckFailure naming the problems unless usable().
  void require_usable() const;

  const hcomm_plugin_header_t& header() const { return *header_; }
  const hcomm_transport_v1_t& api() const { return *api_; }
  bool has_wait() const { return HCOMM_IFACE_HAS(api_, wait); }
  // ABI 1.1: the five mapped-memory functions (all or none), and copies by address.
  bool maps_memory() const { return HCOMM_IFACE_HAS(api_, mem_alloc); }
  bool copies_by_address() const { return HCOMM_IFACE_HAS(api_, ep_read) && HCOMM_IFACE_HAS(api_, ep_write); }
  // "tcp 1.2 (vendor), ABI 1.0, 3 settings, wait: yes, mapped memory: no"
  std::string summary() const;

 private:
  void open(const std::string& path);
  void check_header(const std::string& path);
  void check_settings();
  void check_interface();
  void check_memory_functions(const hcomm_transport_v1_t& api);
  void problem(std::string text) { problems_.push_back(std::move(text)); }

  const hcomm_plugin_header_t* header_ = nullptr;
  const hcomm_transport_v1_t* api_ = nullptr;
  std::vector<std::string> problems_;
};

}  // namespace hcomm::tcheck
