#include "config.hpp"

namespace hcomm::ucx {

Config Config::read(const plugin::Services& services) {
  Config c;
  c.tls = services.setting("HCOMM_UCX_TLS");
  c.net_devices = services.setting("HCOMM_UCX_NET_DEVICES");
  c.keepalive_ms = services.setting_int("HCOMM_UCX_KEEPALIVE_MS");
  c.host_peer_failure = services.setting_int("HCOMM_UCX_HOST_PEER_FAILURE") == 1;
  return c;
}

}  // namespace hcomm::ucx
