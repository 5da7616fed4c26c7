// What hcomm-info prints: the plugins found and every declared setting.
#include <vector>
#include <algorithm>
#include <cstdlib>
#include <deque>
#include <string>

#include "core/algorithm/selector.hpp"
#include "core/common/error.hpp"
#include "core/common/settings.hpp"
#include "core/plugin/loader.hpp"
#include "hcomm/hcomm.h"
#include "hcomm/plugin/algorithm.h"

using namespace hcomm;

namespace {

// Strings handed out live as long as the process.
const char* keep(const std::string& s) {
  static std::deque<std::string> kept;
  return kept.emplace_back(s).c_str();
}

const char* type_name(hcomm_setting_type_t t) {
  switch (t) {
    case HCOMM_SETTING_INT: return "int";
    case HCOMM_SETTING_SIZE: return "size";
    case HCOMM_SETTING_BOOL: return "bool";
    case HCOMM_SETTING_DOUBLE: return "double";
    case HCOMM_SETTING_STRING: return "string";
  }
  return "unknown";
}

std::string algorithms_of(const hcomm_plugin_header_t* h) {
  if (!h || h->kind != HCOMM_PLUGIN_ALGORITHM) return "";
  auto* iface = static_cast<const hcomm_algorithm_v1_t*>(h->iface);
  std::string out;
  if (!HCOMM_IFACE_HAS(iface, algorithms)) return out;
  std::vector<std::string> names;  // one entry per name: an algorithm may have a desc per collective
  for (size_t i = 0; i < iface->num_algorithms; ++i)
    if (std::find(names.begin(), names.end(), iface->algorithms[i].name) == names.end())
      names.emplace_back(iface->algorithms[i].name);
  for (const std::string& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

}  // namespace

extern "C" {

HCOMM_API int hcomm_plugin_count(void) {
  try {
    return static_cast<int>(plugin::load_all().size());
  } catch (const std::exception& e) {
    set_last_error(e.what());
    return 0;
  }
}

HCOMM_API hcomm_result_t hcomm_plugin_get(int index, hcomm_plugin_desc_t* desc) {
  return c_boundary([&] {
    const auto& all = plugin::load_all();
    if (!desc || index < 0 || static_cast<size_t>(index) >= all.size())
      HCOMM_THROW(HCOMM_ERR_INVALID_ARGUMENT, "hcomm_plugin_get: index %d outside 0..%zu, or desc is NULL", index,
                  all.size() ? all.size() - 1 : 0);
    const plugin::PluginInfo& p = all[index];
    const hcomm_plugin_header_t* h = p.header;
    *desc = hcomm_plugin_desc_t{.file = p.path.c_str(),
                                .kind = plugin::kind_name(p.expected_kind),
                                .name = p.expected_name.c_str(),
                                .vendor = h ? h->vendor : nullptr,
                                .version = h ? h->version : nullptr,
                                .abi_major = h ? h->abi_major : 0,
                                .abi_minor = h ? h->abi_minor : 0,
                                .provides = keep(algorithms_of(h)),
                                .status = p.status,
                                .error = p.error.c_str()};
    return HCOMM_SUCCESS;
  });
}

HCOMM_API int hcomm_setting_count(void) {
  try {
    plugin::load_all();  // plugins declare their settings when loaded
    return static_cast<int>(settings::all().size());
  } catch (const std::exception& e) {
    set_last_error(e.what());
    return 0;
  }
}

HCOMM_API hcomm_result_t hcomm_setting_get(int index, hcomm_setting_desc_t* desc) {
  return c_boundary([&] {
    const auto& all = settings::all();
    if (!desc || index < 0 || static_cast<size_t>(index) >= all.size())
      HCOMM_THROW(HCOMM_ERR_INVALID_ARGUMENT, "hcomm_setting_get: index %d outside 0..%zu, or desc is NULL", index,
                  all.size() ? all.size() - 1 : 0);
    const settings::Decl& d = all[index];
    const char* value = std::getenv(d.name.c_str());
    *desc = hcomm_setting_desc_t{.name = d.name.c_str(),
                                 .type = type_name(d.type),
                                 .default_value = d.default_value.c_str(),
                                 .value = value ? keep(value) : nullptr,
                                 .doc = d.doc.c_str(),
                                 .owner = d.owner.c_str()};
    return HCOMM_SUCCESS;
  });
}

HCOMM_API const char* hcomm_setting_accepted(int index) {
  try {
    const auto& all = settings::all();
    if (index < 0 || static_cast<size_t>(index) >= all.size()) {
      set_last_error(format("hcomm_setting_accepted: index %d outside 0..%zu", index, all.size() ? all.size() - 1 : 0));
      return nullptr;
    }
    return keep(settings::accepted(all[index]));
  } catch (const std::exception& e) {
    set_last_error(e.what());
    return nullptr;
  }
}

HCOMM_API hcomm_result_t hcomm_setting_check(int index) {
  return c_boundary([&] {
    const auto& all = settings::all();
    if (index < 0 || static_cast<size_t>(index) >= all.size())
      HCOMM_THROW(HCOMM_ERR_INVALID_ARGUMENT, "hcomm_setting_check: index %d outside 0..%zu", index,
                  all.size() ? all.size() - 1 : 0);
    const settings::Decl& d = all[index];
    if (const char* value = std::getenv(d.name.c_str())) settings::check(d, value, d.name);
    return HCOMM_SUCCESS;
  });
}

HCOMM_API int hcomm_setting_known(const char* name, const char** nearest) {
  try {
    if (nearest) *nearest = nullptr;
    if (!name) {
      set_last_error("hcomm_setting_known: name is NULL");
      return -1;
    }
    plugin::load_all();  // plugins declare their settings when loaded
    if (settings::known(name)) return 1;
    const std::string near = settings::nearest(name);
    if (nearest && !near.empty()) *nearest = keep(near);
    return 0;
  } catch (const std::exception& e) {
    set_last_error(e.what());
    return -1;
  }
}

}  // extern "C"
