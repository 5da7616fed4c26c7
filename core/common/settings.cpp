#include "core/common/settings.hpp"

#include <strings.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "core/common/error.hpp"
#include "core/common/log.hpp"

extern char** environ;

namespace hcomm::settings {

namespace {

bool one_of(const std::string& text, std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (strcasecmp(text.c_str(), n) == 0) return true;
  return false;
}

bool valid_subsys_list(const std::string& text) {
  size_t start = !text.empty() && text[0] == '^' ? 1 : 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    std::string item = text.substr(start, end - start);
    if (item != "ALL" && log::subsys_from_name(item.c_str()) == 0) return false;
    start = end + 1;
  }
  return true;
}

std::vector<Decl> core_settings() {
  using T = hcomm_setting_type_t;
  auto d = [](const char* name, T type, const char* def, const char* doc) {
    return Decl{name, type, def, doc, "core"};
  };
  std::vector<Decl> v = {
      d("HCOMM_RANK", HCOMM_SETTING_INT, "", "This process's rank (set by hcomm-run or the launcher)."),
      d("HCOMM_SIZE", HCOMM_SETTING_INT, "", "Number of ranks of the job (set by hcomm-run or the launcher)."),
      d("HCOMM_LOCAL_RANK", HCOMM_SETTING_INT, "", "Rank among the ranks of this host (set by hcomm-run)."),
      d("HCOMM_LOCAL_SIZE", HCOMM_SETTING_INT, "", "Number of ranks on this host (set by hcomm-run)."),
      d("HCOMM_ROOT", HCOMM_SETTING_STRING, "", "Rendezvous address host:port that rank 0 serves."),
      d("HCOMM_ROOT_FD", HCOMM_SETTING_INT, "-1",
        "A socket already listening on HCOMM_ROOT's port that rank 0 takes over (set by hcomm-run)."),
      d("HCOMM_SECRET", HCOMM_SETTING_STRING, "", "The job's secret (32 hex digits) that rendezvous clients present."),
      d("HCOMM_BOOTSTRAP_ADDR", HCOMM_SETTING_STRING, "",
        "IPv4 address the rendezvous of hcomm_get_unique_id listens on; empty: the first non-loopback one."),
      d("HCOMM_BOOTSTRAP", HCOMM_SETTING_STRING, "auto",
        "How a rank finds its job: auto, pmix (the PMIx server of mpirun or srun) or env (HCOMM_ROOT)."),
      d("HCOMM_TIMEOUT", HCOMM_SETTING_DOUBLE, "30",
        "Seconds a call may wait on a peer before it fails naming the peer."),
      d("HCOMM_PLUGIN_PATH", HCOMM_SETTING_STRING, "", "Extra plugin folders, colon separated, searched first."),
      d("HCOMM_CHUNK_BYTES", HCOMM_SETTING_SIZE, "512K",
        "Pipelining unit: transfers are cut into chunks of about this size."),
      d("HCOMM_DEBUG_FILE", HCOMM_SETTING_STRING, "", "Log to this file instead of stderr (%h host, %p pid)."),
      d("HCOMM_TUNE_FILE", HCOMM_SETTING_STRING, "",
        "Link parameters measured by hcomm-perf --calibrate, used by the selector's cost model; with --select, "
        "also each size's fastest algorithm, taken first by communicators of the shape it was measured on."),
      d("HCOMM_WINDOW_BYTES", HCOMM_SETTING_SIZE, "4M",
        "Each half of the per-rank shared window of ranks that map each other's memory (direct algorithms); 0 turns "
        "it off."),
      d("HCOMM_AUTO_REGISTER", HCOMM_SETTING_SIZE, "0",
        "Off (0) unless set: buffers of at least this size that peers cannot map are registered on their second "
        "use, their pages moved onto shared memory, where madvise(MADV_DONTNEED) no longer zeroes them: allocators "
        "that take purged memory to be zero (jemalloc) then hand out stale data from calloc."),
      d("HCOMM_TOPO_FILE", HCOMM_SETTING_STRING, "",
        "A topology (JSON, as hcomm-topo --dump writes it) to use instead of discovering hosts, NUMA nodes and NICs."),
  };
  Decl transports = d("HCOMM_TRANSPORTS", HCOMM_SETTING_STRING, "",
                      "Transports allowed: 'shm,tcp' (only these) or '^shm' (all but these); empty: all.");
  // Its grammar is checked in one place, transport::parse_filter, when a communicator starts.
  v.push_back(transports);
  v.push_back(d("HCOMM_TUNE", HCOMM_SETTING_STRING, "",
                "Algorithm choice per collective and size range, e.g. allreduce:0-64K:@ring#broadcast:@binomial."));
  Decl debug = d("HCOMM_DEBUG", HCOMM_SETTING_STRING, "WARN", "Log level: NONE, WARN, INFO, DEBUG or TRACE.");
  debug.check = [](const std::string& t) { return one_of(t, {"NONE", "WARN", "INFO", "DEBUG", "TRACE"}); };
  debug.accepted = "NONE, WARN, INFO, DEBUG, TRACE";
  v.push_back(debug);
  Decl subsys = d("HCOMM_DEBUG_SUBSYS", HCOMM_SETTING_STRING, "ALL",
                  "Subsystems logged: INIT,NET,ALGO,TOPO,EXEC,PLUGIN or ALL; a leading ^ negates.");
  subsys.check = valid_subsys_list;
  subsys.accepted = "a comma-separated list of INIT, NET, ALGO, TOPO, EXEC, PLUGIN, ALL, optionally after ^";
  v.push_back(subsys);
  Decl stream = d("HCOMM_STREAM_STORES", HCOMM_SETTING_STRING, "auto",
                  "Reductions whose result is at least this size store it non-temporally (past the cache): a size, "
                  "auto (twice the per-core L2 cache) or off.");
  stream.check = [](const std::string& t) {
    uint64_t bytes = 0;
    return t == "auto" || t == "off" || parse_size(t, &bytes);
  };
  stream.accepted = "auto, off, or a byte count with an optional K, M or G suffix";
  v.push_back(stream);
  Decl apart = d("HCOMM_CACHES_APART", HCOMM_SETTING_STRING, "auto",
                 "Whether the ranks of a host count as under different last-level caches, where a peer's input read "
                 "in place is evicted after reading and large stores into a peer's memory go past the caches: auto "
                 "(peers bound under another last-level cache, as hcomm-topo lists them), on or off.");
  apart.check = [](const std::string& t) { return one_of(t, {"auto", "on", "off"}); };
  apart.accepted = "auto, on, off";
  v.push_back(apart);
  return v;
}

struct Registry {
  std::mutex mutex;
  std::vector<Decl> decls = core_settings();
};

Registry& registry() {
  static Registry r;
  return r;
}

const Decl& find(const char* name) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (const Decl& d : r.decls)
    if (d.name == name) return d;
  HCOMM_THROW(HCOMM_ERR_INTERNAL, "setting %s is read but was never declared", name);
}

const char* accepted_forms(const Decl& d) {
  switch (d.type) {
    case HCOMM_SETTING_INT: return "an integer, e.g. 4";
    case HCOMM_SETTING_SIZE: return "a byte count with an optional K, M or G suffix, e.g. 512K";
    case HCOMM_SETTING_BOOL: return "0/1, true/false, yes/no or on/off";
    case HCOMM_SETTING_DOUBLE: return "a number, e.g. 2.5";
    case HCOMM_SETTING_STRING: return d.accepted.empty() ? "any text" : d.accepted.c_str();
  }
  return "";
}

bool parses(const Decl& d, const std::string& value) {
  int64_t i;
  uint64_t u;
  bool b;
  double x;
  switch (d.type) {
    case HCOMM_SETTING_INT: return parse_int(value, &i);
    case HCOMM_SETTING_SIZE: return parse_size(value, &u);
    case HCOMM_SETTING_BOOL: return parse_bool(value, &b);
    case HCOMM_SETTING_DOUBLE: return parse_double(value, &x);
    case HCOMM_SETTING_STRING: return !d.check || d.check(value);
  }
  return false;
}

[[noreturn]] void bad_value(const Decl& d, const std::string& value) {
  HCOMM_THROW(HCOMM_ERR_CONFIG, "%s='%s' does not parse: expected %s", d.name.c_str(), value.c_str(),
              accepted_forms(d));
}

}  // namespace

const std::vector<Decl>& all() { return registry().decls; }

void declare(const Decl& decl) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (const Decl& d : r.decls)
    if (d.name == decl.name) return;
  r.decls.push_back(decl);
}

std::string raw(const char* name) {
  const Decl& d = find(name);
  const char* v = std::getenv(name);
  return v ? std::string(v) : d.default_value;
}

int64_t get_int(const char* name) {
  std::string v = raw(name);
  int64_t out = 0;
  if (!parse_int(v, &out)) bad_value(find(name), v);
  return out;
}

uint64_t get_size(const char* name) {
  std::string v = raw(name);
  uint64_t out = 0;
  if (!parse_size(v, &out)) bad_value(find(name), v);
  return out;
}

bool get_bool(const char* name) {
  std::string v = raw(name);
  bool out = false;
  if (!parse_bool(v, &out)) bad_value(find(name), v);
  return out;
}

double get_double(const char* name) {
  std::string v = raw(name);
  double out = 0;
  if (!parse_double(v, &out)) bad_value(find(name), v);
  return out;
}

std::string get_string(const char* name) {
  std::string v = raw(name);
  if (!parses(find(name), v)) bad_value(find(name), v);
  return v;
}

void validate() {
  for (char** e = environ; *e; ++e) {
    std::string entry = *e;
    if (entry.rfind("HCOMM_", 0) != 0) continue;
    size_t eq = entry.find('=');
    std::string name = entry.substr(0, eq), value = eq == std::string::npos ? "" : entry.substr(eq + 1);
    const Decl* decl = nullptr;
    {
      Registry& r = registry();
      std::lock_guard<std::mutex> lock(r.mutex);
      for (const Decl& d : r.decls)
        if (d.name == name) decl = &d;
    }
    if (!decl) {
      HCOMM_WARN(INIT, "unknown setting %s (ignored); hcomm-info lists the settings", name.c_str());
    } else if (!parses(*decl, value)) {
      bad_value(*decl, value);
    }
  }
}

bool parse_int(const std::string& text, int64_t* out) {
  if (text.empty()) return false;
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno || *end) return false;
  *out = v;
  return true;
}

bool parse_size(const std::string& text, uint64_t* out) {
  if (text.empty() || text[0] == '-' || text[0] == '+') return false;
  errno = 0;
  char* end = nullptr;
  unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  if (errno || end == text.c_str()) return false;
  int shift = 0;
  if (*end) {
    switch (*end) {
      case 'K': case 'k': shift = 10; break;
      case 'M': case 'm': shift = 20; break;
      case 'G': case 'g': shift = 30; break;
      default: return false;
    }
    ++end;
    if (*end == 'B' || *end == 'b') ++end;
    if (*end) return false;
  }
  if (shift && v > (~0ull >> shift)) return false;
  *out = v << shift;
  return true;
}

bool parse_bool(const std::string& text, bool* out) {
  if (one_of(text, {"1", "true", "yes", "on"})) return *out = true, true;
  if (one_of(text, {"0", "false", "no", "off"})) return *out = false, true;
  return false;
}

bool parse_double(const std::string& text, double* out) {
  if (text.empty()) return false;
  errno = 0;
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (errno || *end || !std::isfinite(v)) return false;
  *out = v;
  return true;
}

}  // namespace hcomm::settings
