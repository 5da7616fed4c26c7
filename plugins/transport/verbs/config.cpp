#include "config.hpp"

namespace hcomm::verbs {

Config Config::read(const plugin::Services& services) {
  Config c;
  c.hca = services.setting("HCOMM_IB_HCA");
  c.gid_index = static_cast<int>(services.setting_int("HCOMM_IB_GID_INDEX"));
  c.timeout = static_cast<int>(services.setting_int("HCOMM_IB_TIMEOUT"));
  c.retry_cnt = static_cast<int>(services.setting_int("HCOMM_IB_RETRY_CNT"));
  c.credits = static_cast<int>(services.setting_int("HCOMM_IB_CREDITS"));
  c.eager_bytes = services.setting_size("HCOMM_IB_EAGER_BYTES");
  c.reg_cache_bytes = services.setting_size("HCOMM_IB_REG_CACHE");
  c.if_addr = services.setting("HCOMM_IB_IF_ADDR");
  return c;
}

}  // namespace hcomm::verbs
