// Logging by level and subsystem (HCOMM_DEBUG, HCOMM_DEBUG_SUBSYS,
// HCOMM_DEBUG_FILE); lines are prefixed with host, pid and rank.
#pragma once

#include <atomic>
#include <string>

#include "core/common/error.hpp"
#include "hcomm/plugin/plugin.h"

namespace hcomm::log {

enum Subsys : unsigned { INIT = 1, NET = 2, ALGO = 4, TOPO = 8, EXEC = 16, PLUGIN = 32, ALL = 63 };

bool enabled(hcomm_log_level_t level, unsigned subsys);
void write(hcomm_log_level_t level, unsigned subsys, const std::string& message);
unsigned subsys_from_name(const char* name);  // 0 when unknown
// "NET,ALGO", "ALL" or "^EXEC" (all but) into *mask, an empty list as ALL;
// false, *mask untouched, when an item is not a subsystem's name.
bool parse_subsys_list(const std::string& text, unsigned* mask);
// HCOMM_DEBUG_FILE's `pattern` with %h replaced by the host name, %p by the pid.
std::string file_path(const std::string& pattern);

// Lines this thread logs while a RankScope lives show its rank: the rank of
// the communicator the thread works for. Other lines show the rank of the
// process's first communicator ("?" before there is one).
// Every call enters one, so it is a store and a load of a thread-local in
// the static TLS block (initial-exec: no lookup of the library's block),
// initialised at compile time (no wrapper call to initialise it first).
namespace detail {
inline constinit thread_local int t_rank __attribute__((tls_model("initial-exec"))) = -1;
inline constinit std::atomic<int> g_first_rank{-1};
void note_first_rank(int rank);
}  // namespace detail

class RankScope {
 public:
  explicit RankScope(int rank) : previous_(detail::t_rank) {
    detail::t_rank = rank;
    if (detail::g_first_rank.load(std::memory_order_relaxed) < 0) [[unlikely]] detail::note_first_rank(rank);
  }
  ~RankScope() { detail::t_rank = previous_; }
  RankScope(const RankScope&) = delete;
  RankScope& operator=(const RankScope&) = delete;

 private:
  int previous_;
};

}  // namespace hcomm::log

#define HCOMM_LOG(level, subsys, ...)                                             \
  do {                                                                            \
    if (::hcomm::log::enabled((level), (subsys)))                                 \
      ::hcomm::log::write((level), (subsys), ::hcomm::format(__VA_ARGS__));       \
  } while (0)
// HCOMM_LOG through a LogLimiter of this call site: for lines that a peer can
// trigger without limit.
#define HCOMM_LOG_LIMITED(level, subsys, ...)                                             \
  do {                                                                                    \
    static ::hcomm::plugin::LogLimiter hcomm_limiter_;                                    \
    std::string hcomm_note_;                                                              \
    if (::hcomm::log::enabled((level), (subsys)) && hcomm_limiter_.admit(&hcomm_note_))   \
      ::hcomm::log::write((level), (subsys), ::hcomm::format(__VA_ARGS__) + hcomm_note_); \
  } while (0)
#define HCOMM_WARN(subsys, ...) HCOMM_LOG(HCOMM_LOG_WARN, ::hcomm::log::subsys, __VA_ARGS__)
#define HCOMM_WARN_LIMITED(subsys, ...) HCOMM_LOG_LIMITED(HCOMM_LOG_WARN, ::hcomm::log::subsys, __VA_ARGS__)
#define HCOMM_INFO(subsys, ...) HCOMM_LOG(HCOMM_LOG_INFO, ::hcomm::log::subsys, __VA_ARGS__)
#define HCOMM_DEBUG(subsys, ...) HCOMM_LOG(HCOMM_LOG_DEBUG, ::hcomm::log::subsys, __VA_ARGS__)
#define HCOMM_TRACE(subsys, ...) HCOMM_LOG(HCOMM_LOG_TRACE, ::hcomm::log::subsys, __VA_ARGS__)
