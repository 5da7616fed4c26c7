// A rank's shared segment, mapped into this process (RAII).
//
// The owner creates it (shm_open with O_EXCL, mode 0600: private to the user)
// and unlinks its name as soon as every peer has attached, so that nothing is
// left in /dev/shm if a process is killed later. A peer that connects after
// that reopens the still-open file through /proc/<owner pid>/fd/<fd>.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "layout.hpp"

namespace hcomm::shm {

// Sizes the shared-memory file `fd` to `bytes` and takes its pages now
// (posix_fallocate), so that a full file system is this error, naming
// `what`, rather than a SIGBUS at the first touch of a page.
void reserve(int fd, size_t bytes, const char* what);

// Who owns a segment, as its header records it.
struct SegmentOwner {
  int rank;
  pid_t pid;
  uint64_t key_check;
};

class Segment {
 public:
  static Segment create(const std::string& name, const SegmentOwner& owner, const Geometry& geometry);
  // Maps the segment `name` of `owner` (or its file descriptor `fd` in the
  // owner's process once the name is gone) and checks its header.
  static Segment attach(const std::string& name, const SegmentOwner& owner, int fd);

  Segment(Segment&& other) noexcept;
  Segment& operator=(Segment&&) = delete;
  Segment(const Segment&) = delete;
  ~Segment();

  // Removes the name; the memory stays until the last mapping goes.
  void unlink();
  bool linked() const { return linked_; }
  const std::string& name() const { return name_; }
  int fd() const { return fd_; }

  SegmentHeader& header() const { return *reinterpret_cast<SegmentHeader*>(base_); }
  const Geometry& geometry() const { return geometry_; }
  FifoControl& control(uint32_t fifo) const {
    return *reinterpret_cast<FifoControl*>(base_ + geometry_.control_offset(fifo));
  }
  std::byte* data(uint32_t fifo) const { return base_ + geometry_.data_offset(fifo); }

 private:
  Segment(std::string name, int fd, std::byte* base, size_t bytes, Geometry geometry, bool owned);
  void release() noexcept;

  std::string name_;
  int fd_;
  std::byte* base_;
  size_t bytes_;
  Geometry geometry_;
  bool linked_;  // this process created the name and has not removed it yet
};

}  // namespace hcomm::shm
