#include "core/comm/config.hpp"

#include <strings.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>

#include "core/common/error.hpp"
#include "core/common/log.hpp"
#include "core/common/settings.hpp"
#include "core/transport/transport.hpp"

namespace hcomm::comm {

namespace {

// The environment's value when the variable is set, else the field's when
// `field_set`, else the setting's default.
template <class T, class Get>
T pick(const char* variable, bool field_set, const T& field, const std::string& field_text, const char* field_name,
       Get get) {
  if (std::getenv(variable)) {
    if (field_set)
      HCOMM_INFO(INIT, "%s=%s overrides %s = %s of the communicator's hcomm_config_t", variable,
                 settings::raw(variable).c_str(), field_name, field_text.c_str());
    return get(variable);
  }
  return field_set ? field : get(variable);
}

Config::SplitShare split_share_of(int field) {
  return field == HCOMM_SPLIT_SHARE_OFF  ? Config::SplitShare::kOff
         : field == HCOMM_SPLIT_SHARE_ON ? Config::SplitShare::kOn
                                         : Config::SplitShare::kAuto;
}

}  // namespace

Config Config::resolve(const hcomm_config_t* config, const Config* parent) {
  hcomm_config_t c = HCOMM_CONFIG_INITIALIZER;
  if (config) {
    if (config->size < offsetof(hcomm_config_t, chunk_bytes) + sizeof config->chunk_bytes)
      HCOMM_THROW(HCOMM_ERR_INVALID_ARGUMENT,
                  "hcomm_config_t: size is %zu, expected %zu: start from HCOMM_CONFIG_INITIALIZER", config->size,
                  sizeof(hcomm_config_t));
    if (config->version < 1 || config->version > HCOMM_CONFIG_VERSION)
      HCOMM_THROW(HCOMM_ERR_INVALID_ARGUMENT,
                  "hcomm_config_t: version is %u, this library knows 1 to %d: start from HCOMM_CONFIG_INITIALIZER",
                  config->version, HCOMM_CONFIG_VERSION);
    // An older program's struct ends earlier: its missing fields stay unset.
    std::memcpy(&c, config, std::min(config->size, sizeof c));
    c.size = sizeof c;
    if (c.timeout_s == 0)
      HCOMM_THROW(HCOMM_ERR_INVALID_ARGUMENT,
                  "hcomm_config_t: timeout_s is 0; give seconds above 0, or "
                  "a negative value to leave it to HCOMM_TIMEOUT");
    // A field that is set is checked as its variable is, whichever wins.
    if (c.transports) transport::parse_filter(c.transports, "hcomm_config_t.transports");
    if (c.timeout_s > 0) settings::check("HCOMM_TIMEOUT", format("%.17g", c.timeout_s), "hcomm_config_t.timeout_s");
    if (c.chunk_bytes > 0)
      settings::check("HCOMM_CHUNK_BYTES", std::to_string(c.chunk_bytes), "hcomm_config_t.chunk_bytes");
    if (c.split_share < -1 || c.split_share > 2)
      HCOMM_THROW(HCOMM_ERR_INVALID_ARGUMENT,
                  "hcomm_config_t: split_share is %d; give HCOMM_SPLIT_SHARE_OFF (0), _ON (1), _AUTO (2) or -1 (leave "
                  "it to HCOMM_SPLIT_SHARE)",
                  c.split_share);
    if (c.p2p_matching < -1 || c.p2p_matching > 1)
      HCOMM_THROW(HCOMM_ERR_INVALID_ARGUMENT,
                  "hcomm_config_t: p2p_matching is %d; give HCOMM_P2P_MATCHING_EXACT (0), _ANY (1) or -1 (leave it to "
                  "HCOMM_P2P_MATCHING, or to the parent communicator)",
                  c.p2p_matching);
  }
  if (std::getenv("HCOMM_TRANSPORTS")) transport::parse_filter(settings::get_string("HCOMM_TRANSPORTS"));
  const std::string transports = c.transports ? c.transports : "";
  return Config{
      .transports = pick("HCOMM_TRANSPORTS", c.transports != nullptr, transports, "'" + transports + "'", "transports",
                         settings::get_string),
      .timeout_s = pick("HCOMM_TIMEOUT", c.timeout_s > 0, c.timeout_s, format("%g", c.timeout_s), "timeout_s",
                        settings::get_double),
      .chunk_bytes = pick<uint64_t>("HCOMM_CHUNK_BYTES", c.chunk_bytes > 0, c.chunk_bytes,
                                    std::to_string(c.chunk_bytes), "chunk_bytes", settings::get_size),
      .split_share = pick<SplitShare>("HCOMM_SPLIT_SHARE", c.split_share >= 0, split_share_of(c.split_share),
                                      std::to_string(c.split_share), "split_share",
                                      [](const char* variable) {
                                        const std::string v = settings::get_string(variable);
                                        return v == "on" ? SplitShare::kOn
                                                         : v == "off" ? SplitShare::kOff : SplitShare::kAuto;
                                      }),
      // Left unset in a split's config and the environment, its parent's.
      .p2p_matching_any =
          c.p2p_matching < 0 && parent && !std::getenv("HCOMM_P2P_MATCHING")
              ? parent->p2p_matching_any
              : pick<bool>("HCOMM_P2P_MATCHING", c.p2p_matching >= 0, c.p2p_matching == HCOMM_P2P_MATCHING_ANY,
                           std::to_string(c.p2p_matching), "p2p_matching",
                           [](const char* variable) {
                             return strcasecmp(settings::get_string(variable).c_str(), "any") == 0;
                           }),
  };
}

}  // namespace hcomm::comm
