// A call's device buffers as host memory: one area the operation runs on,
// what is copied into it from the device before and back after.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace hcomm::device {

struct Staging {
  struct Copy {
    uint8_t* device;
    size_t offset;  // into the area
    size_t bytes;
  };
  size_t bytes = 0;
  std::vector<Copy> in, out;

  // A part of `part_bytes` in the area; returns its offset. The parts start
  // on cache lines.
  size_t add(size_t part_bytes) {
    const size_t offset = (bytes + 63) & ~size_t{63};
    bytes = offset + part_bytes;
    return offset;
  }
};

}  // namespace hcomm::device
