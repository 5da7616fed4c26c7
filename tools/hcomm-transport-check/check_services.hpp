// The services a plugin gets from its host, provided here as the core would:
// log lines to stderr with a rank prefix (only when HCOMM_DEBUG is set),
// settings from the environment or the plugin's declared default, and the
// text of the last error kept per thread.
#pragma once

#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "hcomm/plugin/plugin.h"

namespace hcomm::tcheck {

// HCOMM_DEBUG as a level; nullopt (with `error` set) when it does not parse.
std::optional<hcomm_log_level_t> debug_level_from_env(std::string* error);

class CheckServices {
 public:
  // The C callbacks carry no context pointer, so there is one per process.
  static CheckServices& instance();

  void configure(int rank, const hcomm_plugin_header_t& header);
  const hcomm_plugin_services_t* table() const { return &table_; }

  void clear_error();
  std::string last_error() const;
  // Names the plugin asked for without declaring them.
  std::vector<std::string> undeclared_settings() const;

 private:
  CheckServices();
  static void log(hcomm_log_level_t level, const char* subsys, const char* message);
  static int log_enabled(hcomm_log_level_t level, const char* subsys);
  static const char* get_setting(const char* name);
  static void set_error(const char* message);

  hcomm_plugin_services_t table_;
  int rank_ = -1;
  hcomm_log_level_t level_ = HCOMM_LOG_NONE;
  std::string plugin_name_;
  const hcomm_plugin_header_t* header_ = nullptr;
  mutable std::mutex undeclared_mutex_;  // plugin threads may read settings too
  std::vector<std::string> undeclared_;
};

}  // namespace hcomm::tcheck
