#include "plugin_library.hpp"

#include <dlfcn.h>
#include <sys/stat.h>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <set>
#include <utility>

#include "failure.hpp"

namespace hcomm::tcheck {

namespace {

constexpr const char* kFilePrefix = "libhcomm_transport_";
constexpr const char* kFileSuffix = ".so";

struct MandatoryFunction {
  const char* name;
  size_t offset;
};

#define TCHECK_MANDATORY(fn) \
  MandatoryFunction { #fn, offsetof(hcomm_transport_v1_t, fn) }
constexpr MandatoryFunction kMandatory[] = {
    TCHECK_MANDATORY(init),     TCHECK_MANDATORY(finalize), TCHECK_MANDATORY(properties), TCHECK_MANDATORY(open),
    TCHECK_MANDATORY(close),    TCHECK_MANDATORY(address),  TCHECK_MANDATORY(score),      TCHECK_MANDATORY(connect),
    TCHECK_MANDATORY(ep_ready), TCHECK_MANDATORY(ep_close), TCHECK_MANDATORY(isend),      TCHECK_MANDATORY(irecv),
    TCHECK_MANDATORY(test),     TCHECK_MANDATORY(progress),
};
#undef TCHECK_MANDATORY

// Every mandatory function must lie inside the size the plugin reports.
constexpr size_t kMandatoryBytes = offsetof(hcomm_transport_v1_t, progress) + sizeof(void*);

bool all_of_chars(const std::string& s, int (*accept)(int)) {
  for (char c : s)
    if (!accept(static_cast<unsigned char>(c)) && c != '_') return false;
  return !s.empty();
}

int lower_or_digit(int c) { return std::islower(c) || std::isdigit(c); }
int upper_or_digit(int c) { return std::isupper(c) || std::isdigit(c); }

bool parses_as(hcomm_setting_type_t type, const std::string& text) {
  const char* s = text.c_str();
  char* end = nullptr;
  switch (type) {
    case HCOMM_SETTING_INT:
      std::strtoll(s, &end, 10);
      return !text.empty() && *end == '\0';
    case HCOMM_SETTING_SIZE:
      std::strtoull(s, &end, 10);
      return end != s && (*end == '\0' || (std::strchr("KMGkmg", *end) && end[1] == '\0'));
    case HCOMM_SETTING_BOOL:
      for (const char* word : {"0", "1", "true", "false", "yes", "no", "on", "off"})
        if (text == word) return true;
      return false;
    case HCOMM_SETTING_DOUBLE: {
      double v = std::strtod(s, &end);
      return !text.empty() && *end == '\0' && std::isfinite(v);
    }
    case HCOMM_SETTING_STRING:
      return true;
  }
  return false;
}

std::string base_name(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

PluginLibrary::PluginLibrary(const std::string& path) {
  open(path);
  if (!header_) return;
  check_header(path);
  check_settings();
  check_interface();
}

void PluginLibrary::open(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    problem(format("%s: no such file (%s)", path.c_str(), std::strerror(errno)));
    return;
  }
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    problem(format("dlopen failed: %s", ::dlerror()));
    return;
  }
  auto entry = reinterpret_cast<hcomm_plugin_v1_fn>(::dlsym(handle, HCOMM_PLUGIN_SYMBOL));
  if (!entry) {
    problem(format("symbol %s missing: the plugin must export it with C linkage and default visibility",
                   HCOMM_PLUGIN_SYMBOL));
    return;
  }
  header_ = entry();
  if (!header_) problem(format("%s() returned NULL", HCOMM_PLUGIN_SYMBOL));
}

void PluginLibrary::check_header(const std::string& path) {
  const hcomm_plugin_header_t& h = *header_;
  if (h.size < sizeof(hcomm_plugin_header_t)) {
    problem(format("header size %zu is smaller than ABI %d.0's %zu bytes", h.size, HCOMM_PLUGIN_ABI_MAJOR,
                   sizeof(hcomm_plugin_header_t)));
    header_ = nullptr;  // the fields below may lie outside what the plugin built
    return;
  }
  if (h.abi_major != HCOMM_PLUGIN_ABI_MAJOR)
    problem(format("ABI major %u, this check supports %d", h.abi_major, HCOMM_PLUGIN_ABI_MAJOR));
  if (h.kind != HCOMM_PLUGIN_TRANSPORT)
    problem(format("kind %d, expected HCOMM_PLUGIN_TRANSPORT (%d)", static_cast<int>(h.kind),
                   static_cast<int>(HCOMM_PLUGIN_TRANSPORT)));
  std::string name = h.name ? h.name : "";
  if (name.empty()) {
    problem("name is NULL or empty");
  } else {
    if (!all_of_chars(name, lower_or_digit))
      problem(format("name \"%s\" has characters outside [a-z0-9_]", name.c_str()));
    std::string expected_file = kFilePrefix + name + kFileSuffix;
    if (base_name(path) != expected_file)
      problem(format("file name %s does not match the plugin's name \"%s\" (expected %s)", base_name(path).c_str(),
                     name.c_str(), expected_file.c_str()));
  }
  if (!h.vendor) problem("vendor is NULL");
  if (!h.version || !*h.version) problem("version is NULL or empty");
  if (!h.iface) problem("iface is NULL");
}

void PluginLibrary::check_settings() {
  if (!header_) return;
  const hcomm_plugin_header_t& h = *header_;
  if (h.num_settings > 0 && !h.settings) {
    problem(format("num_settings is %zu but settings is NULL", h.num_settings));
    return;
  }
  std::set<std::string> seen;
  for (size_t i = 0; i < h.num_settings; ++i) {
    const hcomm_setting_decl_t& d = *hcomm_plugin_setting(&h, i);
    std::string name = d.name ? d.name : "";
    std::string where = format("setting %zu (%s)", i, name.empty() ? "no name" : name.c_str());
    if (name.rfind("HCOMM_", 0) != 0 || !all_of_chars(name, upper_or_digit))
      problem(where + ": name must be HCOMM_ followed by [A-Z0-9_]");
    if (!seen.insert(name).second) problem(where + ": declared twice");
    if (d.type < HCOMM_SETTING_INT || d.type > HCOMM_SETTING_STRING)
      problem(format("%s: unknown type %d", where.c_str(), static_cast<int>(d.type)));
    else if (!d.default_value)
      problem(where + ": default is NULL");
    else if (!parses_as(d.type, d.default_value))
      problem(format("%s: default \"%s\" does not parse as its type", where.c_str(), d.default_value));
    if (!d.doc || !*d.doc) problem(where + ": doc is NULL or empty");
  }
}

void PluginLibrary::check_interface() {
  if (!header_ || !header_->iface || header_->kind != HCOMM_PLUGIN_TRANSPORT) return;
  const auto* api = static_cast<const hcomm_transport_v1_t*>(header_->iface);
  if (api->size < kMandatoryBytes) {
    problem(format("iface size %zu does not cover the mandatory functions (%zu bytes)", api->size, kMandatoryBytes));
    return;
  }
  bool complete = true;
  for (const MandatoryFunction& fn : kMandatory) {
    void* pointer = nullptr;
    std::memcpy(&pointer, reinterpret_cast<const char*>(api) + fn.offset, sizeof pointer);
    if (!pointer) {
      problem(format("mandatory function %s is NULL", fn.name));
      complete = false;
    }
  }
  check_memory_functions(*api);
  if (complete && problems_.empty()) api_ = api;
}

// The mapped-memory functions of ABI 1.1 come all together or not at all.
void PluginLibrary::check_memory_functions(const hcomm_transport_v1_t& api) {
  const std::pair<const char*, bool> functions[] = {
      {"mem_alloc", HCOMM_IFACE_HAS(&api, mem_alloc)},     {"mem_register", HCOMM_IFACE_HAS(&api, mem_register)},
      {"mem_release", HCOMM_IFACE_HAS(&api, mem_release)}, {"mem_map", HCOMM_IFACE_HAS(&api, mem_map)},
      {"mem_unmap", HCOMM_IFACE_HAS(&api, mem_unmap)}};
  std::string set, missing;
  for (const auto& [name, present] : functions) {
    std::string& list = present ? set : missing;
    list += (list.empty() ? "" : ", ") + std::string(name);
  }
  if (!set.empty() && !missing.empty())
    problem(format("the mapped-memory functions come all together or not at all: %s set, %s NULL", set.c_str(),
                   missing.c_str()));
}

void PluginLibrary::require_usable() const {
  if (usable()) return;
  std::string text;
  for (const std::string& p : problems_) text += (text.empty() ? "" : "; ") + p;
  throw CheckFailure(text);
}

std::string PluginLibrary::summary() const {
  if (!usable()) return "";
  const hcomm_plugin_header_t& h = *header_;
  return format("%s %s (%s), ABI %u.%u, %zu settings, wait: %s, mapped memory: %s%s", h.name, h.version, h.vendor,
                h.abi_major, h.abi_minor, h.num_settings, has_wait() ? "yes" : "no", maps_memory() ? "yes" : "no",
                copies_by_address() ? ", copies by address: yes" : "");
}

}  // namespace hcomm::tcheck
