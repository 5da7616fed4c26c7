// The recursive algorithm plugin: recursive doubling, halving-doubling and dissemination.
#include <iterator>

#include "common/services.hpp"
#include "recursive.hpp"

#ifndef HCOMM_ALGORITHM_VERSION
#error "HCOMM_ALGORITHM_VERSION must be defined by the build"
#endif

extern "C" __attribute__((visibility("default"))) const hcomm_plugin_header_t* hcomm_plugin_v1(void) {
  using namespace hcomm::algo;
  static const hcomm_algorithm_desc_t* const algorithms[] = {
      &kRecursiveDoublingAllreduce,   &kRecursiveDoublingAllgather,    &kHalvingDoublingAllreduce,
      &kHalvingDoublingReduceScatter, &kHalvingDoublingReduceScatterV, &kDisseminationBarrier,
      &kRecursiveDoublingScan,        &kRecursiveDoublingExscan};
  return plugin_header("recursive", HCOMM_ALGORITHM_VERSION, algorithms, std::size(algorithms));
}
