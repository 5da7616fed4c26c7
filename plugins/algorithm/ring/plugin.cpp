// The ring algorithm plugin: pipelined ring and chain schedules.
#include <iterator>

#include "common/services.hpp"
#include "ring.hpp"

#ifndef HCOMM_ALGORITHM_VERSION
#error "HCOMM_ALGORITHM_VERSION must be defined by the build"
#endif

extern "C" __attribute__((visibility("default"))) const hcomm_plugin_header_t* hcomm_plugin_v1(void) {
  using namespace hcomm::algo;
  static const hcomm_algorithm_desc_t* const algorithms[] = {
      &kRingAllreduce, &kRingAllgather, &kRingAllgatherv, &kRingReduceScatter, &kRingReduceScatterV,
      &kRingBroadcast, &kRingReduce,    &kRingScan,       &kRingExscan,
  };
  return plugin_header("ring", HCOMM_ALGORITHM_VERSION, algorithms, std::size(algorithms));
}
