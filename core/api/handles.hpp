// What the C API's opaque handles hold, shared by the files of core/api.
#pragma once

#include <memory>

#include "core/comm/communicator.hpp"
#include "hcomm/hcomm.h"

struct hcomm_comm {
  std::unique_ptr<hcomm::comm::Communicator> impl;
};

struct hcomm_request {
  hcomm::comm::Communicator* comm;
  hcomm::exec::Operation* op;
};
