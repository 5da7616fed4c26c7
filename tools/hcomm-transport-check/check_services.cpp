#include "check_services.hpp"

#include <strings.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "failure.hpp"

namespace hcomm::tcheck {

namespace {

thread_local std::string t_last_error;

constexpr const char* kLevelNames[] = {"NONE", "WARN", "INFO", "DEBUG", "TRACE"};

}  // namespace

std::optional<hcomm_log_level_t> debug_level_from_env(std::string* error) {
  const char* value = std::getenv("HCOMM_DEBUG");
  if (!value || !*value) return HCOMM_LOG_NONE;
  for (int level = HCOMM_LOG_WARN; level <= HCOMM_LOG_TRACE; ++level)
    if (strcasecmp(value, kLevelNames[level]) == 0) return static_cast<hcomm_log_level_t>(level);
  *error = format("HCOMM_DEBUG=%s: expected WARN, INFO, DEBUG or TRACE", value);
  return std::nullopt;
}

CheckServices& CheckServices::instance() {
  static CheckServices services;
  return services;
}

CheckServices::CheckServices()
    : table_{.size = sizeof(hcomm_plugin_services_t),
             .log = &CheckServices::log,
             .log_enabled = &CheckServices::log_enabled,
             .get_setting = &CheckServices::get_setting,
             .set_error = &CheckServices::set_error,
             .abi_minor = HCOMM_PLUGIN_ABI_MINOR} {}

void CheckServices::configure(int rank, const hcomm_plugin_header_t& header) {
  std::string ignored;
  rank_ = rank;
  level_ = debug_level_from_env(&ignored).value_or(HCOMM_LOG_NONE);
  plugin_name_ = header.name;
  header_ = &header;
}

void CheckServices::log(hcomm_log_level_t level, const char* subsys, const char* message) {
  if (!log_enabled(level, subsys)) return;
  const CheckServices& self = instance();
  int index = std::clamp(static_cast<int>(level), 0, static_cast<int>(HCOMM_LOG_TRACE));
  // One write per line, so that the lines of concurrent ranks do not interleave.
  std::string line = format("[rank %d %s %s %s] %s\n", self.rank_, self.plugin_name_.c_str(), kLevelNames[index],
                            subsys ? subsys : "-", message ? message : "(null)");
  ssize_t ignored = ::write(STDERR_FILENO, line.data(), line.size());
  (void)ignored;
}

int CheckServices::log_enabled(hcomm_log_level_t level, const char*) {
  return level != HCOMM_LOG_NONE && level <= instance().level_;
}

const char* CheckServices::get_setting(const char* name) {
  CheckServices& self = instance();
  if (name) {
    for (size_t i = 0; self.header_ && i < self.header_->num_settings; ++i) {
      const hcomm_setting_decl_t& decl = *hcomm_plugin_setting(self.header_, i);
      if (decl.name && std::strcmp(decl.name, name) == 0) {
        const char* value = std::getenv(name);
        return value ? value : decl.default_value;
      }
    }
  }
  std::lock_guard<std::mutex> lock(self.undeclared_mutex_);
  self.undeclared_.push_back(name ? name : "(null)");
  return "";
}

void CheckServices::set_error(const char* message) { t_last_error = message ? message : ""; }

void CheckServices::clear_error() { t_last_error.clear(); }

std::string CheckServices::last_error() const { return t_last_error; }

std::vector<std::string> CheckServices::undeclared_settings() const {
  std::lock_guard<std::mutex> lock(undeclared_mutex_);
  return undeclared_;
}

}  // namespace hcomm::tcheck
