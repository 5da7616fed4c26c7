#include "memory.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <mutex>
#include <set>
#include <sstream>
#include <string>

#include "hcomm/plugin/util.hpp"
#include "segment.hpp"

namespace hcomm::shm {

namespace {

// mremap(MREMAP_FIXED) by system call: libraries that hook mremap (UCX's
// memory events) may drop its fifth argument, the target address.
void* move_pages(void* from, size_t len, void* to) {
  return reinterpret_cast<void*>(::syscall(SYS_mremap, from, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, to));
}


constexpr uint32_t kBlobMagic = 0x4d454d48;  // "HMEM"
constexpr uint32_t kBlobVersion = 1;

// What a peer needs to open and check the owner's memfd.
struct Blob {
  uint32_t magic;
  uint32_t version;
  int32_t pid;
  int32_t fd;
  uint64_t inode;
  uint64_t device;
  uint64_t file_bytes;
};
static_assert(sizeof(Blob) <= HCOMM_MEM_BLOB_BYTES, "the shm memory blob must fit hcomm_mem_desc_t");

size_t page_size() {
  static const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  return page;
}

[[noreturn]] void system_error(const char* what, size_t bytes) {
  HCOMM_PLUGIN_THROW(HCOMM_ERR_SYSTEM, "shm: %s of %zu bytes failed: %s", what, bytes, std::strerror(errno));
}

int new_memfd(const char* name, size_t bytes) {
  int fd = ::memfd_create(name, MFD_CLOEXEC);
  if (fd < 0) system_error("memfd_create", bytes);
  try {
    reserve(fd, bytes, name);
  } catch (...) {
    ::close(fd);
    throw;
  }
  return fd;
}

void* map_shared(int fd, size_t bytes) {
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  return p == MAP_FAILED ? nullptr : p;
}

// One mapping of /proc/self/smaps: its header line and its VmFlags.
struct Vma {
  uintptr_t start, end;
  std::string perms;
  uint64_t inode;
  std::string path;
  std::string flags;  // " rd wr mr ..." with a space before each
};

// True when the mappings of this process cover [start, end) without a gap
// and each one satisfies `ok`.
bool covered(uintptr_t start, uintptr_t end, const std::function<bool(const Vma&)>& ok) {
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  uintptr_t next = start;
  Vma v{};
  bool open = false;  // v is a mapping of the range whose flags are still to come
  while (next < end && std::getline(smaps, line)) {
    if (open && line.rfind("VmFlags:", 0) == 0) {
      v.flags = line.substr(8);
      if (!ok(v)) return false;
      next = v.end;
      open = false;
      continue;
    }
    const size_t space = line.find(' ');
    if (space == std::string::npos || line[space - 1] == ':') continue;  // a "Key: value" line
    std::istringstream in(line);
    char dash = 0;
    std::string offset, device;
    v = Vma{};
    in >> std::hex >> v.start >> dash >> v.end >> v.perms >> offset >> device >> std::dec >> v.inode;
    if (!in || dash != '-' || v.perms.size() < 4) return false;
    std::getline(in >> std::ws, v.path);
    if (v.end <= next) continue;
    if (v.start > next) return false;
    open = true;
  }
  return next >= end;
}

// Memory that may move onto a memfd: private, anonymous and writable, and
// neither locked nor kept from children (MADV_DONTFORK: what drivers that
// pin pages for DMA, RDMA's among them, ask for): pages moved from under a
// pin would leave the device writing the old ones.
bool movable(const Vma& v) {
  return v.perms.compare(0, 2, "rw") == 0 && v.perms[3] == 'p' && v.inode == 0 &&
         (v.path.empty() || v.path == "[heap]" || v.path.rfind("[anon:", 0) == 0) &&
         v.flags.find(" dc") == std::string::npos && v.flags.find(" lo") == std::string::npos;
}

// Registrations whose pages are on their memfd. The lock is held across
// fork, so a child never sees pages half moved; the child then moves every
// registration's data back into private memory, as if nothing had been
// registered (its parent's writes during that copy may show in it).
std::mutex g_moved_mutex;
std::set<Region*>* g_moved = new std::set<Region*>;  // outlives static destruction; fork may come late

void privatise_in_child() {
  for (Region* r : *g_moved) r->leave_child();
  g_moved->clear();
  g_moved_mutex.unlock();
}

void watch_forks() {
  static std::once_flag once;
  std::call_once(once, [] {
    ::pthread_atfork([] { g_moved_mutex.lock(); }, [] { g_moved_mutex.unlock(); }, privatise_in_child);
  });
}

}  // namespace

Region::Region(int fd, void* data, size_t file_bytes, bool allocated)
    : fd_(fd), data_(data), file_bytes_(file_bytes), allocated_(allocated) {}

void Region::describe(size_t bytes) {
  desc_.address = reinterpret_cast<uintptr_t>(data_);
  desc_.bytes = bytes;
  struct stat st {};
  if (fd_ < 0 || ::fstat(fd_, &st) != 0) {
    desc_.bytes = 0;
    return;
  }
  const Blob blob{.magic = kBlobMagic,
                  .version = kBlobVersion,
                  .pid = ::getpid(),
                  .fd = fd_,
                  .inode = static_cast<uint64_t>(st.st_ino),
                  .device = static_cast<uint64_t>(st.st_dev),
                  .file_bytes = file_bytes_};
  std::memcpy(desc_.blob, &blob, sizeof blob);
  desc_.blob_len = sizeof blob;
}

Region* Region::allocate(size_t bytes) {
  if (bytes == 0) HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT, "shm: mem_alloc: bytes is 0");
  const size_t file_bytes = (bytes + page_size() - 1) / page_size() * page_size();
  int fd = new_memfd("hcomm-mem", file_bytes);
  void* data = map_shared(fd, file_bytes);
  if (!data) {
    const int err = errno;
    ::close(fd);
    errno = err;
    system_error("mapping a memfd", file_bytes);
  }
  auto* r = new Region(fd, data, file_bytes, true);
  r->describe(bytes);
  return r;
}

// The whole pages inside [ptr, ptr + bytes) move onto a memfd; see memory.hpp.
Region* Region::enroll(void* ptr, size_t bytes) {
  const uintptr_t first = (reinterpret_cast<uintptr_t>(ptr) + page_size() - 1) / page_size() * page_size();
  const uintptr_t last = (reinterpret_cast<uintptr_t>(ptr) + bytes) / page_size() * page_size();
  auto unmappable = [&] {
    auto* r = new Region(-1, reinterpret_cast<void*>(first), 0, false);
    r->describe(0);
    return r;
  };
  if (!ptr || last <= first) return unmappable();
  watch_forks();
  std::lock_guard<std::mutex> lock(g_moved_mutex);
  if (!covered(first, last, movable)) return unmappable();
  const size_t len = last - first;
  // A name of its own, which held() finds in /proc/self/map_files.
  static std::atomic<uint64_t> registrations{0};
  const std::string name = plugin::format("hcomm-registered-%llu", static_cast<unsigned long long>(++registrations));
  int fd = new_memfd(name.c_str(), len);
  void* staging = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
  if (staging == MAP_FAILED) {
    ::close(fd);
    return unmappable();
  }
  std::memcpy(staging, reinterpret_cast<void*>(first), len);
  if (move_pages(staging, len, reinterpret_cast<void*>(first)) == MAP_FAILED) {
    ::munmap(staging, len);
    ::close(fd);
    return unmappable();
  }
  auto* r = new Region(fd, reinterpret_cast<void*>(first), len, false);
  r->link_ = "/memfd:" + name + " (deleted)";
  r->describe(len);
  g_moved->insert(r);
  return r;
}

// The mapping of exactly the registered pages is still this region's memfd:
// /proc/self/map_files names a mapping by its range, and its link the file.
bool Region::held() const {
  if (allocated_) return true;
  if (fd_ < 0) return false;
  const uintptr_t first = reinterpret_cast<uintptr_t>(data_);
  char path[64], link[128];
  std::snprintf(path, sizeof path, "/proc/self/map_files/%lx-%lx", static_cast<unsigned long>(first),
                static_cast<unsigned long>(first + file_bytes_));
  const ssize_t n = ::readlink(path, link, sizeof link);
  return n == static_cast<ssize_t>(link_.size()) && link_.compare(0, link_.size(), link, n) == 0;
}

// Asked on every call that uses an automatic registration: looked up once.
bool Region::can_tell_held() {
  static const bool can = ::access("/proc/self/map_files", R_OK) == 0;
  return can;
}

// Private anonymous memory with the same contents goes back under the
// registered pages, unless they are no longer this region's (the caller freed
// the buffer before unregistering it): then there is nothing to restore.
bool Region::privatise() {
  if (!held()) return true;
  void* fresh = ::mmap(nullptr, file_bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (fresh == MAP_FAILED) return false;
  std::memcpy(fresh, data_, file_bytes_);
  if (move_pages(fresh, file_bytes_, data_) == MAP_FAILED) {
    ::munmap(fresh, file_bytes_);
    return false;
  }
  return true;
}

void Region::restore_pages() {
  if (allocated_ || fd_ < 0) return;
  std::lock_guard<std::mutex> lock(g_moved_mutex);
  g_moved->erase(this);
  if (!privatise()) system_error("restoring registered memory", file_bytes_);
}

// In a child just forked: nothing to report to, so memory short leaves the
// pages shared.
void Region::leave_child() {
  privatise();
  ::close(fd_);
  fd_ = -1;
}

Region::~Region() {
  if (fd_ < 0) return;
  if (allocated_) ::munmap(data_, file_bytes_);
  {
    std::lock_guard<std::mutex> lock(g_moved_mutex);
    g_moved->erase(this);
  }
  ::close(fd_);
}

PeerMapping::PeerMapping(const hcomm_mem_desc_t& desc) : data_(nullptr), bytes_(0) {
  Blob blob{};
  if (desc.blob_len != sizeof blob)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT,
                       "shm: mem_map: the description holds a blob of %u bytes, a shm one is %zu: pass a "
                       "description the peer's shm transport made",
                       desc.blob_len, sizeof blob);
  std::memcpy(&blob, desc.blob, sizeof blob);
  if (blob.magic != kBlobMagic || blob.version != kBlobVersion || desc.bytes > blob.file_bytes)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT,
                       "shm: mem_map: not a shm memory description of version %u: use the same HComm build on "
                       "every rank",
                       kBlobVersion);
  const std::string path = plugin::format("/proc/%d/fd/%d", blob.pid, blob.fd);
  int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    if (::kill(blob.pid, 0) != 0 && errno == ESRCH)
      HCOMM_PLUGIN_THROW(HCOMM_ERR_REMOTE, "shm: mem_map: process %d died", blob.pid);
    HCOMM_PLUGIN_THROW(err == EACCES || err == EPERM ? HCOMM_ERR_UNSUPPORTED : HCOMM_ERR_REMOTE,
                       "shm: mem_map: cannot open %s (the memory of process %d): %s", path.c_str(), blob.pid,
                       std::strerror(err));
  }
  struct stat st {};
  const bool same = ::fstat(fd, &st) == 0 && static_cast<uint64_t>(st.st_ino) == blob.inode &&
                    static_cast<uint64_t>(st.st_dev) == blob.device &&
                    static_cast<uint64_t>(st.st_size) >= blob.file_bytes;
  void* data = same ? map_shared(fd, blob.file_bytes) : nullptr;
  const int err = errno;
  ::close(fd);
  if (!same)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_REMOTE, "shm: mem_map: process %d released that memory (%s is another file now)",
                       blob.pid, path.c_str());
  if (!data)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_SYSTEM, "shm: mem_map: mapping %llu bytes of process %d failed: %s",
                       static_cast<unsigned long long>(blob.file_bytes), blob.pid, std::strerror(err));
  data_ = data;
  bytes_ = blob.file_bytes;
}

PeerMapping::~PeerMapping() { ::munmap(data_, bytes_); }

}  // namespace hcomm::shm
