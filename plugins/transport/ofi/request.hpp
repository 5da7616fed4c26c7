// What the provider holds while an operation is in flight: an fi_context2
// (lent to the provider until the completion, FI_CONTEXT2 mode) and a link to
// what the operation belongs to. Requests are the user's isend / irecv.
#pragma once

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>

#include <chrono>
#include <cstdint>
#include <string>

#include "fid.hpp"
#include "hcomm/types.h"

namespace hcomm::ofi {

using Clock = std::chrono::steady_clock;

class Endpoint;

struct Op {
  enum class Kind { kRequest, kControlRecv, kControlSend };
  fi_context2 fi{};  // first: the context pointer handed to libfabric is this Op
  Kind kind;
  void* owner;
};

struct Request {
  Request(Endpoint& endpoint, bool is_send, void* buffer, size_t length, uint64_t message_tag)
      : op{.kind = Op::Kind::kRequest, .owner = this},
        ep(&endpoint),
        send(is_send),
        buf(buffer),
        len(length),
        tag(message_tag),
        posted_at(Clock::now()) {}

  // "receive of 4096 bytes from rank 2 (tag 0x7)"
  std::string describe(int peer) const;

  Op op;
  Endpoint* ep;
  bool send;
  void* buf;
  size_t len;
  uint64_t tag;
  Fid<fid_mr> mr;  // only where the provider wants local buffers registered
  Clock::time_point posted_at;

  bool finished = false;       // completed or failed: test reports it
  bool provider_holds = true;  // until its completion or error entry is read
  bool user_holds = true;      // until test reported it finished
  hcomm_result_t status = HCOMM_SUCCESS;
  std::string error;
  size_t bytes = 0;
};

}  // namespace hcomm::ofi
