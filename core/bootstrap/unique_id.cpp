#include "core/bootstrap/unique_id.hpp"

#include <sys/random.h>

#include <cerrno>
#include <cstring>

#include "core/bootstrap/root_service.hpp"
#include "core/bootstrap/wire.hpp"
#include "core/common/error.hpp"
#include "core/common/log.hpp"

namespace hcomm::bootstrap {

namespace {

constexpr uint32_t kUniqueIdMagic = 0x48434944;  // "HCID"

struct IdLayout {
  uint32_t magic;
  uint32_t version;
  uint32_t ip;  // network byte order
  uint16_t port;
  uint16_t reserved;
  Secret secret;
};
static_assert(sizeof(IdLayout) <= HCOMM_UNIQUE_ID_BYTES, "the unique id must fit in hcomm_unique_id_t");

Secret random_secret() {
  Secret secret{};
  size_t got = 0;
  while (got < secret.size()) {
    ssize_t n = ::getrandom(secret.data() + got, secret.size() - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) HCOMM_THROW(HCOMM_ERR_SYSTEM, "bootstrap: getrandom() failed: %s", std::strerror(errno));
    got += static_cast<size_t>(n);
  }
  return secret;
}

}  // namespace

void encode_unique_id(const UniqueId& fields, hcomm_unique_id_t* id) {
  IdLayout layout{kUniqueIdMagic, kProtocolVersion, fields.root.ip, fields.root.port, 0, fields.secret};
  std::memset(id, 0, sizeof *id);
  std::memcpy(id->internal, &layout, sizeof layout);
}

bool decode_unique_id(const hcomm_unique_id_t& id, UniqueId* fields) {
  IdLayout layout;
  std::memcpy(&layout, id.internal, sizeof layout);
  if (layout.magic != kUniqueIdMagic || layout.version != kProtocolVersion) return false;
  fields->root = Endpoint{layout.ip, layout.port};
  fields->secret = layout.secret;
  return true;
}

void make_unique_id_on(uint32_t ip, double timeout_s, hcomm_unique_id_t* id) {
  Fd listener = listen_on(Endpoint{ip, 0});
  UniqueId fields{local_endpoint(listener.get()), random_secret()};
  RootOptions options{fields.secret, 0, timeout_s, fields.root.to_string()};
  start_root_service(std::move(listener), options);
  encode_unique_id(fields, id);
  HCOMM_INFO(INIT, "bootstrap: the rendezvous for a new unique id listens at %s", options.address.c_str());
}

}  // namespace hcomm::bootstrap
