// A rank's shared segment, mapped into this process (RAII).
//
// The owner creates it in /dev/shm without a name (O_TMPFILE, mode 0600:
// private to the user), so that nothing can be left there whatever happens to
// any process, at any point: the kernel frees the memory once the last
// descriptor and mapping are gone. Its pages still count against /dev/shm's
// size. Peers open the owner's descriptor through /proc/<owner pid>/fd/<fd>
// (same user, owner dumpable) and check the file's inode, so that a reused
// descriptor number or pid cannot map something else.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

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

// Where the owner's process holds its segment: descriptor, and the file's identity.
struct SegmentFile {
  int fd;
  uint64_t inode;
  uint64_t device;
};

class Segment {
 public:
  static Segment create(const SegmentOwner& owner, const Geometry& geometry);
  // Maps the segment that `owner`'s process holds as `file`, and checks its header.
  static Segment attach(const SegmentOwner& owner, const SegmentFile& file);

  Segment(Segment&& other) noexcept;
  Segment& operator=(Segment&&) = delete;
  Segment(const Segment&) = delete;
  ~Segment();

  const SegmentFile& file() const { return file_; }

  SegmentHeader& header() const { return *reinterpret_cast<SegmentHeader*>(base_); }
  const Geometry& geometry() const { return geometry_; }
  FifoControl& control(uint32_t fifo) const {
    return *reinterpret_cast<FifoControl*>(base_ + geometry_.control_offset(fifo));
  }
  std::byte* data(uint32_t fifo) const { return base_ + geometry_.data_offset(fifo); }

 private:
  explicit Segment(int fd);
  void release() noexcept;

  SegmentFile file_;
  std::byte* base_ = nullptr;
  size_t bytes_ = 0;
  Geometry geometry_{};
};

}  // namespace hcomm::shm
