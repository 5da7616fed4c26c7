// Copies at every distance between the buffers (hcomm/plugin/copy.hpp, and
// the device's copy past the caches), and the shm transport's cross-memory
// copies, which bounce the short distances through a buffer of their own:
// every byte checked, and the bytes around the destination untouched.
// Evictions from the caches keep every byte.
#include "hcomm/plugin/copy.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>

#include "core/device/copy.hpp"
#include "core/device/evict.hpp"
#include "gtest/gtest.h"
#include "plugins/transport/shm/cma.hpp"

namespace {

using hcomm::plugin::copy_blocks;
using hcomm::plugin::copy_bytes;
using hcomm::plugin::kPageBytes;
using hcomm::plugin::short_distance;

constexpr size_t kGuard = 64;
constexpr unsigned char kGuardByte = 0xA5;

struct PageBuffer {
  explicit PageBuffer(size_t bytes)
      : data(static_cast<unsigned char*>(
                 std::aligned_alloc(kPageBytes, (bytes + 2 * kPageBytes) / kPageBytes * kPageBytes)),
             &std::free) {}
  std::unique_ptr<unsigned char, decltype(&std::free)> data;
};

unsigned char pattern(size_t i) { return static_cast<unsigned char>(i * 131 + 7); }

// A source at `src_offset` into a page and a destination at `dst_offset`
// into one (the guard bytes around it in the pages before and after);
// `copy(dst, src, bytes)` fills it.
template <class Copy>
void check_copy(size_t src_offset, size_t dst_offset, size_t bytes, Copy copy) {
  PageBuffer src_page(bytes + src_offset), dst_page(kPageBytes + dst_offset + bytes + kGuard);
  unsigned char* src = src_page.data.get() + src_offset;
  unsigned char* dst = dst_page.data.get() + kPageBytes + dst_offset;
  ASSERT_EQ(short_distance(dst, src), (dst_offset - src_offset) % kPageBytes - 1 < 63);
  for (size_t i = 0; i < bytes; ++i) src[i] = pattern(i);
  std::fill(dst - kGuard, dst + bytes + kGuard, kGuardByte);
  copy(dst, src, bytes);
  size_t wrong = 0;
  for (size_t i = 0; i < bytes; ++i) wrong += dst[i] != pattern(i);
  EXPECT_EQ(wrong, 0u) << "source +" << src_offset << ", destination +" << dst_offset << ", " << bytes << " bytes";
  for (size_t i = 1; i <= kGuard; ++i) {
    ASSERT_EQ(dst[-static_cast<ptrdiff_t>(i)], kGuardByte) << "written before the destination";
    ASSERT_EQ(dst[bytes + i - 1], kGuardByte) << "written past the destination";
  }
}

TEST(Copy, ShortDistanceIsTheDestinationJustPastTheSourceInAPage) {
  alignas(4096) static unsigned char page[3 * kPageBytes];
  EXPECT_FALSE(short_distance(page, page));
  EXPECT_TRUE(short_distance(page + 1, page));
  EXPECT_TRUE(short_distance(page + 16, page));
  EXPECT_TRUE(short_distance(page + 63, page));
  EXPECT_FALSE(short_distance(page + 64, page));
  EXPECT_FALSE(short_distance(page, page + 16));  // the destination before the source
  EXPECT_TRUE(short_distance(page + kPageBytes + 16, page));
  EXPECT_TRUE(short_distance(page + 2 * kPageBytes + 8, page + 4090));
  EXPECT_FALSE(short_distance(page + kPageBytes, page));
}

TEST(Copy, EveryDistanceAndTail) {
  for (size_t src_offset : {0, 16, 4000})
    for (size_t distance = 0; distance < 160; ++distance)
      for (size_t bytes : {0, 1, 15, 63, 64, 65, 127, 200, 4113})
        for (auto copy : {copy_bytes, copy_blocks, hcomm::device::copy_past_caches})
          check_copy(src_offset, (src_offset + distance) % kPageBytes, bytes, copy);
}

TEST(Copy, LargeCopiesAtShortAndOtherDistances) {
  for (size_t dst_offset : {0, 8, 16, 48, 64, 100})
    for (size_t bytes : {size_t{65536}, size_t{1} << 20 | 13})
      for (auto copy : {copy_bytes, copy_blocks, hcomm::device::copy_past_caches}) check_copy(0, dst_offset, bytes, copy);
}

// process_vm_readv and process_vm_writev on this process itself: the kernel
// takes them like any other process's. With and without the bounce, whatever
// this CPU would choose.
TEST(CrossMemory, ReadsAndWritesAtEveryKindOfDistance) {
  for (bool bounce : {true, false}) {
    hcomm::shm::CrossMemory cma(bounce);
    const pid_t self = ::getpid();
    for (size_t src_offset : {0, 16, 4064})
      for (size_t dst_offset : {0, 8, 16, 40, 63, 64, 200})
        for (size_t bytes : {size_t{8}, size_t{4096}, size_t{70000}, size_t{600} << 10 | 13}) {
          check_copy(src_offset, dst_offset, bytes, [&](unsigned char* dst, const unsigned char* src, size_t n) {
            ASSERT_EQ(cma.read(self, reinterpret_cast<uintptr_t>(src), dst, n), 0);
          });
          check_copy(src_offset, dst_offset, bytes, [&](unsigned char* dst, const unsigned char* src, size_t n) {
            ASSERT_EQ(cma.write(self, reinterpret_cast<uintptr_t>(dst), src, n), 0);
          });
        }
  }
}

TEST(CrossMemory, AFaultIsReportedNotCopied) {
  hcomm::shm::CrossMemory cma(true);
  std::vector<unsigned char> local(8192 + 16);
  // Address 16 of a page that nothing maps: EFAULT, through the bounce or not.
  EXPECT_EQ(cma.read(::getpid(), 16, local.data(), 8192), EFAULT);
  EXPECT_EQ(cma.read(::getpid(), 16, local.data() + 16, 8192), EFAULT);
  EXPECT_EQ(cma.write(::getpid(), 16, local.data(), 8192), EFAULT);
}

}  // namespace

// Lines evicted after a read (core/device/evict.hpp) keep every byte, dirty
// ones included, and the eviction reaches no line outside the range: the
// last byte lies against a page that may not be touched.
TEST(Evict, KeepsEveryByteAndStaysInsideTheRange) {
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE)), bytes = 64 * page;
  void* mapped = ::mmap(nullptr, bytes + 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(mapped, MAP_FAILED);
  auto* base = static_cast<unsigned char*>(mapped) + page;
  ASSERT_EQ(::mprotect(base - page, page, PROT_NONE), 0);
  ASSERT_EQ(::mprotect(base + bytes, page, PROT_NONE), 0);
  for (size_t first : {size_t{0}, size_t{1}, size_t{63}, size_t{64}, size_t{4095}}) {
    for (size_t i = 0; i < bytes; ++i) base[i] = pattern(i + first);
    const size_t n = bytes - first;  // up to the protected page
    hcomm::device::evict(base + first, n);
    hcomm::device::evict(base + first, 0);
    size_t wrong = 0;
    for (size_t i = 0; i < bytes; ++i) wrong += base[i] != pattern(i + first);
    EXPECT_EQ(wrong, 0u) << "evicting " << n << " bytes from +" << first;
  }
  ::munmap(mapped, bytes + 2 * page);
}
