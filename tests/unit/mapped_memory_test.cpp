// Memory that ranks of one host map: the registry of mappable memory, the C
// API over it, the shm transport's allocations and registrations (mapped
// here a second time, as a peer maps them), and the window layout.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "core/common/error.hpp"
#include "core/exec/window.hpp"
#include "core/links/memory_registry.hpp"
#include "core/transport/transport.hpp"
#include "hcomm/hcomm.h"

namespace hcomm {
namespace {

const size_t kPage = static_cast<size_t>(::sysconf(_SC_PAGESIZE));

links::MemoryRegion region_at(uintptr_t base, size_t bytes, const void* maker) {
  links::MemoryRegion r{
      .base = base, .bytes = bytes, .maker = maker, .handle = nullptr, .desc = {}, .allocated = false};
  r.desc.address = base + 16;
  r.desc.bytes = bytes - 32;
  return r;
}

TEST(MemoryRegistry, FindsRegionsByAddressRangeAndRefusesOverlaps) {
  links::MemoryRegistry registry;
  const int maker = 0, other_maker = 0;
  registry.add(region_at(0x10000, 0x1000, &maker));
  registry.add(region_at(0x20000, 0x1000, &maker));
  EXPECT_EQ(registry.containing(reinterpret_cast<void*>(0x10000), 0x1000)->base, 0x10000u);
  EXPECT_EQ(registry.containing(reinterpret_cast<void*>(0x10800), 0x10)->base, 0x10000u);
  EXPECT_EQ(registry.containing(reinterpret_cast<void*>(0x11000), 0x10), nullptr);
  EXPECT_EQ(registry.containing(reinterpret_cast<void*>(0x0F000), 0x1000), nullptr);
  for (uintptr_t partly : {uintptr_t{0x0FFF0}, uintptr_t{0x10FF0}, uintptr_t{0x1FF80}}) {
    EXPECT_THROW(registry.containing(reinterpret_cast<void*>(partly), 0x100), Error) << std::hex << partly;
    EXPECT_THROW(registry.add(region_at(partly, 0x100, &maker)), Error) << std::hex << partly;
  }
  hcomm_mem_desc_t desc{};
  registry.describe(reinterpret_cast<void*>(0x20010), &maker, &desc);
  EXPECT_EQ(desc.address, 0x20010u);
  EXPECT_EQ(desc.bytes, 0x1000u - 32);
  registry.describe(reinterpret_cast<void*>(0x20010), &other_maker, &desc);
  EXPECT_EQ(desc.bytes, 0u) << "memory another transport made is not mappable through this one";
  registry.describe(reinterpret_cast<void*>(0x21000), &maker, &desc);
  EXPECT_EQ(desc.bytes, 0u);
  links::MemoryRegion* r = registry.containing(reinterpret_cast<void*>(0x20000), 1);
  EXPECT_EQ(registry.find(r), r);
  registry.remove(*r);
  EXPECT_EQ(registry.find(r), nullptr);
  registry.describe(reinterpret_cast<void*>(0x20010), &maker, &desc);
  EXPECT_EQ(desc.bytes, 0u);
}

TEST(MemoryApi, AllocatedMemoryIsZeroedPageAlignedAndFreedOnce) {
  void* p = nullptr;
  ASSERT_EQ(hcomm_mem_alloc(&p, 3 * kPage + 5), HCOMM_SUCCESS) << hcomm_get_last_error();
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % kPage, 0u);
  const auto* bytes = static_cast<const uint8_t*>(p);
  for (size_t i = 0; i < 3 * kPage + 5; ++i) ASSERT_EQ(bytes[i], 0) << i;
  std::memset(p, 0x77, 3 * kPage + 5);
  EXPECT_EQ(hcomm_mem_free(static_cast<uint8_t*>(p) + 8), HCOMM_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::strstr(hcomm_get_last_error(), "hcomm_mem_alloc"), nullptr) << hcomm_get_last_error();
  EXPECT_EQ(hcomm_mem_free(p), HCOMM_SUCCESS);
  EXPECT_EQ(hcomm_mem_free(p), HCOMM_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hcomm_mem_free(nullptr), HCOMM_SUCCESS);
  EXPECT_EQ(hcomm_mem_alloc(&p, 0), HCOMM_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hcomm_mem_alloc(nullptr, 8), HCOMM_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hcomm_mem_register(nullptr, p, 8, &p), HCOMM_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hcomm_mem_deregister(nullptr, p), HCOMM_ERR_INVALID_ARGUMENT);
}

// Without a device (tests/cuda covers the other case) device memory is
// refused, saying why; bad arguments are errors either way.
TEST(MemoryApi, DeviceMemoryWithoutADeviceIsUnsupported) {
  void* p = reinterpret_cast<void*>(0x1);
  EXPECT_EQ(hcomm_mem_alloc_device(nullptr, 8), HCOMM_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hcomm_mem_alloc_device(&p, 0), HCOMM_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(p, nullptr);
  const hcomm_result_t rc = hcomm_mem_alloc_device(&p, 4096);
  if (rc == HCOMM_SUCCESS) {
    EXPECT_EQ(hcomm_mem_free(p), HCOMM_SUCCESS);
    GTEST_SKIP() << "a device is present: tests/cuda checks its memory";
  }
  EXPECT_EQ(rc, HCOMM_ERR_UNSUPPORTED) << hcomm_get_last_error();
  EXPECT_EQ(p, nullptr);
  EXPECT_NE(std::strstr(hcomm_get_last_error(), "no device plugin sees a device"), nullptr) << hcomm_get_last_error();
}

// The shm transport's memory, mapped a second time in this process as a peer
// would map it: both views are the same memory.
class ShmMemory : public ::testing::Test {
 protected:
  void SetUp() override {
    t_ = transport::memory_transport();
    if (!t_) GTEST_SKIP() << "no loaded transport maps memory";
  }
  const hcomm_transport_v1_t& api() const { return t_->iface(); }
  uint8_t* map(const hcomm_mem_desc_t& desc, void** mapping) {
    void* p = nullptr;
    EXPECT_EQ(api().mem_map(t_->ctx(), &desc, &p, mapping), HCOMM_SUCCESS) << last_error();
    return static_cast<uint8_t*>(p);
  }
  transport::Transport* t_ = nullptr;
};

TEST_F(ShmMemory, AllocatedMemoryIsSharedWithItsMapping) {
  void *p = nullptr, *mem = nullptr, *mapping = nullptr;
  hcomm_mem_desc_t desc{};
  ASSERT_EQ(api().mem_alloc(t_->ctx(), 100000, &p, &mem, &desc), HCOMM_SUCCESS) << last_error();
  EXPECT_EQ(desc.address, reinterpret_cast<uintptr_t>(p));
  EXPECT_EQ(desc.bytes, 100000u);
  uint8_t* view = map(desc, &mapping);
  ASSERT_NE(view, nullptr);
  EXPECT_NE(view, p);
  std::memset(p, 0x5A, 100000);
  view[99999] = 0x11;
  EXPECT_EQ(view[0], 0x5A);
  EXPECT_EQ(static_cast<uint8_t*>(p)[99999], 0x11);
  EXPECT_EQ(api().mem_release(mem), HCOMM_SUCCESS);
  EXPECT_EQ(view[0], 0x5A) << "a peer's mapping outlives the owner's release";
  EXPECT_EQ(api().mem_unmap(mapping), HCOMM_SUCCESS);
}

// A registered buffer keeps its address and contents; its whole pages are
// shared with the mapping until it is released, then private again.
TEST_F(ShmMemory, RegistrationMovesWholePagesInPlaceAndBack) {
  const size_t bytes = 64 * kPage + 13;
  std::unique_ptr<uint8_t[]> storage(new uint8_t[bytes + 3]);
  uint8_t* buf = storage.get() + 3;
  for (size_t i = 0; i < bytes; ++i) buf[i] = static_cast<uint8_t>(i * 7 + 1);
  void *mem = nullptr, *mapping = nullptr;
  hcomm_mem_desc_t desc{};
  ASSERT_EQ(api().mem_register(t_->ctx(), buf, bytes, &mem, &desc), HCOMM_SUCCESS) << last_error();
  const uintptr_t start = reinterpret_cast<uintptr_t>(buf);
  EXPECT_EQ(desc.address, (start + kPage - 1) / kPage * kPage);
  EXPECT_EQ(desc.address + desc.bytes, (start + bytes) / kPage * kPage);
  for (size_t i = 0; i < bytes; ++i) ASSERT_EQ(buf[i], static_cast<uint8_t>(i * 7 + 1)) << i;
  uint8_t* view = map(desc, &mapping);
  const size_t at = desc.address - start;
  EXPECT_EQ(std::memcmp(view, buf + at, desc.bytes), 0);
  buf[at + 5] = 0xEE;
  EXPECT_EQ(view[5], 0xEE) << "the registered pages are the mapping's";
  ASSERT_EQ(api().mem_release(mem), HCOMM_SUCCESS) << last_error();
  for (size_t i = 0; i < bytes; ++i) ASSERT_EQ(buf[i], i == at + 5 ? 0xEE : static_cast<uint8_t>(i * 7 + 1)) << i;
  buf[at + 6] = 0xDD;
  EXPECT_NE(view[6], 0xDD) << "after release the buffer's pages are private again";
  EXPECT_EQ(api().mem_unmap(mapping), HCOMM_SUCCESS);
}

// Memory that must not move (the stack, memory shared already) and buffers
// without a whole page register as unmappable.
TEST_F(ShmMemory, UnmovableMemoryRegistersAsUnmappable) {
  // The thread's stack around this frame: not a local array, which
  // AddressSanitizer keeps in frames of its own on the heap.
  uint8_t* stack = static_cast<uint8_t*>(__builtin_frame_address(0)) - kPage / 2;
  void* shared = ::mmap(nullptr, 4 * kPage, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(shared, MAP_FAILED);
  std::vector<uint8_t> small(kPage / 2);
  const std::pair<void*, size_t> cases[] = {{stack, 3 * kPage + 100}, {shared, 4 * kPage}, {small.data(), small.size()}};
  for (auto [ptr, bytes] : cases) {
    void* mem = nullptr;
    hcomm_mem_desc_t desc{};
    desc.bytes = 1;
    ASSERT_EQ(api().mem_register(t_->ctx(), ptr, bytes, &mem, &desc), HCOMM_SUCCESS) << last_error();
    EXPECT_EQ(desc.bytes, 0u) << ptr;
    EXPECT_EQ(api().mem_release(mem), HCOMM_SUCCESS);
  }
  ::munmap(shared, 4 * kPage);
}

TEST_F(ShmMemory, DescriptionsOfOtherProcessesOrMadeUpOnesDoNotMap) {
  void *p = nullptr, *mem = nullptr, *mapping = nullptr;
  hcomm_mem_desc_t desc{};
  ASSERT_EQ(api().mem_alloc(t_->ctx(), kPage, &p, &mem, &desc), HCOMM_SUCCESS);
  hcomm_mem_desc_t wrong = desc;
  wrong.blob_len = 3;
  EXPECT_EQ(api().mem_map(t_->ctx(), &wrong, &p, &mapping), HCOMM_ERR_INVALID_ARGUMENT);
  wrong = desc;
  wrong.bytes = desc.bytes * 2;
  EXPECT_NE(api().mem_map(t_->ctx(), &wrong, &p, &mapping), HCOMM_SUCCESS);
  EXPECT_EQ(api().mem_release(mem), HCOMM_SUCCESS);
  EXPECT_EQ(api().mem_map(t_->ctx(), &desc, &p, &mapping), HCOMM_ERR_REMOTE) << "released memory maps no more";
}

TEST(WindowLayout, FlagsOnTheirOwnLinesAndHalvesOnPages) {
  const exec::window::Layout layout{5, 1 << 16};
  EXPECT_EQ(layout.flags_offset() % exec::window::kLine, 0u);
  // A flag is a line per call parity; a writer's lines of one parity lie in
  // match order, so that a payload over several flags is one run of lines.
  const uint64_t line = exec::window::kLine;
  EXPECT_EQ(layout.flag_offset(0, 1, 0) - layout.flag_offset(0, 0, 0), line);
  EXPECT_EQ(layout.flag_offset(3, 5, 1) - layout.flag_offset(3, 4, 1), line);
  EXPECT_EQ(layout.flag_offset(1, 0, 0) - layout.flag_offset(0, 0, 0), HCOMM_MAX_SIGNALS * line);
  EXPECT_EQ(layout.flag_offset(0, 0, 1) - layout.flag_offset(0, 0, 0), 5 * HCOMM_MAX_SIGNALS * line);
  EXPECT_GE(layout.data_offset(), layout.flag_offset(4, HCOMM_MAX_SIGNALS - 1, 1) + line);
  EXPECT_EQ(layout.data_offset() % exec::window::kPage, 0u);
  EXPECT_EQ(layout.total_bytes(), layout.data_offset() + 2 * (1u << 16));
  EXPECT_LT(exec::window::flag_value(3, HCOMM_MAX_SIGNAL_OCCURRENCES), exec::window::flag_value(4, 1));
  EXPECT_EQ(exec::window::call_of(exec::window::flag_value(7, 12)), 7u);
}

}  // namespace
}  // namespace hcomm
