// The hierarchical algorithm plugin: two-level schedules for communicators
// that span several hosts.
#include <iterator>

#include "common/services.hpp"
#include "hierarchical.hpp"

#ifndef HCOMM_ALGORITHM_VERSION
#error "HCOMM_ALGORITHM_VERSION must be defined by the build"
#endif

extern "C" __attribute__((visibility("default"))) const hcomm_plugin_header_t* hcomm_plugin_v1(void) {
  using namespace hcomm::algo;
  static const hcomm_algorithm_desc_t* const algorithms[] = {
      &kHierRingAllreduce, &kHierLeaderAllreduce, &kHierBroadcast,     &kHierReduce,
      &kHierAllgather,     &kHierAllgatherv,      &kHierReduceScatter, &kHierReduceScatterV,
  };
  return plugin_header("hierarchical", HCOMM_ALGORITHM_VERSION, algorithms, std::size(algorithms));
}
