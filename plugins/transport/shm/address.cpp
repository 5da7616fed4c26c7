#include "address.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>

#include "hcomm/plugin/auth.hpp"
#include "hcomm/plugin/transport.h"
#include "hcomm/plugin/util.hpp"

namespace hcomm::shm {

namespace {

constexpr uint32_t kAddressMagic = 0x4d485348;  // "HSHM"
constexpr uint32_t kAddressVersion = 2;
static_assert(sizeof(Address) <= HCOMM_TRANSPORT_MAX_ADDRESS, "the shm address must fit the bootstrap's slot");

uint64_t namespace_inode(const char* path) {
  struct stat st {};
  return ::stat(path, &st) == 0 ? static_cast<uint64_t>(st.st_ino) : 0;
}

HostIdentity read_local_identity() {
  HostIdentity id{};
  std::ifstream boot("/proc/sys/kernel/random/boot_id");
  std::string boot_id;
  if (std::getline(boot, boot_id)) std::snprintf(id.boot_id, sizeof id.boot_id, "%s", boot_id.c_str());
  if (::gethostname(id.hostname, sizeof id.hostname - 1) != 0) id.hostname[0] = '\0';
  id.ipc_ns = namespace_inode("/proc/self/ns/ipc");
  id.mnt_ns = namespace_inode("/proc/self/ns/mnt");
  id.pid_ns = namespace_inode("/proc/self/ns/pid");
  if (!id.ipc_ns || !id.mnt_ns || !id.pid_ns) id.boot_id[0] = '\0';
  return id;
}

template <size_t N>
bool terminated(const char (&text)[N]) {
  return std::memchr(text, '\0', N) != nullptr;
}

}  // namespace

const HostIdentity& HostIdentity::local() {
  static const HostIdentity id = read_local_identity();
  return id;
}

bool HostIdentity::same_host(const HostIdentity& other) const {
  return known() && other.known() && std::strcmp(boot_id, other.boot_id) == 0 &&
         std::strcmp(hostname, other.hostname) == 0 && ipc_ns == other.ipc_ns && mnt_ns == other.mnt_ns &&
         pid_ns == other.pid_ns;
}

bool Address::can_share_memory_with(const Address& other) const {
  return host.same_host(other.host) && uid == other.uid && dumpable && other.dumpable;
}

Address Address::decode(const void* blob, size_t len, const char* what) {
  if (!blob) HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT, "shm: %s is NULL", what);
  if (len != sizeof(Address))
    HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT,
                       "shm: %s is %zu bytes, a shm address is %zu: pass the blob the peer's shm transport made", what,
                       len, sizeof(Address));
  Address a;
  std::memcpy(&a, blob, sizeof a);
  if (a.magic != kAddressMagic || a.version != kAddressVersion)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT,
                       "shm: %s is not a shm address of version %u (magic %#x, version %u): use the same HComm build "
                       "on every rank",
                       what, kAddressVersion, a.magic, a.version);
  if (!terminated(a.host.boot_id) || !terminated(a.host.hostname))
    HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT, "shm: %s holds an unterminated string", what);
  return a;
}

void Address::encode(void* buf, size_t* len) const {
  if (!buf || !len) HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT, "shm: address: buf and len must not be NULL");
  if (*len < sizeof(Address))
    HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT, "shm: address: the buffer holds %zu bytes, the address needs %zu",
                       *len, sizeof(Address));
  Address a = *this;
  a.magic = kAddressMagic;
  a.version = kAddressVersion;
  std::memcpy(buf, &a, sizeof a);
  *len = sizeof a;
}

uint64_t keyed_check(const uint8_t (&comm_key)[16]) {
  uint64_t check = 0;
  if (!plugin::auth::derived_tag(comm_key, "hcomm shm communicator", &check))
    HCOMM_PLUGIN_THROW(HCOMM_ERR_SYSTEM, "shm: cannot derive the communicator's check value: libcrypto's HMAC failed");
  return check;
}

}  // namespace hcomm::shm
