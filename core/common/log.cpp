#include "core/common/log.hpp"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>

#include "core/common/error.hpp"
#include "core/common/settings.hpp"

namespace hcomm::log {

namespace {

struct Names {
  unsigned bit;
  const char* name;
};
constexpr Names kSubsys[] = {{INIT, "INIT"}, {NET, "NET"},   {ALGO, "ALGO"},
                             {TOPO, "TOPO"}, {EXEC, "EXEC"}, {PLUGIN, "PLUGIN"}};
constexpr const char* kLevelNames[] = {"NONE", "WARN", "INFO", "DEBUG", "TRACE"};

// Parsed once from the settings, which were validated before first use.
struct Config {
  hcomm_log_level_t level = HCOMM_LOG_WARN;
  unsigned subsys = ALL;
  FILE* out = stderr;
  std::string host;
  Config() {
    char name[256] = {};
    gethostname(name, sizeof name - 1);
    host = name;
    std::string lv = settings::raw("HCOMM_DEBUG");
    for (int i = 0; i <= HCOMM_LOG_TRACE; ++i)
      if (strcasecmp(lv.c_str(), kLevelNames[i]) == 0) level = static_cast<hcomm_log_level_t>(i);
    if (!parse_subsys_list(settings::raw("HCOMM_DEBUG_SUBSYS"), &subsys)) subsys = ALL;
    std::string file = settings::raw("HCOMM_DEBUG_FILE");
    if (!file.empty())
      if (FILE* f = std::fopen(file_path(file).c_str(), "a")) out = f;
  }
};

Config& config() {
  static Config c;
  return c;
}

std::mutex g_write_mutex;

}  // namespace

std::string file_path(const std::string& pattern) {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  std::string path;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '%' && i + 1 < pattern.size() && (pattern[i + 1] == 'h' || pattern[i + 1] == 'p'))
      path += pattern[++i] == 'h' ? std::string(host) : std::to_string(getpid());
    else
      path += pattern[i];
  }
  return path;
}

bool parse_subsys_list(const std::string& text, unsigned* out) {
  if (text.empty()) return *out = ALL, true;
  const bool negate = !text.empty() && text[0] == '^';
  unsigned mask = 0;
  size_t start = negate ? 1 : 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(start, end - start);
    const unsigned bit = item == "ALL" ? static_cast<unsigned>(ALL) : subsys_from_name(item.c_str());
    if (bit == 0) return false;
    mask |= bit;
    start = end + 1;
  }
  *out = negate ? (ALL & ~mask) : mask;
  return true;
}

unsigned subsys_from_name(const char* name) {
  for (const auto& s : kSubsys)
    if (strcasecmp(name, s.name) == 0) return s.bit;
  return 0;
}

bool enabled(hcomm_log_level_t level, unsigned subsys) {
  const Config& c = config();
  return level <= c.level && (c.subsys & subsys) != 0;
}

void write(hcomm_log_level_t level, unsigned subsys, const std::string& message) {
  const Config& c = config();
  const char* sub = "CORE";
  for (const auto& s : kSubsys)
    if (s.bit == subsys) sub = s.name;
  const int rank = detail::t_rank >= 0 ? detail::t_rank : detail::g_first_rank.load(std::memory_order_relaxed);
  std::string rank_text = rank >= 0 ? std::to_string(rank) : "?";
  std::lock_guard<std::mutex> lock(g_write_mutex);
  std::fprintf(c.out, "%s:%d:%s HCOMM %s %s %s\n", c.host.c_str(), static_cast<int>(getpid()), rank_text.c_str(),
               kLevelNames[level], sub, message.c_str());
  std::fflush(c.out);
}

namespace detail {

void note_first_rank(int rank) {
  int none = -1;
  g_first_rank.compare_exchange_strong(none, rank, std::memory_order_relaxed);
}

}  // namespace detail

}  // namespace hcomm::log
