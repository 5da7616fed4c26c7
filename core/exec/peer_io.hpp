// What the executor needs from the communication layer: tagged messages to
// peers by rank, and mapped memory where the ranks share it. The links layer
// (core/links) implements it over transport endpoints; tests implement it in
// memory.
#pragma once

#include <cstddef>
#include <cstdint>

namespace hcomm::exec {

class MappedIO;

class PeerIO {
 public:
  virtual ~PeerIO() = default;
  // A request handle, or nullptr for "retry later". Throw on errors.
  virtual void* isend(int peer, const void* buf, size_t len, uint64_t tag) = 0;
  virtual void* irecv(int peer, void* buf, size_t len, uint64_t tag) = 0;
  // True once complete (the request is then gone), with the bytes the
  // message carried in *bytes.
  virtual bool test(int peer, void* request, size_t* bytes) = 0;
  // Moves data for every request.
  virtual void progress() = 0;
  // Blocks up to timeout_us until progress may be possible.
  virtual void wait(int64_t timeout_us) = 0;
  // Throws HCOMM_ERR_REMOTE if a peer is known to have failed.
  virtual void check_peers() = 0;
  // Every rank's window and buffers, when the ranks map each other's memory
  // (HCOMM_VIEW_MAPPED); nullptr otherwise.
  virtual MappedIO* mapped() { return nullptr; }
};

}  // namespace hcomm::exec
