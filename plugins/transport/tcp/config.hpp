// Settings of the TCP transport: declared once (the plugin header lists them
// for hcomm-info) and read through the core's services.
#pragma once

#include <cstdint>
#include <string>

#include "hcomm/plugin/util.hpp"

namespace hcomm::tcp {

inline constexpr int kMaxSockets = 16;  // HCOMM_TCP_NSOCKS's max

inline constexpr hcomm_setting_decl_t kSettings[] = {
    {.name = "HCOMM_TCP_NSOCKS",
     .type = HCOMM_SETTING_INT,
     .default_value = "2",
     .doc = "TCP sockets per peer; messages above HCOMM_TCP_SPLIT_BYTES are striped across them",
     .min = "1",
     .max = "16"},
    {.name = "HCOMM_TCP_SPLIT_BYTES",
     .type = HCOMM_SETTING_SIZE,
     .default_value = "64K",
     .doc = "messages above this size wait until their receive is posted (rendezvous), then travel in pieces of "
            "at least this size spread over the sockets",
     .min = "1",
     .max = "1G"},  // the piece length field of the wire header is 32 bits wide
    {.name = "HCOMM_TCP_IF_ADDR",
     .type = HCOMM_SETTING_STRING,
     .default_value = "",
     .doc = "IPv4 address or interface name to listen on, optionally :port (empty: first non-loopback "
            "IPv4 interface, else 127.0.0.1; port 0 or none: any free port)"},
    {.name = "HCOMM_TCP_SOCKBUF",
     .type = HCOMM_SETTING_SIZE,
     .default_value = "4M",
     .doc = "socket send and receive buffer bytes (0: kernel default with autotuning)",
     .min = "0",
     .max = "1G"},
};

struct Config {
  int nsocks = 2;
  uint64_t split_bytes = 64 << 10;
  std::string if_addr;
  uint64_t sockbuf = 4 << 20;

  // Reads the settings, which the core checked against their declared ranges.
  static Config read(const plugin::Services& services);
};

}  // namespace hcomm::tcp
