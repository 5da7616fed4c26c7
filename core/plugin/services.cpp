#include "core/plugin/services.hpp"

#include <map>
#include <mutex>
#include <string>

#include "core/common/error.hpp"
#include "core/common/log.hpp"
#include "core/common/settings.hpp"

namespace hcomm::plugin {

namespace {

void log_line(hcomm_log_level_t level, const char* subsys, const char* message) {
  unsigned bit = log::subsys_from_name(subsys ? subsys : "");
  log::write(level, bit ? bit : log::PLUGIN, message ? message : "");
}

int log_enabled(hcomm_log_level_t level, const char* subsys) {
  unsigned bit = log::subsys_from_name(subsys ? subsys : "");
  return log::enabled(level, bit ? bit : log::PLUGIN);
}

// Values are fixed for the life of the process, so the returned text is kept.
const char* get_setting(const char* name) {
  static std::mutex mutex;
  static std::map<std::string, std::string> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(name);
  if (it == cache.end()) {
    std::string value;
    try {
      value = settings::raw(name);
    } catch (const hcomm::Error& e) {
      HCOMM_WARN(PLUGIN, "%s", e.what());
    }
    it = cache.emplace(name, value).first;
  }
  return it->second.c_str();
}

void set_error(const char* message) { set_last_error(message ? message : "unknown plugin error"); }

}  // namespace

const hcomm_plugin_services_t* services() {
  static const hcomm_plugin_services_t table = {
      .size = sizeof(hcomm_plugin_services_t),
      .log = log_line,
      .log_enabled = log_enabled,
      .get_setting = get_setting,
      .set_error = set_error,
      .abi_minor = HCOMM_PLUGIN_ABI_MINOR,
  };
  return &table;
}

}  // namespace hcomm::plugin
