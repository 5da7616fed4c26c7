// One net per communicator: an FI_EP_RDM endpoint with its address vector
// (FI_AV_TABLE) and tagged completion queue, the peers' endpoints, every
// request until both the provider and the user are done with it, and the
// control messages (bye) that tell a peer an endpoint was closed in order.
#pragma once

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_eq.h>

#include <memory>
#include <unordered_map>
#include <vector>

#include "address.hpp"
#include "config.hpp"
#include "control.hpp"
#include "endpoint.hpp"
#include "fabric.hpp"
#include "hcomm/plugin/transport.h"
#include "request.hpp"

namespace hcomm::ofi {

class Net {
 public:
  Net(Fabric& fabric, const Config& config, const plugin::Services& services,
      const hcomm_transport_open_args_t& args);
  Net(const Net&) = delete;
  Net& operator=(const Net&) = delete;
  // Says bye to every open peer, then closes the endpoint: requests still
  // pending are dropped with it.
  ~Net();

  const Address& local() const { return local_; }
  Endpoint& connect(int rank, const Address& peer);
  // Greets the peer on the first call, so that the provider connects now
  // rather than on the first message (tcp;ofi_rxm blocks its first send for
  // that, too long for connect); always true unless the peer failed (throws).
  bool ready(Endpoint& ep);
  void close_endpoint(Endpoint& ep);

  // Null when the provider has no room now (FI_EAGAIN): retry later.
  Request* isend(Endpoint& ep, const void* buf, size_t len, uint64_t tag);
  Request* irecv(Endpoint& ep, void* buf, size_t len, uint64_t tag);
  // True once `r` finished (then it is freed, and *bytes set); throws its error.
  bool test(Request& r, size_t* bytes);
  void progress();
  void wait(int64_t timeout_us);

  // Ends `r` with an error; a receive the provider still holds is cancelled.
  void fail(Request& r, hcomm_result_t code, const std::string& text);
  // Reads the completion queue dry; returns how many entries it handled.
  size_t read_completions();

 private:
  Request* post(Endpoint& ep, bool send, void* buf, size_t len, uint64_t tag);
  ssize_t post_recv(Request& r, void* desc);
  Fid<fid_mr> register_buffer(void* buf, size_t len, uint64_t access);
  void on_completion(const fi_cq_tagged_entry& entry);
  void on_request_done(Request& r, const fi_cq_tagged_entry& entry);
  void on_error(const fi_cq_err_entry& entry);
  void fail_truncated(Request& r, size_t message_bytes);
  void repost_after_stray(Request& r);
  void on_control(ControlOp& c);
  void post_control_recv(ControlOp& c);
  void send_control(Endpoint& ep, ControlMessage::Kind kind);
  void release(Request& r);
  void check_peers();

  Fabric& fabric_;
  const plugin::Services& services_;
  int rank_;
  uint64_t key_check_;  // keyed hash of the communicator key; travels as remote CQ data on every message
  Clock::duration liveness_;
  Clock::time_point next_check_;
  Address local_;

  Fid<fid_cq> cq_;
  Fid<fid_av> av_;
  Fid<fid_ep> ep_;
  int wait_fd_ = -1;  // the completion queue's descriptor, where the provider has one

  std::vector<std::unique_ptr<Endpoint>> endpoints_;  // kept until close: requests point at them
  std::unordered_map<int, Endpoint*> by_rank_;        // the open ones
  std::unordered_map<Request*, std::unique_ptr<Request>> requests_;
  std::vector<std::unique_ptr<ControlOp>> control_recvs_;
  std::vector<ControlOp*> unposted_;  // control receives the provider had no room for
  std::unordered_map<ControlOp*, std::unique_ptr<ControlOp>> control_sends_;
};

}  // namespace hcomm::ofi
