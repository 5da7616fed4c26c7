#include "core/common/settings.hpp"

#include <strings.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>

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
  unsigned mask = 0;
  return log::parse_subsys_list(text, &mask);
}

// HCOMM_DEBUG_FILE: a file this process may append to, once %h and %p are
// replaced (the folder exists and is writable, or the file is).
bool writable_log_file(const std::string& pattern) {
  if (pattern.empty()) return true;
  const std::string path = log::file_path(pattern);
  if (access(path.c_str(), F_OK) == 0) return access(path.c_str(), W_OK) == 0;
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  return access(dir.c_str(), W_OK | X_OK) == 0;
}

std::vector<Decl> core_settings() {
  using T = hcomm_setting_type_t;
  auto d = [](const char* name, T type, const char* def, const char* doc) {
    return Decl{name, type, def, doc, "core"};
  };
  auto ranged = [](Decl decl, const char* min, const char* max) {
    decl.min = min;
    decl.max = max;
    return decl;
  };
  auto one_of_values = [](Decl decl, std::vector<std::string> values) {
    decl.values = std::move(values);
    return decl;
  };
  auto grammar = [](Decl decl, std::function<bool(const std::string&)> check, const char* accepted) {
    decl.check = std::move(check);
    decl.accepted = accepted;
    return decl;
  };
  return {
      ranged(d("HCOMM_RANK", HCOMM_SETTING_INT, "", "This process's rank (set by hcomm-run or the launcher)."), "0",
             ""),
      ranged(d("HCOMM_SIZE", HCOMM_SETTING_INT, "", "Number of ranks of the job (set by hcomm-run or the launcher)."),
             "1", ""),
      ranged(d("HCOMM_LOCAL_RANK", HCOMM_SETTING_INT, "", "Rank among the ranks of this host (set by hcomm-run)."), "0",
             ""),
      ranged(d("HCOMM_LOCAL_SIZE", HCOMM_SETTING_INT, "", "Number of ranks on this host (set by hcomm-run)."), "1", ""),
      d("HCOMM_ROOT", HCOMM_SETTING_STRING, "", "Rendezvous address host:port that rank 0 serves."),
      ranged(d("HCOMM_ROOT_FD", HCOMM_SETTING_INT, "-1",
               "A socket already listening on HCOMM_ROOT's port that rank 0 takes over (set by hcomm-run)."),
             "-1", ""),
      d("HCOMM_SECRET", HCOMM_SETTING_STRING, "",
        "The job's secret (32 hex digits) that rendezvous clients prove they know; required by HCOMM_ROOT "
        "launches (hcomm-run sets it)."),
      d("HCOMM_INSECURE", HCOMM_SETTING_BOOL, "0",
        "1: a HCOMM_ROOT launch without HCOMM_SECRET starts anyway, and any process that reaches the rendezvous "
        "can join the job."),
      d("HCOMM_BOOTSTRAP_ADDR", HCOMM_SETTING_STRING, "",
        "IPv4 address the rendezvous of hcomm_get_unique_id listens on; empty: the first non-loopback one."),
      one_of_values(d("HCOMM_BOOTSTRAP", HCOMM_SETTING_STRING, "auto",
                      "How a rank finds its job: auto, pmix (the PMIx server of mpirun or srun), pmi (PMI-1: "
                      "MPICH's mpiexec.hydra) or env (HCOMM_ROOT)."),
                    {"auto", "pmix", "pmi", "env"}),
      // Deadlines are clock durations in nanoseconds: the bound keeps them far from overflow.
      ranged(d("HCOMM_TIMEOUT", HCOMM_SETTING_DOUBLE, "30",
               "Seconds a call may wait on a peer before it fails naming the peer."),
             "0.001", "1000000"),
      d("HCOMM_PLUGIN_PATH", HCOMM_SETTING_STRING, "", "Extra plugin folders, colon separated, searched first."),
      ranged(d("HCOMM_CHUNK_BYTES", HCOMM_SETTING_SIZE, "512K",
               "Pipelining unit: transfers are cut into chunks of about this size."),
             "1K", "1G"),
      ranged(d("HCOMM_STAGING_CHUNK_BYTES", HCOMM_SETTING_SIZE, "4M",
               "Stream-ordered calls on device buffers through host memory run elementwise collectives (allreduce, "
               "broadcast, reduce) in pieces of about this size, so that one piece's copies overlap another's "
               "transfers."),
             "4K", "1G"),
      grammar(d("HCOMM_DEBUG_FILE", HCOMM_SETTING_STRING, "", "Log to this file instead of stderr (%h host, %p pid)."),
              writable_log_file, "a file this process may write (its folder must exist), or empty for stderr"),
      d("HCOMM_TUNE_FILE", HCOMM_SETTING_STRING, "",
        "Link parameters measured by hcomm-perf --calibrate, used by the selector's cost model; with --select, "
        "also each size's fastest algorithm, taken first by communicators of the shape it was measured on."),
      ranged(d("HCOMM_WINDOW_BYTES", HCOMM_SETTING_SIZE, "4M",
               "Each half of the per-rank shared window of ranks that map each other's memory (direct algorithms); 0 "
               "turns it off."),
             "0", "1G"),
      d("HCOMM_AUTO_REGISTER", HCOMM_SETTING_SIZE, "0",
        "Off (0) unless set: buffers of at least this size that peers cannot map are registered on their second "
        "use, their pages moved onto shared memory, where madvise(MADV_DONTNEED) no longer zeroes them: allocators "
        "that take purged memory to be zero (jemalloc) then hand out stale data from calloc."),
      one_of_values(
          d("HCOMM_SPLIT_SHARE", HCOMM_SETTING_STRING, "auto",
            "Whether a communicator split from another (hcomm_comm_split, hcomm_comm_dup) uses its connections, "
            "while one of their 16 tag contexts is free on every member: auto (where their transports may be called "
            "from any thread: shm, tcp), on (also ucx, ofi, verbs: the communicators sharing them are then used by "
            "one thread at a time, as one communicator is), or off (it connects anew)."),
          {"auto", "on", "off"}),
      one_of_values(
          d("HCOMM_P2P_MATCHING", HCOMM_SETTING_STRING, "exact",
            "How point to point matches sends and receives: exact (by peer and tag, a receive of its send's count, "
            "one message each) or any (as MPI: HCOMM_ANY_SOURCE and HCOMM_ANY_TAG, probes, statuses, cancel and "
            "receives with room to spare, through an envelope per message). A split or dup takes its parent's "
            "unless its config sets it."),
          {"exact", "any"}),
      d("HCOMM_TOPO_FILE", HCOMM_SETTING_STRING, "",
        "A topology (JSON, as hcomm-topo --dump writes it) to use instead of discovering hosts, NUMA nodes and NICs."),
      // Its names are checked against the transports found, in one place,
      // transport::parse_filter, when a communicator starts.
      d("HCOMM_TRANSPORTS", HCOMM_SETTING_STRING, "",
        "Transports allowed: 'shm,tcp' (only these) or '^shm' (all but these); empty: all."),
      d("HCOMM_TUNE", HCOMM_SETTING_STRING, "",
        "Algorithm choice per collective and size range, e.g. allreduce:0-64K:@ring#broadcast:@binomial."),
      one_of_values(d("HCOMM_DEBUG", HCOMM_SETTING_STRING, "WARN", "Log level: NONE, WARN, INFO, DEBUG or TRACE."),
                    {"NONE", "WARN", "INFO", "DEBUG", "TRACE"}),
      grammar(d("HCOMM_DEBUG_SUBSYS", HCOMM_SETTING_STRING, "ALL",
                "Subsystems logged: INIT,NET,ALGO,TOPO,EXEC,PLUGIN or ALL; a leading ^ negates."),
              valid_subsys_list,
              "a comma-separated list of INIT, NET, ALGO, TOPO, EXEC, PLUGIN, ALL, optionally after ^"),
      grammar(
          d("HCOMM_STREAM_STORES", HCOMM_SETTING_STRING, "auto",
            "Reductions whose result is at least this size store it non-temporally (past the cache): a size, "
            "auto (twice the per-core L2 cache) or off."),
          [](const std::string& t) {
            uint64_t bytes = 0;
            return t == "auto" || t == "off" || parse_size(t, &bytes);
          },
          "auto, off, or a byte count with an optional K, M or G suffix"),
      one_of_values(d("HCOMM_CACHES_APART", HCOMM_SETTING_STRING, "auto",
                      "Whether the ranks of a host count as under different last-level caches, where a peer's input "
                      "read in place is evicted after reading and large stores into a peer's memory go past the "
                      "caches: auto (peers bound under another last-level cache, as hcomm-topo lists them), on or "
                      "off."),
                    {"auto", "on", "off"}),
  };
}

struct Registry {
  std::mutex mutex;
  std::vector<Decl> decls = core_settings();
  std::set<std::string> dormant;  // prefixes HCOMM_<NAME>_ of plugins found but not loaded
  std::set<std::string> warned;   // unknown names warned about once
};

Registry& registry() {
  static Registry r;
  return r;
}

const Decl* lookup(const std::string& name) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (const Decl& d : r.decls)
    if (d.name == name) return &d;
  return nullptr;
}

const Decl& find(const char* name) {
  if (const Decl* d = lookup(name)) return *d;
  HCOMM_THROW(HCOMM_ERR_INTERNAL, "setting %s is read but was never declared", name);
}

std::string prefix_of(const std::string& plugin_name) {
  std::string prefix = "HCOMM_";
  for (char c : plugin_name) prefix += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return prefix + "_";
}

const char* type_words(hcomm_setting_type_t type) {
  switch (type) {
    case HCOMM_SETTING_INT:
      return "an integer";
    case HCOMM_SETTING_SIZE:
      return "a byte count";
    case HCOMM_SETTING_BOOL: return "0/1, true/false, yes/no or on/off";
    case HCOMM_SETTING_DOUBLE:
      return "a number";
    case HCOMM_SETTING_STRING:
      return "any text";
  }
  return "";
}

bool parses(hcomm_setting_type_t type, const std::string& value) {
  int64_t i;
  uint64_t u;
  bool b;
  double x;
  switch (type) {
    case HCOMM_SETTING_INT: return parse_int(value, &i);
    case HCOMM_SETTING_SIZE: return parse_size(value, &u);
    case HCOMM_SETTING_BOOL: return parse_bool(value, &b);
    case HCOMM_SETTING_DOUBLE: return parse_double(value, &x);
    case HCOMM_SETTING_STRING:
      return true;
  }
  return false;
}

// -1, 0 or 1 as a is below, equal to or above b; both parse as `type`.
int compare(hcomm_setting_type_t type, const std::string& a, const std::string& b) {
  auto order = [](auto x, auto y) { return x < y ? -1 : x > y ? 1 : 0; };
  switch (type) {
    case HCOMM_SETTING_INT: {
      int64_t x = 0, y = 0;
      parse_int(a, &x), parse_int(b, &y);
      return order(x, y);
    }
    case HCOMM_SETTING_SIZE: {
      uint64_t x = 0, y = 0;
      parse_size(a, &x), parse_size(b, &y);
      return order(x, y);
    }
    case HCOMM_SETTING_DOUBLE: {
      double x = 0, y = 0;
      parse_double(a, &x), parse_double(b, &y);
      return order(x, y);
    }
    default:
      return 0;
  }
}

bool ranged_type(hcomm_setting_type_t type) {
  return type == HCOMM_SETTING_INT || type == HCOMM_SETTING_SIZE || type == HCOMM_SETTING_DOUBLE;
}

// Levenshtein distance, two rows.
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

void warn_unknown(const std::string& name) {
  {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    if (!r.warned.insert(name).second) return;
  }
  const std::string near = nearest(name);
  if (!near.empty())
    HCOMM_WARN(INIT, "unknown setting %s (ignored): did you mean %s? hcomm-info lists the settings", name.c_str(),
               near.c_str());
  else
    HCOMM_WARN(INIT, "unknown setting %s (ignored); hcomm-info lists the settings", name.c_str());
}

// Checks the HCOMM_* variables of the environment that `wanted` selects.
void validate_where(const std::function<bool(const std::string&)>& wanted) {
  for (char** e = environ; *e; ++e) {
    std::string entry = *e;
    if (entry.rfind("HCOMM_", 0) != 0) continue;
    size_t eq = entry.find('=');
    std::string name = entry.substr(0, eq), value = eq == std::string::npos ? "" : entry.substr(eq + 1);
    if (!wanted(name)) continue;
    if (const Decl* decl = lookup(name))
      check(*decl, value, name);
    else if (!known(name))
      warn_unknown(name);
  }
}

}  // namespace

const std::vector<Decl>& all() { return registry().decls; }

void declare(const Decl& decl) {
  auto bad = [&](const char* what, const std::string& text) {
    HCOMM_THROW(HCOMM_ERR_PLUGIN, "plugin %s: setting %s: %s '%s' is not %s", decl.owner.c_str(), decl.name.c_str(),
                what, text.c_str(), type_words(decl.type));
  };
  if (!decl.default_value.empty() && !parses(decl.type, decl.default_value)) bad("the default", decl.default_value);
  if (!decl.min.empty() && (!ranged_type(decl.type) || !parses(decl.type, decl.min))) bad("min", decl.min);
  if (!decl.max.empty() && (!ranged_type(decl.type) || !parses(decl.type, decl.max))) bad("max", decl.max);
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.dormant.erase(prefix_of(decl.owner));
  for (const Decl& d : r.decls)
    if (d.name == decl.name) return;
  r.decls.push_back(decl);
}

bool known(const std::string& name) {
  if (lookup(name)) return true;
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (const std::string& prefix : r.dormant)
    if (name.rfind(prefix, 0) == 0) return true;
  return false;
}

void declare_dormant(const std::string& plugin_name) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.dormant.insert(prefix_of(plugin_name));
}

std::string raw(const char* name) {
  const Decl& d = find(name);
  const char* v = std::getenv(name);
  return v ? std::string(v) : d.default_value;
}

int64_t get_int(const char* name) {
  std::string v = get_string(name);
  int64_t out = 0;
  parse_int(v, &out);
  return out;
}

uint64_t get_size(const char* name) {
  std::string v = get_string(name);
  uint64_t out = 0;
  parse_size(v, &out);
  return out;
}

bool get_bool(const char* name) {
  std::string v = get_string(name);
  bool out = false;
  parse_bool(v, &out);
  return out;
}

double get_double(const char* name) {
  std::string v = get_string(name);
  double out = 0;
  parse_double(v, &out);
  return out;
}

std::string get_string(const char* name) {
  std::string v = raw(name);
  check(find(name), v, name);
  return v;
}

std::string accepted(const Decl& d) {
  if (!d.values.empty()) {
    std::string list;
    for (const std::string& v : d.values) list += (list.empty() ? "" : ", ") + v;
    return "one of " + list;
  }
  if (d.type == HCOMM_SETTING_STRING) return d.accepted.empty() ? "any text" : d.accepted;
  std::string text = type_words(d.type);
  if (!d.min.empty() && !d.max.empty())
    text += " from " + d.min + " to " + d.max;
  else if (!d.min.empty())
    text += " of at least " + d.min;
  else if (!d.max.empty())
    text += " of at most " + d.max;
  if (d.type == HCOMM_SETTING_SIZE) text += ", with an optional K, M or G suffix";
  return text;
}

void check(const Decl& d, const std::string& value, const std::string& label) {
  const char* problem = nullptr;
  if (!d.values.empty()) {
    bool listed = false;
    for (const std::string& v : d.values) listed |= strcasecmp(v.c_str(), value.c_str()) == 0;
    if (!listed) problem = "is not accepted";
  } else if (!parses(d.type, value) || (d.check && !d.check(value))) {
    problem = "does not parse";
  } else if ((!d.min.empty() && compare(d.type, value, d.min) < 0) ||
             (!d.max.empty() && compare(d.type, value, d.max) > 0)) {
    problem = "is out of range";
  }
  if (problem)
    HCOMM_THROW(HCOMM_ERR_CONFIG, "%s='%s' %s: expected %s", label.c_str(), value.c_str(), problem,
                accepted(d).c_str());
}

void check(const char* name, const std::string& value, const std::string& label) { check(find(name), value, label); }

void validate() {
  validate_where([](const std::string&) { return true; });
}

void validate(const std::string& owner) {
  const std::string prefix = prefix_of(owner);
  validate_where([&](const std::string& name) { return name.rfind(prefix, 0) == 0; });
}

std::string nearest(const std::string& name) {
  std::string best;
  size_t best_distance = std::string::npos;
  {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    for (const Decl& d : r.decls) {
      const size_t distance = edit_distance(name, d.name);
      if (distance < best_distance) best = d.name, best_distance = distance;
    }
  }
  // Near enough to be a typo: a few edits, more for longer names.
  const size_t tail = name.size() > 6 ? name.size() - 6 : 0;
  return best_distance <= std::max<size_t>(2, tail / 2) ? best : "";
}

// strtoll, strtoull and strtod skip leading blanks and strtoull takes a
// sign ("-1" would read as 2^64-1): a value must start as its type does.
bool parse_int(const std::string& text, int64_t* out) {
  if (text.empty() || !(std::isdigit(static_cast<unsigned char>(text[0])) || text[0] == '-')) return false;
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno || *end) return false;
  *out = v;
  return true;
}

bool parse_size(const std::string& text, uint64_t* out) {
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0]))) return false;
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
  if (text.empty() || !(std::isdigit(static_cast<unsigned char>(text[0])) || text[0] == '-' || text[0] == '.'))
    return false;
  errno = 0;
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (errno || *end || !std::isfinite(v)) return false;
  *out = v;
  return true;
}

}  // namespace hcomm::settings
