#include "algorithm_plugins.hpp"

#include <dlfcn.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "algorithm_case.hpp"

namespace hcomm::algotest {

namespace {

const hcomm_plugin_services_t kServices = {
    .size = sizeof(hcomm_plugin_services_t),
    .log = [](hcomm_log_level_t, const char*, const char*) {},
    .log_enabled = [](hcomm_log_level_t, const char*) { return 0; },
    .get_setting = [](const char*) { return ""; },
    .set_error = [](const char* message) { plugin_error_text() = message; },
    .abi_minor = HCOMM_PLUGIN_ABI_MINOR,
};

std::vector<std::string> plugin_folders() {
  std::vector<std::string> folders;
  if (const char* path = std::getenv("HCOMM_PLUGIN_PATH")) {
    std::stringstream list(path);
    std::string folder;
    while (std::getline(list, folder, ':'))
      if (!folder.empty()) folders.push_back(folder);
  }
#ifdef HCOMM_PLUGIN_BUILD_DIR
  folders.push_back(HCOMM_PLUGIN_BUILD_DIR);
#endif
  return folders;
}

std::string test_name(const std::string& text) {
  std::string out;
  for (char ch : text) out += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  return out;
}

}  // namespace

std::string& plugin_error_text() {
  static std::string text;
  return text;
}

const AlgorithmPlugins& AlgorithmPlugins::get() {
  static const AlgorithmPlugins plugins;
  return plugins;
}

const hcomm_algorithm_desc_t* AlgorithmPlugins::find(const char* name, hcomm_coll_t coll) const {
  for (const hcomm_plugin_header_t* h : headers_)
    for (size_t i = 0; i < iface(h)->num_algorithms; ++i) {
      const hcomm_algorithm_desc_t& a = iface(h)->algorithms[i];
      if (std::string(a.name) == name && (a.colls & (1u << coll))) return &a;
    }
  return nullptr;
}

AlgorithmPlugins::AlgorithmPlugins() {
  std::map<std::string, std::string> files;  // file name -> first path that holds it
  for (const std::string& folder : plugin_folders()) {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(folder, ec)) {
      const std::string name = entry.path().filename().string();
      if (name.rfind("libhcomm_algorithm_", 0) == 0 && entry.path().extension() == ".so")
        files.emplace(name, entry.path().string());
    }
  }
  if (files.empty()) load_error_ = "no libhcomm_algorithm_*.so found: set HCOMM_PLUGIN_PATH";
  for (const auto& [name, path] : files) load(path);
}

void AlgorithmPlugins::load(const std::string& path) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    load_error_ += "dlopen " + path + ": " + dlerror() + "; ";
    return;
  }
  auto entry = reinterpret_cast<hcomm_plugin_v1_fn>(dlsym(handle, HCOMM_PLUGIN_SYMBOL));
  const hcomm_plugin_header_t* header = entry ? entry() : nullptr;
  if (!header || header->kind != HCOMM_PLUGIN_ALGORITHM || !header->iface) {
    load_error_ += path + " is not an algorithm plugin; ";
    return;
  }
  if (iface(header)->init(&kServices) != HCOMM_SUCCESS) {
    load_error_ += path + ": init failed: " + plugin_error_text() + "; ";
    return;
  }
  headers_.push_back(header);
}

std::vector<const hcomm_algorithm_desc_t*> AlgorithmPlugins::algorithms() const {
  std::vector<const hcomm_algorithm_desc_t*> out;
  for (const hcomm_plugin_header_t* h : headers_)
    for (size_t i = 0; i < iface(h)->num_algorithms; ++i) out.push_back(&iface(h)->algorithms[i]);
  return out;
}

void AlgorithmPlugins::reclaim() const {
  for (const hcomm_plugin_header_t* h : headers_) iface(h)->init(&kServices);
}

std::vector<AlgorithmEntry> algorithm_entries() {
  std::vector<AlgorithmEntry> entries;
  std::set<std::string> ids;
  for (const hcomm_plugin_header_t* h : AlgorithmPlugins::get().headers()) {
    const hcomm_algorithm_v1_t& iface = *AlgorithmPlugins::iface(h);
    for (size_t i = 0; i < iface.num_algorithms; ++i) {
      const hcomm_algorithm_desc_t& desc = iface.algorithms[i];
      for (int bit = 0; bit < HCOMM_NUM_COLLS; ++bit) {
        const CollTraits* traits = coll_traits(static_cast<hcomm_coll_t>(bit));
        if (!(desc.colls & (1u << bit)) || !traits) continue;
        const std::string base = test_name(std::string(h->name) + "_" + desc.name + "_" + traits->name);
        // Two descriptors of one name for one collective: tell them apart.
        std::string id = base;
        for (int k = 2; !ids.insert(id).second; ++k) id = base + "_" + std::to_string(k);
        entries.push_back({.plugin = h, .desc = &desc, .coll = traits->coll, .id = id});
      }
    }
  }
  return entries;
}

}  // namespace hcomm::algotest
