// The address blob a rank publishes for this transport: enough for a peer to
// decide that both run on the same host, to attach to the segment and to check
// that both belong to the same communicator.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

namespace hcomm::shm {

// Two processes share memory through /dev/shm only when they run on the same
// kernel (boot id), see the same /dev/shm (mount namespace) and the same pids
// (pid namespace, for liveness checks and CMA). The hostname and the IPC
// namespace tell apart containers that share a kernel. An identity that could
// not be read matches nothing.
struct HostIdentity {
  char boot_id[40];
  char hostname[72];
  uint64_t ipc_ns;
  uint64_t mnt_ns;
  uint64_t pid_ns;

  static const HostIdentity& local();
  bool known() const { return boot_id[0] != '\0'; }
  bool same_host(const HostIdentity& other) const;
};

struct Address {
  uint32_t magic;
  uint32_t version;
  HostIdentity host;
  uint64_t key_check;      // derived from the communicator's key (keyed_check)
  uint64_t probe_address;  // a word holding key_check in the owner's memory: the CMA probe reads it
  int32_t rank;
  int32_t pid;
  uint32_t uid;  // segments are private to their user (mode 0600)
  // Peers of the same user may open this process's /proc/<pid>/fd entries:
  // it is dumpable (prctl PR_SET_DUMPABLE, set-uid programs).
  uint32_t dumpable;
  int32_t segment_fd;  // the owner's descriptor of its segment, opened as /proc/<pid>/fd/<fd>
  uint64_t segment_inode;
  uint64_t segment_device;

  // Copies the blob out after checking its size and magic; `what` names it in errors.
  static Address decode(const void* blob, size_t len, const char* what);
  // Writes the blob; *len is the capacity in, the length out.
  void encode(void* buf, size_t* len) const;
  // Same host, same user, both dumpable: the two can map each other's segments.
  bool can_share_memory_with(const Address& other) const;
};

// A 64-bit value that tells this communicator's segments, FIFOs and CMA probe
// word apart from those of other communicators of the same user (a stale job,
// another communicator of this one): a keyed hash of the key
// (auth::derived_tag), which reveals nothing of it. It is no secret from the
// peers of the same user, who can read this process's memory anyway.
uint64_t keyed_check(const uint8_t (&comm_key)[16]);

}  // namespace hcomm::shm
