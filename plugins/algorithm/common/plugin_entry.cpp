#include <vector>

#include "services.hpp"

namespace hcomm::algo {

hcomm::plugin::Services& services() {
  static hcomm::plugin::Services instance;
  return instance;
}

namespace {

hcomm_result_t init(const hcomm_plugin_services_t* core_services) {
  services().set(core_services);
  return HCOMM_SUCCESS;
}

}  // namespace

const hcomm_plugin_header_t* plugin_header(const char* name, const char* version,
                                           const hcomm_algorithm_desc_t* const* algorithms, size_t count) {
  static const std::vector<hcomm_algorithm_desc_t> table(
      [&] {
        std::vector<hcomm_algorithm_desc_t> t;
        for (size_t i = 0; i < count; ++i) t.push_back(*algorithms[i]);
        return t;
      }());
  static const hcomm_algorithm_v1_t iface = {
      .size = sizeof(hcomm_algorithm_v1_t),
      .init = init,
      .num_algorithms = table.size(),
      .algorithms = table.data(),
  };
  static const hcomm_plugin_header_t header = {
      .size = sizeof(hcomm_plugin_header_t),
      .abi_major = HCOMM_PLUGIN_ABI_MAJOR,
      .abi_minor = HCOMM_PLUGIN_ABI_MINOR,
      .kind = HCOMM_PLUGIN_ALGORITHM,
      .name = name,
      .vendor = "HComm",
      .version = version,
      .settings = nullptr,
      .num_settings = 0,
      .iface = &iface,
  };
  return &header;
}

}  // namespace hcomm::algo
