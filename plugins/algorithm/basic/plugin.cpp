// The basic algorithm plugin: ring allreduce, binomial broadcast and
// dissemination barrier, over the peer patterns in patterns.hpp.
#include <iterator>

#include "basic.hpp"

#ifndef HCOMM_BASIC_VERSION
#error "HCOMM_BASIC_VERSION must be defined by the build"
#endif

namespace hcomm::basic {

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

}  // namespace hcomm::basic

extern "C" __attribute__((visibility("default"))) const hcomm_plugin_header_t* hcomm_plugin_v1(void) {
  using namespace hcomm::basic;
  static const hcomm_algorithm_desc_t algorithms[] = {kRingAllreduce, kBinomialBroadcast, kDisseminationBarrier};
  static const hcomm_algorithm_v1_t iface = {
      .size = sizeof(hcomm_algorithm_v1_t),
      .init = init,
      .num_algorithms = std::size(algorithms),
      .algorithms = algorithms,
  };
  static const hcomm_plugin_header_t header = {
      .size = sizeof(hcomm_plugin_header_t),
      .abi_major = HCOMM_PLUGIN_ABI_MAJOR,
      .abi_minor = HCOMM_PLUGIN_ABI_MINOR,
      .kind = HCOMM_PLUGIN_ALGORITHM,
      .name = "basic",
      .vendor = "HComm",
      .version = HCOMM_BASIC_VERSION,
      .settings = nullptr,
      .num_settings = 0,
      .iface = &iface,
  };
  return &header;
}
