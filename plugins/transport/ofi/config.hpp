// Settings of the libfabric transport: declared once (the plugin header lists
// them for hcomm-info) and read through the core's services.
#pragma once

#include <string>

#include "hcomm/plugin/util.hpp"

namespace hcomm::ofi {

inline constexpr hcomm_setting_decl_t kSettings[] = {
    {.name = "HCOMM_OFI_PROVIDER",
     .type = HCOMM_SETTING_STRING,
     .default_value = "",
     .doc = "libfabric provider for FI_EP_RDM endpoints, e.g. shm or tcp (empty: libfabric's FI_PROVIDER, else "
            "the first provider libfabric offers)"},
    {.name = "HCOMM_OFI_LIVENESS_MS",
     .type = HCOMM_SETTING_INT,
     .default_value = "50",
     .doc = "milliseconds between checks that the processes of peers on this host are alive",
     .min = "1",
     .max = "1000"},
};

struct Config {
  std::string provider;  // empty: libfabric chooses (and applies FI_PROVIDER)
  int liveness_ms = 50;

  // Reads the settings, which the core checked against their declared ranges.
  static Config read(const plugin::Services& services);
};

}  // namespace hcomm::ofi
