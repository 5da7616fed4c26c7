// The exchange algorithm plugin: Bruck, pairwise and linear exchanges of
// per-rank blocks.
#include <iterator>

#include "common/services.hpp"
#include "exchange.hpp"

#ifndef HCOMM_ALGORITHM_VERSION
#error "HCOMM_ALGORITHM_VERSION must be defined by the build"
#endif

extern "C" __attribute__((visibility("default"))) const hcomm_plugin_header_t* hcomm_plugin_v1(void) {
  using namespace hcomm::algo;
  static const hcomm_algorithm_desc_t* const algorithms[] = {
      &kBruckAllgather, &kBruckAlltoall,  &kPairwiseAlltoall, &kPairwiseAlltoallv,   &kLinearGather,
      &kLinearScatter,  &kLinearAlltoall, &kLinearAlltoallv,  &kLinearReduceScatter, &kLinearReduceScatterV};
  return plugin_header("exchange", HCOMM_ALGORITHM_VERSION, algorithms, std::size(algorithms));
}
