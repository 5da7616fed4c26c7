// The bytes of hcomm_unique_id_t: where the rendezvous listens and the job's
// secret, behind a magic that tells a real id from stray bytes.
#pragma once

#include <cstdint>

#include "core/bootstrap/bootstrap.hpp"
#include "core/bootstrap/socket.hpp"
#include "hcomm/hcomm.h"

namespace hcomm::bootstrap {

struct UniqueId {
  Endpoint root;
  Secret secret{};
};

void encode_unique_id(const UniqueId& fields, hcomm_unique_id_t* id);
// False when the bytes lack the magic (or come from another protocol version).
bool decode_unique_id(const hcomm_unique_id_t& id, UniqueId* fields);

// Starts a rendezvous on `ip` (network byte order; an ephemeral port) with a
// fresh random secret and describes it in *id. make_unique_id picks the
// address; this form lets a caller choose it.
void make_unique_id_on(uint32_t ip, double timeout_s, hcomm_unique_id_t* id);

}  // namespace hcomm::bootstrap
