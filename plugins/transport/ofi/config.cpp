#include "config.hpp"

#include <cctype>

namespace hcomm::ofi {

Config Config::read(const plugin::Services& services) {
  Config c;
  c.provider = services.setting("HCOMM_OFI_PROVIDER");
  for (char ch : c.provider)
    if (std::isspace(static_cast<unsigned char>(ch)))
      HCOMM_PLUGIN_THROW(HCOMM_ERR_CONFIG, "HCOMM_OFI_PROVIDER='%s': give one provider name, such as shm or tcp",
                         c.provider.c_str());

  c.liveness_ms = static_cast<int>(services.setting_int("HCOMM_OFI_LIVENESS_MS"));
  return c;
}

}  // namespace hcomm::ofi
