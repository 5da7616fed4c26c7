#include "segment.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>
#include <string>
#include <utility>

#include "hcomm/plugin/util.hpp"

namespace hcomm::shm {

namespace {

// Where the segments live: their pages count against this file system's size.
constexpr const char* kShmDir = "/dev/shm";

std::byte* map(int fd, size_t bytes, const char* whose) {
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_SYSTEM, "shm: cannot map %zu bytes of the segment of %s: %s", bytes, whose,
                       std::strerror(errno));
  return static_cast<std::byte*>(p);
}

std::string describe(const SegmentOwner& owner) {
  return plugin::format("rank %d (pid %d)", owner.rank, static_cast<int>(owner.pid));
}

}  // namespace

void reserve(int fd, size_t bytes, const char* what) {
  const int err = ::posix_fallocate(fd, 0, static_cast<off_t>(bytes));
  if (err == 0) return;
  HCOMM_PLUGIN_THROW(HCOMM_ERR_SYSTEM, "shm: cannot reserve %zu bytes of shared memory for %s: %s%s", bytes, what,
                     std::strerror(err),
                     err == ENOSPC ? " (the shared-memory file system, /dev/shm, is full: free space there, make it "
                                     "larger, or lower HCOMM_SHM_FIFO_BYTES)"
                                   : "");
}

Segment::Segment(int fd) : file_{.fd = fd, .inode = 0, .device = 0} {}

Segment::Segment(Segment&& other) noexcept
    : file_(std::exchange(other.file_, SegmentFile{.fd = -1, .inode = 0, .device = 0})),
      base_(std::exchange(other.base_, nullptr)),
      bytes_(other.bytes_),
      geometry_(other.geometry_) {}

Segment::~Segment() { release(); }

void Segment::release() noexcept {
  if (base_) ::munmap(base_, bytes_);
  if (file_.fd >= 0) ::close(file_.fd);
  base_ = nullptr;
  file_.fd = -1;
}

Segment Segment::create(const SegmentOwner& owner, const Geometry& geometry) {
  const size_t bytes = geometry.total_bytes();
  int raw = ::open(kShmDir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (raw < 0)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_SYSTEM,
                       "shm: cannot create a segment in %s (an unnamed file, O_TMPFILE): %s; the shm transport needs "
                       "a tmpfs there (exclude it with HCOMM_TRANSPORTS=^shm otherwise)",
                       kShmDir, std::strerror(errno));
  // From here on the Segment owns the descriptor and the mapping, so that any
  // failure below closes what exists.
  Segment s(raw);
  struct stat st {};
  if (::fstat(raw, &st) != 0)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_SYSTEM, "shm: cannot read the segment's identity (fstat): %s", std::strerror(errno));
  s.file_.inode = static_cast<uint64_t>(st.st_ino);
  s.file_.device = static_cast<uint64_t>(st.st_dev);
  s.bytes_ = bytes;
  s.geometry_ = geometry;
  const std::string whose = describe(owner);
  reserve(raw, bytes, ("the segment of " + whose).c_str());
  s.base_ = map(raw, bytes, whose.c_str());
  auto* h = new (s.base_) SegmentHeader{};
  h->version = kLayoutVersion;
  h->owner_rank = owner.rank;
  h->owner_pid = owner.pid;
  h->fifo_count = geometry.fifo_count;
  h->fifo_bytes = geometry.fifo_bytes;
  h->key_check = owner.key_check;
  for (uint32_t i = 0; i < geometry.fifo_count; ++i) new (&s.control(i)) FifoControl{};
  h->magic.store(kSegmentMagic, std::memory_order_release);
  return s;
}

Segment Segment::attach(const SegmentOwner& owner, const SegmentFile& file) {
  const std::string whose = describe(owner);
  const std::string path = plugin::format("/proc/%d/fd/%d", static_cast<int>(owner.pid), file.fd);
  int raw = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (raw < 0) {
    const int err = errno;
    if (::kill(owner.pid, 0) != 0 && errno == ESRCH)
      HCOMM_PLUGIN_THROW(HCOMM_ERR_REMOTE, "shm: %s died", whose.c_str());
    HCOMM_PLUGIN_THROW(HCOMM_ERR_SYSTEM, "shm: cannot open the segment of %s as %s: %s", whose.c_str(), path.c_str(),
                       std::strerror(err));
  }
  Segment s(raw);
  struct stat st {};
  if (::fstat(raw, &st) != 0 || static_cast<uint64_t>(st.st_ino) != file.inode ||
      static_cast<uint64_t>(st.st_dev) != file.device)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_REMOTE, "shm: %s is not the segment of %s any more (that process ended)",
                       path.c_str(), whose.c_str());
  if (static_cast<uint64_t>(st.st_size) < Geometry::controls_offset())
    HCOMM_PLUGIN_THROW(HCOMM_ERR_REMOTE, "shm: the segment of %s is too small (%lld bytes)", whose.c_str(),
                       static_cast<long long>(st.st_size));
  s.bytes_ = static_cast<size_t>(st.st_size);
  s.base_ = map(raw, s.bytes_, whose.c_str());
  const SegmentHeader& h = s.header();
  if (h.magic.load(std::memory_order_acquire) != kSegmentMagic || h.version != kLayoutVersion)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_REMOTE,
                       "shm: the segment of %s has layout version %u, this plugin uses %u: use the same HComm build "
                       "on every rank",
                       whose.c_str(), h.version, kLayoutVersion);
  if (h.owner_rank != owner.rank || h.owner_pid != owner.pid || h.key_check != owner.key_check)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_REMOTE,
                       "shm: %s holds the segment of rank %d (pid %d) of another communicator, not that of %s",
                       path.c_str(), h.owner_rank, h.owner_pid, whose.c_str());
  s.geometry_ = Geometry{.fifo_count = h.fifo_count, .fifo_bytes = h.fifo_bytes};
  if (s.geometry_.total_bytes() != s.bytes_ || h.fifo_bytes % kPage != 0 ||
      max_packet_bytes(h.fifo_bytes) <= sizeof(PacketHeader))
    HCOMM_PLUGIN_THROW(HCOMM_ERR_REMOTE,
                       "shm: the segment of %s is %zu bytes, its header describes %u FIFOs of %llu bytes",
                       whose.c_str(), s.bytes_, h.fifo_count, static_cast<unsigned long long>(h.fifo_bytes));
  return s;
}

}  // namespace hcomm::shm
