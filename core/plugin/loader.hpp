// Plugin discovery and loading (Boost.DLL). Plugins are found in the folders of
// HCOMM_PLUGIN_PATH, then beside libhcomm (<libdir>/hcomm, where they are
// installed and where the build tree puts them), then, for the build tree's
// own statically linked programs only, the build tree. The first file of a
// given name wins. Loaded plugins stay loaded for the life of
// the process, so their function pointers stay valid.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "hcomm/plugin/plugin.h"

namespace hcomm::plugin {

struct PluginInfo {
  std::string path;
  std::string file_name;        // libhcomm_<kind>_<name>.so
  hcomm_plugin_kind_t expected_kind;  // from the file name
  std::string expected_name;          // from the file name
  const hcomm_plugin_header_t* header = nullptr;  // set when loaded
  hcomm_result_t status = HCOMM_SUCCESS;
  std::string error;  // why it did not load
  bool tried = false;  // loading was attempted (header or error is set)
  bool loaded() const { return header != nullptr; }
};

const char* kind_name(hcomm_plugin_kind_t kind);

// The folders searched, in order.
std::vector<std::string> search_dirs();

// Loads and checks one plugin file; throws Error(HCOMM_ERR_PLUGIN) whose text
// says which check failed: not found, load failed (the loader's reason),
// symbol missing, ABI unsupported (both versions), kind or name mismatch.
const hcomm_plugin_header_t* load(const std::string& path);

// Every plugin file found in search_dirs(), each name once (process-wide).
// Algorithm and device plugins are loaded when first listed; a transport
// plugin only by load_transport(), so that a process loads no transport
// (nor the libraries it brings, with their signal handlers and threads) that
// HCOMM_TRANSPORTS leaves out. Loaded plugins declare their settings with the
// settings module; those that failed carry their error.
const std::vector<PluginInfo>& discovered();

// The transport plugin of that name (one of discovered()), loaded if it was
// not yet; check loaded() and error.
const PluginInfo& load_transport(const std::string& name);

// The plugins of one kind among discovered(), each loaded if it was not
// yet; check loaded() and error.
std::vector<const PluginInfo*> load_kind(hcomm_plugin_kind_t kind);

// discovered(), with every plugin loaded: what hcomm-info lists.
const std::vector<PluginInfo>& load_all();

}  // namespace hcomm::plugin
