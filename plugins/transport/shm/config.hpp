// The transport's settings, declared once (with type, default and doc) and
// read through the core's services.
#pragma once

#include <cstddef>
#include <cstdint>

#include "hcomm/plugin/plugin.h"
#include "hcomm/plugin/util.hpp"

namespace hcomm::shm {

struct Config {
  uint64_t fifo_bytes;     // HCOMM_SHM_FIFO_BYTES, rounded down to whole pages
  bool cma;                // HCOMM_SHM_CMA
  uint64_t cma_threshold;  // HCOMM_SHM_CMA_BYTES

  // Throws HCOMM_ERR_CONFIG naming the setting and the accepted values.
  static Config read(const plugin::Services& services);
};

extern const hcomm_setting_decl_t kSettings[];
extern const size_t kNumSettings;

}  // namespace hcomm::shm
