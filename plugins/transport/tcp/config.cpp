#include "config.hpp"

#include "wire.hpp"

namespace hcomm::tcp {

Config Config::read(const plugin::Services& services) {
  Config c;
  c.nsocks = static_cast<int>(services.setting_int("HCOMM_TCP_NSOCKS"));
  c.split_bytes = services.setting_size("HCOMM_TCP_SPLIT_BYTES");
  c.if_addr = services.setting("HCOMM_TCP_IF_ADDR");
  c.sockbuf = services.setting_size("HCOMM_TCP_SOCKBUF");
  return c;
}

}  // namespace hcomm::tcp
