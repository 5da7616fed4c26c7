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

  long long liveness = services.setting_int("HCOMM_OFI_LIVENESS_MS");
  if (liveness < 1 || liveness > 1000)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_CONFIG, "HCOMM_OFI_LIVENESS_MS=%lld: give milliseconds from 1 to 1000", liveness);
  c.liveness_ms = static_cast<int>(liveness);
  return c;
}

}  // namespace hcomm::ofi
