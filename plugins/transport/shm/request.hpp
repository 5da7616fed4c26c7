// One isend or irecv. Its net keeps it (and reuses it) once test has reported its end.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "hcomm/types.h"

namespace hcomm::shm {

class Net;

struct Request {
  enum class State { Pending, Done, Failed };

  Net* net;
  const std::byte* source;  // send: the user's data
  std::byte* target;        // receive: the user's buffer
  uint64_t length;          // send: the message; receive: the buffer's capacity
  uint64_t tag;
  State state = State::Pending;
  uint64_t bytes = 0;  // moved, once Done
  hcomm_result_t error = HCOMM_SUCCESS;
  std::string error_text;

  bool pending() const { return state == State::Pending; }
  void complete(uint64_t moved) {
    state = State::Done;
    bytes = moved;
  }
  void fail(hcomm_result_t code, std::string text) {
    state = State::Failed;
    error = code;
    error_text = std::move(text);
  }
};

}  // namespace hcomm::shm
