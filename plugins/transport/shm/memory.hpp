// Memory other processes of this host map (the mapped-memory functions of
// ABI 1.1). Every region is a memfd: it has no path, so nothing can be left
// in /dev/shm whatever happens to the process, and the kernel frees it once
// the last descriptor and mapping are gone. A peer maps a region by opening
// the owner's descriptor through /proc/<pid>/fd/<fd> (the same permission as
// reading /proc/<pid>/maps: same user, dumpable), checked against the file's
// inode so that a reused descriptor number cannot map something else.
//
// Registration moves a caller's pages onto a memfd in place: the buffer's
// whole pages are copied into a new memfd mapping, which mremap puts at the
// very addresses of the old pages in one step; unregistering moves the data
// back into private anonymous memory the same way. Partial pages at the ends
// are left alone, since other data (malloc's headers, other objects) shares
// them and may be written by other threads at any time; peers read those
// bytes with cross-memory attach instead. Only private anonymous writable
// memory (heap, mmap) is moved; anything else (stack, files, memory already
// shared) stays unmappable, as does memory that is locked or kept from
// children (MADV_DONTFORK, which drivers that pin pages ask for). Whether a
// registration still holds its pages is one readlink of
// /proc/self/map_files. A child forked later gets private copies of the moved
// pages, as it would have without the registration.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "hcomm/plugin/transport.h"

namespace hcomm::shm {

// A region of this process: allocated, or a registered range of the caller's.
class Region {
 public:
  static Region* allocate(size_t bytes);
  static Region* enroll(void* ptr, size_t bytes);
  // A registration: moves its pages back to private memory (before deletion).
  void restore_pages();
  // Still holds the pages it moved (an allocation always does).
  bool held() const;
  // Whether this system lets held() tell.
  static bool can_tell_held();
  // In a child just forked: back to private memory, and let go of the file.
  void leave_child();
  // Frees an allocation; a registration's pages stay where they are.
  ~Region();
  Region(const Region&) = delete;
  Region& operator=(const Region&) = delete;

  void* data() const { return data_; }
  const hcomm_mem_desc_t& desc() const { return desc_; }

 private:
  Region(int fd, void* data, size_t file_bytes, bool allocated);
  void describe(size_t bytes);
  bool privatise();

  int fd_;
  void* data_;         // the file's first byte in this process
  size_t file_bytes_;  // whole pages
  bool allocated_;
  std::string link_;  // a registration's file as /proc/self/map_files links it
  hcomm_mem_desc_t desc_{};
};

// A peer's region mapped into this process.
class PeerMapping {
 public:
  explicit PeerMapping(const hcomm_mem_desc_t& desc);
  ~PeerMapping();
  PeerMapping(const PeerMapping&) = delete;
  PeerMapping& operator=(const PeerMapping&) = delete;

  void* data() const { return data_; }

 private:
  void* data_;
  size_t bytes_;
};

}  // namespace hcomm::shm
