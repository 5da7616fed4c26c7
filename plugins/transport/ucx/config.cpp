#include "config.hpp"

namespace hcomm::ucx {

namespace {

constexpr long long kMaxKeepaliveMs = 3600 * 1000;

}  // namespace

Config Config::read(const plugin::Services& services) {
  Config c;
  c.tls = services.setting("HCOMM_UCX_TLS");
  c.net_devices = services.setting("HCOMM_UCX_NET_DEVICES");
  c.keepalive_ms = services.setting_int("HCOMM_UCX_KEEPALIVE_MS");
  if (c.keepalive_ms < 0 || c.keepalive_ms > kMaxKeepaliveMs)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_CONFIG,
                       "HCOMM_UCX_KEEPALIVE_MS=%lld: give milliseconds from 1 to %lld, or 0 for UCX's own interval",
                       c.keepalive_ms, kMaxKeepaliveMs);
  const long long host_peer_failure = services.setting_int("HCOMM_UCX_HOST_PEER_FAILURE");
  if (host_peer_failure != 0 && host_peer_failure != 1)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_CONFIG, "HCOMM_UCX_HOST_PEER_FAILURE=%lld: give 1 (safe) or 0 (fast)",
                       host_peer_failure);
  c.host_peer_failure = host_peer_failure == 1;
  return c;
}

}  // namespace hcomm::ucx
