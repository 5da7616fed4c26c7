// What the C API's opaque handles hold, shared by the files of core/api.
#pragma once

#include <memory>

#include "core/comm/communicator.hpp"
#include "core/comm/stream_order.hpp"
#include "hcomm/hcomm.h"

struct hcomm_comm {
  std::unique_ptr<hcomm::comm::Communicator> impl;
};

// An executor operation (a collective, or point to point in exact mode), a
// message of point to point in matching mode, or a nonblocking call on
// device buffers (its stream-ordered calls: ticket).
struct hcomm_request {
  hcomm::comm::Communicator* comm;
  hcomm::exec::Operation* op;
  hcomm::p2p::Message* message = nullptr;
  hcomm::comm::StreamOrder* order = nullptr;
  std::shared_ptr<hcomm::comm::StreamOrder::Ticket> ticket;
};

// A message a matched probe took out of matching.
struct hcomm_message {
  hcomm::comm::Communicator* comm;
  hcomm::p2p::Arrival* arrival;
};
