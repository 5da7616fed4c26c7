// The shared-memory transport's packet ring as its consumer reads it
// (plugins/transport/shm/fifo.cpp): the producer's side of the ring (the
// head it published and the bytes of the ring) comes from the input, as a
// corrupt or hostile peer could leave them; the consumer's tail starts at a
// packet boundary, where it always is. Every packet that peek returns is
// read whole, as the endpoint does; a ring buffer of exactly the ring's size
// makes a packet reaching past it an ASan finding. A corrupt header is an
// hcomm error.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "hcomm/plugin/util.hpp"
#include "plugins/transport/shm/fifo.hpp"

using namespace hcomm::shm;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider input(data, size);
  // The smallest rings: 1 to 4 cache lines a slot.
  const uint64_t capacity = kSlotsPerFifo * kCacheLine * input.ConsumeIntegralInRange<uint64_t>(1, 4);
  auto control = std::make_unique<FifoControl>();
  const uint64_t tail = input.ConsumeIntegral<uint64_t>() / kCacheLine * kCacheLine;
  control->tail.store(tail);
  control->head.store(input.ConsumeBool() ? input.ConsumeIntegral<uint64_t>()
                                          : tail + input.ConsumeIntegralInRange<uint64_t>(0, capacity));
  auto ring = std::make_unique<std::byte[]>(capacity);
  const std::vector<uint8_t> contents = input.ConsumeRemainingBytes<uint8_t>();
  if (!contents.empty()) std::memcpy(ring.get(), contents.data(), std::min<size_t>(contents.size(), capacity));

  try {
    FifoConsumer consumer(*control, ring.get(), capacity);
    std::vector<std::byte> copy;
    // Around the ring a few times at most: a head far ahead keeps it readable
    // (the endpoint reads a bounded number of packets per call).
    for (uint64_t n = 0; n < 4 * capacity / kCacheLine; ++n) {
      const PacketHeader* packet = consumer.peek();
      if (!packet) break;
      copy.assign(payload_of(packet), payload_of(packet) + packet->payload_bytes);
      consumer.release();
    }
  } catch (const hcomm::plugin::Error&) {
  }
  return 0;
}
