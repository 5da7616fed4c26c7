// Settings of the UCX transport: declared once (the plugin header lists them
// for hcomm-info) and read through the core's services. UCX's own UCX_*
// variables keep working; these only override them where set.
#pragma once

#include <string>

#include "hcomm/plugin/util.hpp"

namespace hcomm::ucx {

inline constexpr hcomm_setting_decl_t kSettings[] = {
    {.name = "HCOMM_UCX_TLS",
     .type = HCOMM_SETTING_STRING,
     .default_value = "",
     .doc = "UCX transports, as UCX_TLS (e.g. sm,self or tcp,self); empty: UCX_TLS or UCX's default"},
    {.name = "HCOMM_UCX_NET_DEVICES",
     .type = HCOMM_SETTING_STRING,
     .default_value = "",
     .doc = "UCX network devices, as UCX_NET_DEVICES (e.g. lo or mlx5_0:1); empty: UCX_NET_DEVICES or all"},
    {.name = "HCOMM_UCX_KEEPALIVE_MS",
     .type = HCOMM_SETTING_INT,
     .default_value = "250",
     .doc = "milliseconds between UCX keepalive checks of a peer on another host (UCX_KEEPALIVE_INTERVAL); "
            "0: UCX's own interval",
     .min = "0",
     .max = "3600000"},
    {.name = "HCOMM_UCX_HOST_PEER_FAILURE",
     .type = HCOMM_SETTING_INT,
     .default_value = "1",
     .doc = "1: peers of this host get UCX's peer-failure mode, so one that dies mid-transfer is an error here; "
            "0: they are watched through pidfds instead, which keeps UCX's cross-memory attach (large messages "
            "about ten times faster) but lets a peer that dies during a large transfer abort this process (UCX 1.13 "
            "takes the failed copy as fatal)",
     .values = "0,1"},
};

struct Config {
  std::string tls;
  std::string net_devices;
  long long keepalive_ms = 250;
  bool host_peer_failure = true;

  // Reads the settings, which the core checked against their declared ranges.
  static Config read(const plugin::Services& services);
};

}  // namespace hcomm::ucx
