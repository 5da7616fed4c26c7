// One of transport_bench's two processes: the plugin's context, a net and
// the endpoint to the other process. The two exchange their address blobs
// over a socketpair (the control channel), which also serves as the barrier
// between measurements. Every plugin call goes through the ABI alone.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "plugin_library.hpp"

namespace hcomm::tbench {

// What went wrong, with the plugin's own text where it gave one.
class BenchError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Link {
 public:
  // Connects rank `rank` (0 or 1) to the other through the plugin; a wait on
  // the peer that sees no progress for `timeout_s` seconds fails.
  Link(const tcheck::PluginLibrary& plugin, int rank, int control_fd, double timeout_s);
  ~Link();
  Link(const Link&) = delete;
  Link& operator=(const Link&) = delete;

  // Post one message; a null request (retry later) is retried with progress.
  void* isend(const void* buf, size_t len, uint64_t tag);
  void* irecv(void* buf, size_t len, uint64_t tag);
  // Until every request is done; returns the bytes of the last one.
  size_t wait(void* request);
  void wait_all(std::vector<void*>& requests);
  // Both processes are here; the transport is progressed meanwhile.
  void barrier();

  uint64_t retries() const { return retries_; }

 private:
  template <class F>
  void require(const char* what, F&& call);
  template <class F>
  void* post(const char* what, F&& call);
  void progress();
  void exchange_addresses(std::vector<uint8_t>* peer_address);
  void connect(const std::vector<uint8_t>& peer_address);
  void check_deadline(double since, const char* what) const;

  const hcomm_transport_v1_t& api_;
  int rank_;
  int control_fd_;
  double timeout_s_;
  void* context_ = nullptr;
  void* net_ = nullptr;
  void* endpoint_ = nullptr;
  uint64_t retries_ = 0;
};

}  // namespace hcomm::tbench
