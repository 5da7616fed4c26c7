// The tree algorithm plugin: k-nomial and double binary trees.
#include <iterator>

#include "common/services.hpp"
#include "tree.hpp"

#ifndef HCOMM_ALGORITHM_VERSION
#error "HCOMM_ALGORITHM_VERSION must be defined by the build"
#endif

extern "C" __attribute__((visibility("default"))) const hcomm_plugin_header_t* hcomm_plugin_v1(void) {
  using namespace hcomm::algo;
  static const hcomm_algorithm_desc_t* const algorithms[] = {&kBinomialBroadcast};
  return plugin_header("tree", HCOMM_ALGORITHM_VERSION, algorithms, std::size(algorithms));
}
