// Settings of the verbs transport: declared once (the plugin header lists them
// for hcomm-info) and read through the core's services.
#pragma once

#include <cstdint>
#include <string>

#include "hcomm/plugin/util.hpp"

namespace hcomm::verbs {

inline constexpr hcomm_setting_decl_t kSettings[] = {
    {.name = "HCOMM_IB_HCA",
     .type = HCOMM_SETTING_STRING,
     .default_value = "",
     .doc = "RDMA devices to use: 'mlx5_0:1,mlx5_1' (name prefixes, optional :port), '=' first for exact names, "
            "'^' first to exclude the listed ones; empty: every active port"},
    {.name = "HCOMM_IB_GID_INDEX",
     .type = HCOMM_SETTING_INT,
     .default_value = "-1",
     .doc = "GID table index for RoCE (-1: a RoCE v2 IPv4-mapped GID, else the best other GID)",
     .min = "-1",
     .max = "65535"},
    {.name = "HCOMM_IB_TIMEOUT",
     .type = HCOMM_SETTING_INT,
     .default_value = "18",
     .doc = "RC ack timeout exponent: the QP waits 4.096 us * 2^value before it retransmits",
     .min = "1",
     .max = "31"},
    {.name = "HCOMM_IB_RETRY_CNT",
     .type = HCOMM_SETTING_INT,
     .default_value = "7",
     .doc = "RC retransmissions before a QP fails with a transport error",
     .min = "0",
     .max = "7"},
    {.name = "HCOMM_IB_EAGER_BYTES",
     .type = HCOMM_SETTING_SIZE,
     .default_value = "8K",
     .doc = "messages up to this size travel in pre-posted receive buffers; larger ones by RDMA write "
            "into the posted receive (rendezvous)",
     .min = "0",
     .max = "1M"},  // eager buffers are posted per peer; beyond this they cost more than a rendezvous
    {.name = "HCOMM_IB_CREDITS",
     .type = HCOMM_SETTING_INT,
     .default_value = "32",
     .doc = "receive buffers pre-posted per peer: the messages a sender may have in flight",
     .min = "4",
     .max = "4096"},
    {.name = "HCOMM_IB_REG_CACHE",
     .type = HCOMM_SETTING_SIZE,
     .default_value = "0",
     .doc = "bytes of unused memory registrations kept for reuse (0: deregister when the last transfer "
            "ends); set it only when buffers are not freed while HComm runs"},
    {.name = "HCOMM_IB_IF_ADDR",
     .type = HCOMM_SETTING_STRING,
     .default_value = "",
     .doc = "IPv4 address to listen on for connection set-up (empty: first non-loopback IPv4 interface, "
            "else 127.0.0.1)"},
};

struct Config {
  std::string hca;
  int gid_index = -1;
  int timeout = 18;
  int retry_cnt = 7;
  uint64_t eager_bytes = 8 << 10;
  int credits = 32;
  uint64_t reg_cache_bytes = 0;
  std::string if_addr;

  // Reads the settings, which the core checked against their declared ranges.
  static Config read(const plugin::Services& services);
};

}  // namespace hcomm::verbs
