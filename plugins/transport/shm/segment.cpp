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

std::byte* map(int fd, size_t bytes, const std::string& name) {
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_SYSTEM, "shm: cannot map %zu bytes of segment %s: %s", bytes, name.c_str(),
                       std::strerror(errno));
  return static_cast<std::byte*>(p);
}

int open_existing(const std::string& name, pid_t owner_pid, int fd) {
  int f = ::shm_open(name.c_str(), O_RDWR | O_CLOEXEC, 0);
  if (f >= 0 || errno != ENOENT) return f;
  std::string path = "/proc/" + std::to_string(owner_pid) + "/fd/" + std::to_string(fd);
  return ::open(path.c_str(), O_RDWR | O_CLOEXEC);
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

Segment::Segment(std::string name, int fd, std::byte* base, size_t bytes, Geometry geometry, bool owned)
    : name_(std::move(name)), fd_(fd), base_(base), bytes_(bytes), geometry_(geometry), linked_(owned) {}

Segment::Segment(Segment&& other) noexcept
    : name_(std::move(other.name_)),
      fd_(std::exchange(other.fd_, -1)),
      base_(std::exchange(other.base_, nullptr)),
      bytes_(other.bytes_),
      geometry_(other.geometry_),
      linked_(std::exchange(other.linked_, false)) {}

Segment::~Segment() { release(); }

void Segment::release() noexcept {
  unlink();
  if (base_) ::munmap(base_, bytes_);
  if (fd_ >= 0) ::close(fd_);
  base_ = nullptr;
  fd_ = -1;
}

void Segment::unlink() {
  if (linked_) ::shm_unlink(name_.c_str());
  linked_ = false;
}

Segment Segment::create(const std::string& name, const SegmentOwner& owner, const Geometry& geometry) {
  const size_t bytes = geometry.total_bytes();
  int raw = ::shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (raw < 0)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_SYSTEM, "shm: cannot create segment %s: %s", name.c_str(), std::strerror(errno));
  // From here on the Segment owns the name, the descriptor and the mapping, so
  // that any failure below unlinks and closes what exists.
  Segment s(name, raw, nullptr, bytes, geometry, true);
  reserve(raw, bytes, ("segment " + name).c_str());
  s.base_ = map(raw, bytes, name);
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

Segment Segment::attach(const std::string& name, const SegmentOwner& owner, int fd) {
  int raw = open_existing(name, owner.pid, fd);
  if (raw < 0) {
    const int err = errno;
    if (::kill(owner.pid, 0) != 0 && errno == ESRCH)
      HCOMM_PLUGIN_THROW(HCOMM_ERR_REMOTE, "shm: rank %d (pid %d) died", owner.rank, static_cast<int>(owner.pid));
    HCOMM_PLUGIN_THROW(
        HCOMM_ERR_SYSTEM, "shm: cannot open segment %s of rank %d (pid %d), neither by name nor as /proc/%d/fd/%d: %s",
        name.c_str(), owner.rank, static_cast<int>(owner.pid), static_cast<int>(owner.pid), fd, std::strerror(err));
  }
  Segment s(name, raw, nullptr, 0, Geometry{}, false);
  struct stat st {};
  if (::fstat(raw, &st) != 0 || static_cast<uint64_t>(st.st_size) < Geometry::controls_offset())
    HCOMM_PLUGIN_THROW(HCOMM_ERR_REMOTE, "shm: segment %s of rank %d is too small (%lld bytes)", name.c_str(),
                       owner.rank, static_cast<long long>(st.st_size));
  s.bytes_ = static_cast<size_t>(st.st_size);
  s.base_ = map(raw, s.bytes_, name);
  const SegmentHeader& h = s.header();
  if (h.magic.load(std::memory_order_acquire) != kSegmentMagic || h.version != kLayoutVersion)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_REMOTE,
                       "shm: segment %s of rank %d has layout version %u, this plugin uses %u: use the same HComm "
                       "build on every rank",
                       name.c_str(), owner.rank, h.version, kLayoutVersion);
  if (h.owner_rank != owner.rank || h.owner_pid != owner.pid || h.key_check != owner.key_check)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_REMOTE,
                       "shm: segment %s belongs to rank %d (pid %d) of another communicator, not to rank %d (pid %d)",
                       name.c_str(), h.owner_rank, h.owner_pid, owner.rank, static_cast<int>(owner.pid));
  s.geometry_ = Geometry{.fifo_count = h.fifo_count, .fifo_bytes = h.fifo_bytes};
  if (s.geometry_.total_bytes() != s.bytes_ || h.fifo_bytes % kPage != 0 ||
      max_packet_bytes(h.fifo_bytes) <= sizeof(PacketHeader))
    HCOMM_PLUGIN_THROW(HCOMM_ERR_REMOTE,
                       "shm: segment %s of rank %d is %zu bytes, its header describes %u FIFOs of %llu bytes",
                       name.c_str(), owner.rank, s.bytes_, h.fifo_count, static_cast<unsigned long long>(h.fifo_bytes));
  return s;
}

}  // namespace hcomm::shm
