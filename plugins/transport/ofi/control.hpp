// Control messages travel untagged (FI_MSG), a matching space of their own
// apart from the users' tagged messages; each carries the communicator key's
// check value (a keyed hash of it), and messages with another are dropped.
#pragma once

#include <cstdint>

#include "request.hpp"

namespace hcomm::ofi {

struct ControlMessage {
  static constexpr uint32_t kMagic = 0x4F464943;  // "OFIC"
  enum Kind : uint32_t {
    kHello = 1,  // sent at connect so that the provider sets up its connection before the first message
    kBye = 2,    // the sender closed its endpoint to the receiver
  };

  uint32_t magic = kMagic;
  uint32_t kind = kHello;
  int32_t rank = -1;  // the sender
  uint32_t reserved = 0;
  uint64_t key_check = 0;
};

// A control message being received or sent, with the buffer the provider uses.
struct ControlOp {
  explicit ControlOp(Op::Kind kind) : op{.kind = kind, .owner = this} {}

  Op op;
  ControlMessage message;
  Fid<fid_mr> mr;
};

}  // namespace hcomm::ofi
