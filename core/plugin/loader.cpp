#include "core/plugin/loader.hpp"

#include <dlfcn.h>

#include <boost/dll/shared_library.hpp>
#include <filesystem>
#include <list>
#include <mutex>
#include <set>

#include "core/common/error.hpp"
#include "core/common/log.hpp"
#include "core/common/settings.hpp"

namespace hcomm::plugin {

namespace fs = std::filesystem;

namespace {

constexpr const char* kPrefix = "libhcomm_";
constexpr const char* kSuffix = ".so";

struct KindName {
  hcomm_plugin_kind_t kind;
  const char* name;
};
constexpr KindName kKinds[] = {
    {HCOMM_PLUGIN_TRANSPORT, "transport"}, {HCOMM_PLUGIN_ALGORITHM, "algorithm"}, {HCOMM_PLUGIN_DEVICE, "device"}};

// libhcomm_<kind>_<name>.so -> kind and name; false for other files.
bool parse_file_name(const std::string& file, hcomm_plugin_kind_t* kind, std::string* name) {
  if (file.rfind(kPrefix, 0) != 0 || file.size() <= std::strlen(kPrefix) + std::strlen(kSuffix) ||
      file.compare(file.size() - std::strlen(kSuffix), std::strlen(kSuffix), kSuffix) != 0)
    return false;
  std::string middle = file.substr(std::strlen(kPrefix), file.size() - std::strlen(kPrefix) - std::strlen(kSuffix));
  for (const auto& k : kKinds) {
    std::string p = std::string(k.name) + "_";
    if (middle.rfind(p, 0) == 0 && middle.size() > p.size()) {
      *kind = k.kind;
      *name = middle.substr(p.size());
      return true;
    }
  }
  return false;
}

// The folder holding libhcomm itself (or the executable, when linked statically).
std::string own_dir() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&own_dir), &info) && info.dli_fname)
    return fs::weakly_canonical(fs::absolute(info.dli_fname)).parent_path().string();
  return "";
}

// Never unloaded: objects destroyed at exit (transports, cached schedules)
// still call into their plugins, whatever order the statics go in.
std::list<boost::dll::shared_library>& libraries() {
  static auto* libs = new std::list<boost::dll::shared_library>;
  return *libs;
}

}  // namespace

const char* kind_name(hcomm_plugin_kind_t kind) {
  for (const auto& k : kKinds)
    if (k.kind == kind) return k.name;
  return "unknown";
}

std::vector<std::string> search_dirs() {
  std::vector<std::string> dirs;
  std::string extra = settings::raw("HCOMM_PLUGIN_PATH");
  size_t start = 0;
  while (start <= extra.size() && !extra.empty()) {
    size_t end = extra.find(':', start);
    if (end == std::string::npos) end = extra.size();
    if (end > start) dirs.push_back(extra.substr(start, end - start));
    start = end + 1;
  }
  std::string own = own_dir();
  if (!own.empty()) dirs.push_back(own + "/" HCOMM_PLUGIN_SUBDIR);
  // The build tree only for the build tree's own programs that link the core
  // statically: an installed libhcomm never loads what a build left behind.
  std::error_code ec;
  if (!own.empty() && fs::equivalent(own, HCOMM_BUILD_RUNTIME_DIR, ec)) dirs.push_back(HCOMM_PLUGIN_BUILD_DIR);
  return dirs;
}

const hcomm_plugin_header_t* load(const std::string& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec))
    HCOMM_THROW(HCOMM_ERR_PLUGIN, "plugin %s: file not found (check HCOMM_PLUGIN_PATH)", path.c_str());
  hcomm_plugin_kind_t kind{};
  std::string name;
  if (!parse_file_name(fs::path(path).filename().string(), &kind, &name))
    HCOMM_THROW(HCOMM_ERR_PLUGIN, "plugin %s: the file name is not libhcomm_<transport|algorithm|device>_<name>.so",
                path.c_str());

  boost::dll::shared_library lib;
  boost::dll::fs::error_code load_ec;
  lib.load(path, boost::dll::load_mode::rtld_lazy | boost::dll::load_mode::rtld_local, load_ec);
  if (load_ec || !lib.is_loaded()) {
    // Boost.DLL clears the loader's message; ask the loader again for its reason.
    void* h = dlopen(path.c_str(), RTLD_LAZY | RTLD_LOCAL);
    std::string reason = h ? load_ec.message() : dlerror();
    if (h) dlclose(h);
    HCOMM_THROW(HCOMM_ERR_PLUGIN, "plugin %s: load failed: %s", path.c_str(), reason.c_str());
  }
  if (!lib.has(HCOMM_PLUGIN_SYMBOL))
    HCOMM_THROW(HCOMM_ERR_PLUGIN, "plugin %s: symbol %s missing (not an HComm plugin, or built for another ABI major)",
                path.c_str(), HCOMM_PLUGIN_SYMBOL);
  auto entry = lib.get<const hcomm_plugin_header_t*()>(HCOMM_PLUGIN_SYMBOL);
  const hcomm_plugin_header_t* h = entry();
  if (!h) HCOMM_THROW(HCOMM_ERR_PLUGIN, "plugin %s: %s returned no header", path.c_str(), HCOMM_PLUGIN_SYMBOL);
  if (h->size < offsetof(hcomm_plugin_header_t, iface) + sizeof(h->iface) || h->abi_major != HCOMM_PLUGIN_ABI_MAJOR)
    HCOMM_THROW(HCOMM_ERR_PLUGIN,
                "plugin %s: ABI version %u.%u unsupported: this HComm supports ABI %d.x (up to %d.%d); rebuild the "
                "plugin against this HComm's headers",
                path.c_str(), h->abi_major, h->abi_minor, HCOMM_PLUGIN_ABI_MAJOR, HCOMM_PLUGIN_ABI_MAJOR,
                HCOMM_PLUGIN_ABI_MINOR);
  if (h->kind != kind)
    HCOMM_THROW(HCOMM_ERR_PLUGIN, "plugin %s: kind mismatch: the file name says %s, the plugin says %s",
                path.c_str(), kind_name(kind), kind_name(h->kind));
  if (!h->name || name != h->name)
    HCOMM_THROW(HCOMM_ERR_PLUGIN, "plugin %s: name mismatch: the file name says '%s', the plugin says '%s'",
                path.c_str(), name.c_str(), h->name ? h->name : "(null)");
  if (!h->iface) HCOMM_THROW(HCOMM_ERR_PLUGIN, "plugin %s: no interface", path.c_str());
  if (h->abi_minor > HCOMM_PLUGIN_ABI_MINOR)
    HCOMM_INFO(PLUGIN, "plugin %s has ABI %u.%u, newer than this HComm's %d.%d: its newer functions are unused",
               path.c_str(), h->abi_major, h->abi_minor, HCOMM_PLUGIN_ABI_MAJOR, HCOMM_PLUGIN_ABI_MINOR);
  libraries().push_back(std::move(lib));
  return h;
}

namespace {

std::mutex& load_mutex() {
  static std::mutex m;
  return m;
}

// Loads the plugin of `info` unless tried already, and declares its settings;
// the caller holds load_mutex().
void load_locked(PluginInfo& info) {
  if (info.tried) return;
  info.tried = true;
  try {
    const hcomm_plugin_header_t* h = load(info.path);
    if (h->num_settings > 0 && hcomm_plugin_setting_size(h) < offsetof(hcomm_setting_decl_t, min))
      HCOMM_THROW(HCOMM_ERR_PLUGIN, "plugin %s: setting_size is %zu: set it to sizeof(hcomm_setting_decl_t)",
                  info.path.c_str(), h->setting_size);
    for (size_t i = 0; i < h->num_settings; ++i) {
      const hcomm_setting_decl_t& s = *hcomm_plugin_setting(h, i);
      auto text = [](const char* t) { return std::string(t ? t : ""); };
      settings::Decl decl{s.name, s.type, text(s.default_value), text(s.doc), info.expected_name};
      if (HCOMM_SETTING_HAS(h, values)) {
        decl.min = text(s.min);
        decl.max = text(s.max);
        for (std::string rest = text(s.values); !rest.empty();) {
          const size_t comma = std::min(rest.find(','), rest.size());
          if (comma > 0) decl.values.push_back(rest.substr(0, comma));
          rest.erase(0, comma + 1);
        }
      }
      settings::declare(decl);
    }
    info.header = h;
    HCOMM_INFO(PLUGIN, "loaded %s plugin %s %s from %s", kind_name(info.expected_kind), h->name, h->version,
               info.path.c_str());
  } catch (const hcomm::Error& e) {
    info.status = e.code();
    info.error = e.what();
    HCOMM_WARN(PLUGIN, "%s", e.what());
  }
}

// Every plugin file found, each name once; algorithm and device plugins are
// loaded at once, transports when first wanted.
std::vector<PluginInfo>& found() {
  static std::once_flag once;
  static std::vector<PluginInfo> list;
  std::call_once(once, [] {
    std::set<std::string> seen;
    for (const std::string& dir : search_dirs()) {
      std::error_code ec;
      std::vector<fs::path> files;
      for (const auto& e : fs::directory_iterator(dir, ec)) files.push_back(e.path());
      std::sort(files.begin(), files.end());
      for (const fs::path& p : files) {
        PluginInfo info;
        info.path = p.string();
        info.file_name = p.filename().string();
        if (!parse_file_name(info.file_name, &info.expected_kind, &info.expected_name) ||
            !seen.insert(info.file_name).second)
          continue;
        list.push_back(std::move(info));
      }
    }
    std::lock_guard lock(load_mutex());
    for (PluginInfo& info : list) {
      if (info.expected_kind == HCOMM_PLUGIN_TRANSPORT)
        settings::declare_dormant(info.expected_name);
      else
        load_locked(info);
    }
  });
  return list;
}

}  // namespace

const std::vector<PluginInfo>& discovered() { return found(); }

const PluginInfo& load_transport(const std::string& name) {
  for (PluginInfo& info : found()) {
    if (info.expected_kind != HCOMM_PLUGIN_TRANSPORT || info.expected_name != name) continue;
    std::lock_guard lock(load_mutex());
    load_locked(info);
    return info;
  }
  HCOMM_THROW(HCOMM_ERR_INTERNAL, "transport plugin %s was not found", name.c_str());
}

// found() first: its first call takes load_mutex itself.
std::vector<const PluginInfo*> load_kind(hcomm_plugin_kind_t kind) {
  std::vector<const PluginInfo*> out;
  std::vector<PluginInfo>& list = found();
  std::lock_guard lock(load_mutex());
  for (PluginInfo& info : list)
    if (info.expected_kind == kind) {
      load_locked(info);
      out.push_back(&info);
    }
  return out;
}

const std::vector<PluginInfo>& load_all() {
  std::vector<PluginInfo>& list = found();
  std::lock_guard lock(load_mutex());
  for (PluginInfo& info : list) load_locked(info);
  return list;
}

}  // namespace hcomm::plugin
