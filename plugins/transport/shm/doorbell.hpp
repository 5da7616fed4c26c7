// The futex doorbell of a segment: its owner sleeps on it instead of spinning,
// and a process that made work for the owner (a packet in one of its FIFOs,
// room in a FIFO the owner is blocked on, an attach or a close) rings it.
//
// The owner sets `sleeping` before its last look for work; a ringer publishes
// its work before it reads `sleeping`. Both sides use seq_cst operations (the
// FIFO counters and slot states are stored seq_cst for this), so in their
// single total order either the owner sees the work or the ringer sees the
// flag: a wake-up is never lost.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>

#include "layout.hpp"

namespace hcomm::shm {

class Doorbell {
 public:
  explicit Doorbell(SegmentHeader& header) : header_(header) {}

  // Called after publishing work for the owner; wakes it if it sleeps.
  void ring();
  // Blocks up to timeout_us unless `work_ready` says there is work already.
  void sleep(const std::function<bool()>& work_ready, int64_t timeout_us);

 private:
  SegmentHeader& header_;
};

}  // namespace hcomm::shm
