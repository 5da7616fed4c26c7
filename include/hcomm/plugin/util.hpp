// C++ helpers for plugin authors (header only, optional): the C boundary
// (exceptions become status codes), logging and settings through the core's
// services. Plugins never link the core.
#pragma once

#include <chrono>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <string>

#include "hcomm/plugin/plugin.h"

namespace hcomm::plugin {

// The typed error a plugin throws inside; `boundary` turns it into a code.
class Error : public std::runtime_error {
 public:
  Error(hcomm_result_t code, const std::string& what) : std::runtime_error(what), code_(code) {}
  hcomm_result_t code() const { return code_; }

 private:
  hcomm_result_t code_;
};

inline std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
inline std::string format(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char small[512];
  int n = std::vsnprintf(small, sizeof small, fmt, ap);
  va_end(ap);
  if (n < 0) return fmt;
  if (static_cast<size_t>(n) < sizeof small) return std::string(small, static_cast<size_t>(n));
  std::string out(static_cast<size_t>(n) + 1, '\0');
  va_start(ap, fmt);
  std::vsnprintf(out.data(), out.size(), fmt, ap);
  va_end(ap);
  out.resize(static_cast<size_t>(n));
  return out;
}

// Bounds what one call site logs where a peer can make it log without limit
// (a flood of connections, each refused with a warning): of each interval,
// the first `burst` lines go out and the rest are only counted; the next line
// that goes out says how many were left out. Thread-safe.
class LogLimiter {
 public:
  explicit LogLimiter(int burst = 5, std::chrono::seconds interval = std::chrono::seconds(10))
      : burst_(burst), interval_(interval) {}

  // Whether this line goes out; if so, *note is what to append to it (empty,
  // or the count of lines left out before it, or that the next ones are).
  bool admit(std::string* note) {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto now = std::chrono::steady_clock::now();
    if (now - window_start_ >= interval_) {
      window_start_ = now;
      in_window_ = 0;
    }
    if (++in_window_ > burst_) {
      ++suppressed_;
      return false;
    }
    note->clear();
    if (suppressed_ > 0)
      *note = format(" (%llu more like this were not logged)", static_cast<unsigned long long>(suppressed_));
    suppressed_ = 0;
    if (in_window_ == burst_)
      *note += format(" (more like this in the next %lld s are counted, not logged)",
                      static_cast<long long>(interval_.count()));
    return true;
  }

 private:
  const int burst_;
  const std::chrono::seconds interval_;
  std::mutex mutex_;
  std::chrono::steady_clock::time_point window_start_{};
  int in_window_ = 0;
  uint64_t suppressed_ = 0;
};

// The services the core handed to init, kept per plugin (one per .so).
class Services {
 public:
  void set(const hcomm_plugin_services_t* s) { s_ = s; }
  bool enabled(hcomm_log_level_t level, const char* subsys) const {
    return s_ && s_->log_enabled(level, subsys);
  }
  void log(hcomm_log_level_t level, const char* subsys, const std::string& msg) const {
    if (enabled(level, subsys)) s_->log(level, subsys, msg.c_str());
  }
  void set_error(const std::string& msg) const {
    if (s_) s_->set_error(msg.c_str());
  }
  std::string setting(const char* name) const { return s_ ? s_->get_setting(name) : ""; }
  // The core's ABI minor version (before 1.13, which added it: 12 or less).
  uint32_t core_abi_minor() const {
    return s_ && s_->size >= offsetof(hcomm_plugin_services_t, abi_minor) + sizeof(s_->abi_minor) ? s_->abi_minor : 12;
  }
  // The core validated declared settings at start, so these parse.
  long long setting_int(const char* name) const { return std::strtoll(setting(name).c_str(), nullptr, 10); }
  unsigned long long setting_size(const char* name) const {
    std::string v = setting(name);
    char* end = nullptr;
    unsigned long long n = std::strtoull(v.c_str(), &end, 10);
    switch (end && *end ? *end : ' ') {
      case 'G': case 'g': n <<= 30; break;
      case 'M': case 'm': n <<= 20; break;
      case 'K': case 'k': n <<= 10; break;
      default: break;
    }
    return n;
  }

 private:
  const hcomm_plugin_services_t* s_ = nullptr;
};

// Runs `body` at the C boundary: exceptions become status codes with text.
template <class F>
hcomm_result_t boundary(const Services& services, F&& body) noexcept {
  try {
    body();
    return HCOMM_SUCCESS;
  } catch (const Error& e) {
    services.set_error(e.what());
    return e.code();
  } catch (const std::bad_alloc&) {
    services.set_error("out of memory");
    return HCOMM_ERR_SYSTEM;
  } catch (const std::exception& e) {
    services.set_error(e.what());
    return HCOMM_ERR_INTERNAL;
  }
}

}  // namespace hcomm::plugin

#define HCOMM_PLUGIN_THROW(code, ...) throw ::hcomm::plugin::Error((code), ::hcomm::plugin::format(__VA_ARGS__))

// services.log of a formatted line, through a LogLimiter of this call site.
#define HCOMM_PLUGIN_LOG_LIMITED(services, level, subsys, ...)                               \
  do {                                                                                       \
    static ::hcomm::plugin::LogLimiter hcomm_limiter_;                                       \
    std::string hcomm_note_;                                                                 \
    if ((services).enabled((level), (subsys)) && hcomm_limiter_.admit(&hcomm_note_))         \
      (services).log((level), (subsys), ::hcomm::plugin::format(__VA_ARGS__) + hcomm_note_); \
  } while (0)
