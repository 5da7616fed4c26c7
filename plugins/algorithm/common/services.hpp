// What every algorithm plugin shares: the services the core handed to init,
// and the plugin header that lists a plugin's algorithms. Each plugin links
// this code statically, so each holds its own services.
#pragma once

#include <cstddef>

#include "hcomm/plugin/algorithm.h"
#include "hcomm/plugin/util.hpp"

namespace hcomm::algo {

hcomm::plugin::Services& services();

// The header of an algorithm plugin named `name` that registers `algorithms`
// (static storage); built once, on the first call.
const hcomm_plugin_header_t* plugin_header(const char* name, const char* version,
                                           const hcomm_algorithm_desc_t* const* algorithms, size_t count);

}  // namespace hcomm::algo
