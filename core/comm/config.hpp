// A communicator's own settings: hcomm_config_t's fields, each overridden by
// its environment variable when that is set.
#pragma once

#include <cstdint>
#include <string>

#include "hcomm/hcomm.h"

namespace hcomm::comm {

struct Config {
  std::string transports;  // HCOMM_TRANSPORTS
  double timeout_s;        // HCOMM_TIMEOUT
  uint64_t chunk_bytes;    // HCOMM_CHUNK_BYTES
  // HCOMM_SPLIT_SHARE: whether a split's communicator uses its parent's
  // connections (auto: where their transports take any thread).
  enum class SplitShare { kOff, kOn, kAuto } split_share;
  // HCOMM_P2P_MATCHING: point to point matches as MPI does (wildcards,
  // probes, statuses, cancel), rather than by exact peer, tag and count.
  bool p2p_matching_any;

  // From `config` (NULL: every field unset) and the environment; throws
  // HCOMM_ERR_INVALID_ARGUMENT for a struct that is not one (size, version)
  // or a field out of range, HCOMM_ERR_CONFIG for a value that does not parse.
  // `parent`: the communicator a split or dup comes from, whose matching
  // mode an unset p2p_matching takes.
  static Config resolve(const hcomm_config_t* config, const Config* parent = nullptr);
};

}  // namespace hcomm::comm
