// The direct algorithm plugin: collectives over memory the ranks of one host
// map (see direct.hpp).
#include <iterator>

#include "common/services.hpp"
#include "direct.hpp"

#ifndef HCOMM_ALGORITHM_VERSION
#error "HCOMM_ALGORITHM_VERSION must be defined by the build"
#endif

extern "C" __attribute__((visibility("default"))) const hcomm_plugin_header_t* hcomm_plugin_v1(void) {
  using namespace hcomm::algo;
  static const hcomm_algorithm_desc_t* const algorithms[] = {&kOneShot, &kTwoShotAllreduce};
  return plugin_header("direct", HCOMM_ALGORITHM_VERSION, algorithms, std::size(algorithms));
}
