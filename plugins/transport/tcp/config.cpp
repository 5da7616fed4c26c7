#include "config.hpp"

#include "wire.hpp"

namespace hcomm::tcp {

namespace {

constexpr uint64_t kMaxSockbuf = 1ull << 30;

}  // namespace

Config Config::read(const plugin::Services& services) {
  Config c;
  long long nsocks = services.setting_int("HCOMM_TCP_NSOCKS");
  if (nsocks < 1 || nsocks > kMaxSockets)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_CONFIG, "HCOMM_TCP_NSOCKS=%lld: give a number of sockets per peer from 1 to %d",
                       nsocks, kMaxSockets);
  c.nsocks = static_cast<int>(nsocks);

  c.split_bytes = services.setting_size("HCOMM_TCP_SPLIT_BYTES");
  if (c.split_bytes < 1 || c.split_bytes > wire::kMaxEagerBytes)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_CONFIG, "HCOMM_TCP_SPLIT_BYTES=%s: give a size from 1 to 1G",
                       services.setting("HCOMM_TCP_SPLIT_BYTES").c_str());

  c.if_addr = services.setting("HCOMM_TCP_IF_ADDR");

  c.sockbuf = services.setting_size("HCOMM_TCP_SOCKBUF");
  if (c.sockbuf > kMaxSockbuf)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_CONFIG, "HCOMM_TCP_SOCKBUF=%s: give a size up to 1G, or 0 for the kernel default",
                       services.setting("HCOMM_TCP_SOCKBUF").c_str());
  return c;
}

}  // namespace hcomm::tcp
