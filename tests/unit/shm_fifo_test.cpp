// The shm transport's packet ring, in one process: packets of every size
// stream through it across many wraps with their contents intact, and each
// side maps the ring's pages ahead of its packets on the first pass
// (RingPages), only as far as the traffic reaches.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "plugins/transport/shm/fifo.hpp"

namespace hcomm::shm {
namespace {

// A shared mapping, as a FIFO's segment is.
struct Ring {
  explicit Ring(size_t size) : bytes(size) {
    void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    data = p == MAP_FAILED ? nullptr : static_cast<std::byte*>(p);
  }
  ~Ring() {
    if (data) ::munmap(data, bytes);
  }
  // Pages of [0, bytes) mapped into this process.
  size_t resident_pages() const {
    std::vector<unsigned char> in((bytes + kPage - 1) / kPage);
    if (::mincore(data, bytes, in.data()) != 0) return SIZE_MAX;
    size_t n = 0;
    for (unsigned char c : in) n += c & 1;
    return n;
  }
  size_t bytes;
  std::byte* data;
};

TEST(ShmFifo, PacketsOfEverySizeStreamAcrossWraps) {
  constexpr uint64_t kCapacity = 64 << 10;
  Ring ring(kCapacity);
  ASSERT_NE(ring.data, nullptr);
  FifoControl control{};
  FifoProducer out(control, ring.data, kCapacity);
  FifoConsumer in(control, ring.data, kCapacity);
  uint64_t sent = 0, received = 0;
  const uint64_t kPackets = 3000;
  // Payload sizes 0 .. max_payload; each byte of a packet says which packet.
  auto size_of = [&](uint64_t k) { return (k * 997) % (out.max_payload() + 1); };
  while (received < kPackets) {
    while (sent < kPackets) {
      PacketHeader* h = out.reserve(size_of(sent));
      if (!h) break;
      h->type = PacketType::Eager;
      std::memset(h + 1, static_cast<int>(sent & 0xff), size_of(sent));
      out.commit();
      ++sent;
    }
    const PacketHeader* h = in.peek();
    ASSERT_NE(h, nullptr) << "packet " << received << " of " << sent << " sent";
    ASSERT_EQ(h->payload_bytes, size_of(received));
    const auto* payload = reinterpret_cast<const unsigned char*>(h + 1);
    for (uint64_t i = 0; i < h->payload_bytes; ++i)
      ASSERT_EQ(payload[i], received & 0xff) << "packet " << received << ", byte " << i;
    in.release();
    ++received;
  }
  EXPECT_GT(out.written(), 20 * kCapacity);  // many wraps
  EXPECT_EQ(in.peek(), nullptr);
}

TEST(ShmFifo, PagesAreMappedAheadOnlyAsFarAsTheTraffic) {
  constexpr uint64_t kCapacity = 1 << 20;
  Ring ring(kCapacity);
  ASSERT_NE(ring.data, nullptr);
  RingPages probe(ring.data, kPage, true);
  probe.cover(1);
  if (ring.resident_pages() == 0) GTEST_SKIP() << "this kernel has no MADV_POPULATE_WRITE (Linux 5.14)";
  Ring fresh(kCapacity);
  ASSERT_EQ(fresh.resident_pages(), 0u);
  RingPages pages(fresh.data, kCapacity, true);
  pages.cover(100);
  const size_t first = fresh.resident_pages();
  EXPECT_GE(first, 16u);  // a step of 64 KiB at least
  EXPECT_LT(first, kCapacity / kPage / 4);
  pages.cover(300 << 10);
  EXPECT_GE(fresh.resident_pages(), size_t{300 << 10} / kPage);
  EXPECT_LT(fresh.resident_pages(), kCapacity / kPage);
  pages.cover(kCapacity);
  EXPECT_EQ(fresh.resident_pages(), kCapacity / kPage);
}

}  // namespace
}  // namespace hcomm::shm
