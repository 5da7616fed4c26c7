// The services table the core hands to every plugin's init.
#pragma once

#include "hcomm/plugin/plugin.h"

namespace hcomm::plugin {

const hcomm_plugin_services_t* services();

}  // namespace hcomm::plugin
