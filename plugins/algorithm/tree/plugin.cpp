// The tree algorithm plugin: k-nomial and double binary trees.
#include <vector>

#include "common/services.hpp"
#include "tree.hpp"

#ifndef HCOMM_ALGORITHM_VERSION
#error "HCOMM_ALGORITHM_VERSION must be defined by the build"
#endif

extern "C" __attribute__((visibility("default"))) const hcomm_plugin_header_t* hcomm_plugin_v1(void) {
  using namespace hcomm::algo;
  static const std::vector<const hcomm_algorithm_desc_t*> algorithms = [] {
    std::vector<const hcomm_algorithm_desc_t*> all;
    for (const auto* family : {&knomial_algorithms(), &double_binary_tree_algorithms()})
      for (const hcomm_algorithm_desc_t& a : *family) all.push_back(&a);
    return all;
  }();
  return plugin_header("tree", HCOMM_ALGORITHM_VERSION, algorithms.data(), algorithms.size());
}
