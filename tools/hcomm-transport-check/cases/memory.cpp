// Mapped memory (ABI 1.1, skipped without it): regions from mem_alloc and
// registered buffers mapped and written by every peer, copies by address,
// the errors of bad descriptions and addresses, whether a registration still
// holds its memory (ABI 1.8), and what a dead peer leaves.
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "../payload.hpp"
#include "../proc_self.hpp"
#include "cases.hpp"
#include "exchange.hpp"

namespace hcomm::tcheck {

namespace {

constexpr size_t kSlot = 64 * 1024 + 24;                 // what a rank writes into each peer's region
constexpr size_t kRegisteredBytes = 2 * 1024 * 1024 + 100;  // a malloc'd buffer, registered at an odd address
constexpr uint64_t kRegisteredId = 1, kMappedWriteId = 2, kCopiedWriteId = 3;

std::vector<uint8_t> payload_bytes(const Payload& p) {
  std::vector<uint8_t> bytes(p.size());
  p.fill(bytes.data());
  return bytes;
}

// `desc` must lie inside [ptr, ptr + bytes), and cover it all when `whole`.
void check_desc(const char* call, const hcomm_mem_desc_t& desc, const void* ptr, size_t bytes, bool whole) {
  const uint64_t start = reinterpret_cast<uintptr_t>(ptr), end = start + bytes;
  if (desc.blob_len > HCOMM_MEM_BLOB_BYTES)
    TCHECK_FAIL("%s: the description's blob_len is %u, above HCOMM_MEM_BLOB_BYTES", call, desc.blob_len);
  if (desc.bytes && (desc.address < start || desc.address + desc.bytes > end))
    TCHECK_FAIL("%s: the description covers %#llx..%#llx, outside the memory %#llx..%#llx", call,
                static_cast<unsigned long long>(desc.address), static_cast<unsigned long long>(desc.address + desc.bytes),
                static_cast<unsigned long long>(start), static_cast<unsigned long long>(end));
  if (whole && (desc.address != start || desc.bytes < bytes))
    TCHECK_FAIL("%s: the description covers %llu bytes at %#llx, not all %zu bytes at %p", call,
                static_cast<unsigned long long>(desc.bytes), static_cast<unsigned long long>(desc.address), bytes, ptr);
}

// A call that must fail, with a code and a text.
template <class F>
void expect_error(RankTransport& s, const std::string& what, F&& call) {
  std::string text;
  hcomm_result_t rc = s.call(call, &text);
  if (rc == HCOMM_SUCCESS) TCHECK_FAIL("%s succeeded", what.c_str());
  if (text.empty()) TCHECK_FAIL("%s failed with %s but set no error text", what.c_str(), result_name(rc).c_str());
}

// This rank's region and registered buffer, published in its slot.
struct OwnMemory {
  void* region = nullptr;
  void* region_handle = nullptr;
  std::vector<uint8_t> storage;
  uint8_t* buffer = nullptr;
  void* buffer_handle = nullptr;
};

OwnMemory publish_memory(RankTransport& s, size_t region_bytes) {
  const hcomm_transport_v1_t& api = s.api();
  RankSlot& slot = s.shared().slots[s.rank()];
  OwnMemory m;
  s.phase("memory: mem_alloc");
  s.require("mem_alloc", [&] { return api.mem_alloc(s.context(), region_bytes, &m.region, &m.region_handle, &slot.allocated); });
  if (reinterpret_cast<uintptr_t>(m.region) % static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE)))
    TCHECK_FAIL("mem_alloc returned %p, which is not page aligned", m.region);
  for (size_t i = 0; i < region_bytes; ++i)
    if (static_cast<const uint8_t*>(m.region)[i]) TCHECK_FAIL("mem_alloc memory is not zeroed (byte %zu)", i);
  check_desc("mem_alloc", slot.allocated, m.region, region_bytes, true);

  s.phase("memory: mem_register");
  m.storage.resize(kRegisteredBytes + 3);
  m.buffer = m.storage.data() + 3;
  const Payload contents(s.rank(), s.rank(), kRegisteredId, kRegisteredBytes);
  contents.fill(m.buffer);
  s.require("mem_register",
            [&] { return api.mem_register(s.context(), m.buffer, kRegisteredBytes, &m.buffer_handle, &slot.registered); });
  std::string wrong = contents.mismatch(m.buffer);
  if (!wrong.empty()) TCHECK_FAIL("mem_register changed the buffer it registered: %s", wrong.c_str());
  check_desc("mem_register", slot.registered, m.buffer, kRegisteredBytes, false);
  slot.buffer_address = reinterpret_cast<uintptr_t>(m.buffer);
  slot.buffer_bytes = kRegisteredBytes;
  return m;
}

// The part of rank `owner`'s registered buffer that `mapped` shows.
void check_registered_mapping(const RankSlot& owner_slot, int owner, const uint8_t* mapped) {
  const hcomm_mem_desc_t& d = owner_slot.registered;
  const std::vector<uint8_t> want = payload_bytes(Payload(owner, owner, kRegisteredId, kRegisteredBytes));
  const size_t at = d.address - owner_slot.buffer_address;
  if (std::memcmp(mapped, want.data() + at, d.bytes) != 0)
    TCHECK_FAIL("the mapping of rank %d's registered buffer does not show its contents", owner);
}

// ABI 1.8 mem_held, where offered: the region and the registration hold
// their memory; a buffer registered, unmapped and mapped anew at the same
// address does not, and releasing that registration leaves the new memory
// as it is.
void check_held(RankTransport& s, const OwnMemory& own) {
  const hcomm_transport_v1_t& api = s.api();
  if (!HCOMM_IFACE_HAS(&api, mem_held)) return;
  s.phase("memory: mem_held");
  auto held = [&](void* handle, const char* what) {
    int h = -1;
    const hcomm_result_t rc = api.mem_held(handle, &h);
    if (rc == HCOMM_ERR_UNSUPPORTED) return -1;
    if (rc != HCOMM_SUCCESS || (h != 0 && h != 1))
      TCHECK_FAIL("mem_held of %s returned %s with held %d", what, result_name(rc).c_str(), h);
    return h;
  };
  if (held(own.region_handle, "the region") == 0) TCHECK_FAIL("mem_held: the region is not held");
  if (held(own.buffer_handle, "the registration") == 0) TCHECK_FAIL("mem_held: the registration is not held");
  const size_t bytes = 4 * static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  void* at = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (at == MAP_FAILED) TCHECK_FAIL("mmap of %zu bytes failed", bytes);
  void* handle = nullptr;
  hcomm_mem_desc_t desc{};
  s.require("mem_register of a mapped buffer", [&] { return api.mem_register(s.context(), at, bytes, &handle, &desc); });
  const int before = held(handle, "a fresh registration");
  ::munmap(at, bytes);
  void* again = ::mmap(at, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  if (again != at) TCHECK_FAIL("mapping %zu bytes again at %p failed", bytes, at);
  std::memset(at, 0x6B, bytes);
  if (desc.bytes && before == 0) TCHECK_FAIL("mem_held: a fresh registration is not held");
  if (desc.bytes && before == 1 && held(handle, "a registration whose memory was unmapped") != 0)
    TCHECK_FAIL("mem_held: a registration whose memory was unmapped and mapped anew is still held");
  s.require("mem_release of a registration whose memory was unmapped", [&] { return api.mem_release(handle); });
  for (size_t i = 0; i < bytes; ++i)
    if (static_cast<const uint8_t*>(at)[i] != 0x6B)
      TCHECK_FAIL("mem_release of a registration whose memory was unmapped changed the new memory there");
  ::munmap(at, bytes);
}

}  // namespace

// Every rank maps every peer's region and registered buffer, checks what it
// sees, writes its slot of each peer's region (mapped, and by address where
// the plugin copies by address), and reads each registered buffer by
// address; each owner then checks its region. Releasing must restore the
// registered buffer and leave no descriptor behind.
void run_memory(RankContext& ctx) {
  if (!ctx.plugin.maps_memory()) throw Skipped("the plugin has no mapped-memory functions");
  RankTransport& s = ctx.transport;
  const hcomm_transport_v1_t& api = s.api();
  const bool copies = ctx.plugin.copies_by_address();
  const int n = ctx.nranks, me = ctx.rank;
  s.start();
  const size_t fds_before = open_fds().size();
  const size_t region_bytes = 2 * static_cast<size_t>(n) * kSlot;
  OwnMemory own = publish_memory(s, region_bytes);
  s.barrier_polling("memory: waiting for every rank's memory");

  for (int p : peers_of(s)) {
    const RankSlot& peer = s.shared().slots[p];
    s.phase(format("memory: mapping rank %d's memory", p));
    void *region = nullptr, *region_mapping = nullptr;
    s.require(format("mem_map of rank %d's region", p),
              [&] { return api.mem_map(s.context(), &peer.allocated, &region, &region_mapping); });
    Payload(p, me, kMappedWriteId, kSlot).fill(static_cast<uint8_t*>(region) + me * kSlot);
    if (peer.registered.bytes) {
      void *buffer = nullptr, *buffer_mapping = nullptr;
      s.require(format("mem_map of rank %d's registered buffer", p),
                [&] { return api.mem_map(s.context(), &peer.registered, &buffer, &buffer_mapping); });
      check_registered_mapping(peer, p, static_cast<const uint8_t*>(buffer));
      s.require("mem_unmap", [&] { return api.mem_unmap(buffer_mapping); });
    }
    s.require("mem_unmap", [&] { return api.mem_unmap(region_mapping); });
    if (!copies) continue;
    s.phase(format("memory: copies by address with rank %d", p));
    std::vector<uint8_t> read(peer.buffer_bytes);
    s.require(format("ep_read of rank %d's registered buffer", p),
              [&] { return api.ep_read(s.endpoint(p), read.data(), peer.buffer_address, read.size()); });
    std::string wrong = Payload(p, p, kRegisteredId, kRegisteredBytes).mismatch(read.data());
    if (!wrong.empty()) TCHECK_FAIL("ep_read of rank %d's registered buffer: %s", p, wrong.c_str());
    const std::vector<uint8_t> slot = payload_bytes(Payload(p, me, kCopiedWriteId, kSlot));
    s.require(format("ep_write into rank %d's region", p), [&] {
      return api.ep_write(s.endpoint(p), slot.data(), peer.allocated.address + (n + me) * kSlot, slot.size());
    });
    expect_error(s, format("ep_read of address 8 in rank %d", p),
                 [&] { return api.ep_read(s.endpoint(p), read.data(), 8, 8); });
  }
  s.barrier_polling("memory: waiting for every rank's writes");

  s.phase("memory: checking what the peers wrote");
  for (int p : peers_of(s)) {
    const auto* region = static_cast<const uint8_t*>(own.region);
    std::string wrong = Payload(me, p, kMappedWriteId, kSlot).mismatch(region + p * kSlot);
    if (!wrong.empty()) TCHECK_FAIL("what rank %d wrote through its mapping: %s", p, wrong.c_str());
    wrong = copies ? Payload(me, p, kCopiedWriteId, kSlot).mismatch(region + (n + p) * kSlot) : "";
    if (!wrong.empty()) TCHECK_FAIL("what rank %d wrote with ep_write: %s", p, wrong.c_str());
  }
  hcomm_mem_desc_t garbage = s.shared().slots[me].allocated;
  garbage.blob_len = HCOMM_MEM_BLOB_BYTES;
  std::memset(garbage.blob, 0x5A, sizeof garbage.blob);
  void *ignored = nullptr, *ignored_mapping = nullptr;
  expect_error(s, "mem_map of a made-up description",
               [&] { return api.mem_map(s.context(), &garbage, &ignored, &ignored_mapping); });

  check_held(s, own);
  s.phase("memory: releasing");
  s.require("mem_release of the registration", [&] { return api.mem_release(own.buffer_handle); });
  std::string wrong = Payload(me, me, kRegisteredId, kRegisteredBytes).mismatch(own.buffer);
  if (!wrong.empty()) TCHECK_FAIL("mem_release of a registration changed the buffer: %s", wrong.c_str());
  std::memset(own.buffer, 0x3C, kRegisteredBytes);  // still this process's writable memory
  s.require("mem_release of the region", [&] { return api.mem_release(own.region_handle); });
  std::vector<std::string> fds = open_fds();
  if (fds.size() != fds_before)
    TCHECK_FAIL("%zu file descriptors open after every region was released, %zu before the first", fds.size(),
                fds_before);
  if (me == 0)
    ctx.note(format("regions of %zu bytes, registered buffers of %zu%s", region_bytes, kRegisteredBytes,
                    copies ? ", copies by address" : ""));
  s.finish();
}

// The last rank dies with its memory mapped by the others: what they mapped
// stays readable, mapping more of it and copying from it by address fail
// with an error (HCOMM_ERR_REMOTE for the copy, naming the rank).
void run_memory_death(RankContext& ctx) {
  if (!ctx.plugin.maps_memory()) throw Skipped("the plugin has no mapped-memory functions");
  RankTransport& s = ctx.transport;
  const hcomm_transport_v1_t& api = s.api();
  const int victim = ctx.nranks - 1;
  s.start();
  OwnMemory own = publish_memory(s, kSlot);
  Payload(ctx.rank, ctx.rank, kMappedWriteId, kSlot).fill(static_cast<uint8_t*>(own.region));
  s.barrier_polling("memory-death: waiting for every rank's memory");
  const RankSlot& dead = s.shared().slots[victim];
  void *region = nullptr, *mapping = nullptr;
  if (ctx.rank != victim)
    s.require("mem_map of the victim's region", [&] { return api.mem_map(s.context(), &dead.allocated, &region, &mapping); });
  s.barrier_polling("memory-death: waiting for the survivors to map");
  if (ctx.rank == victim) {
    ::raise(SIGKILL);
    ::_exit(1);
  }

  s.phase("memory-death: copying from the dead rank until it fails");
  const Deadline limit = Deadline::after(2.0);
  std::vector<uint8_t> read(dead.buffer_bytes);
  std::string text;
  hcomm_result_t rc = HCOMM_SUCCESS;
  while (rc == HCOMM_SUCCESS && !limit.expired()) {
    if (!ctx.plugin.copies_by_address()) break;
    rc = s.call([&] { return api.ep_read(s.endpoint(victim), read.data(), dead.buffer_address, read.size()); }, &text);
    if (rc == HCOMM_SUCCESS) ::usleep(1000);
  }
  if (ctx.plugin.copies_by_address() && rc != HCOMM_ERR_REMOTE)
    TCHECK_FAIL("ep_read from rank %d still %s 2 s after it died, expected HCOMM_ERR_REMOTE", victim,
                describe_error(rc, text).c_str());
  if (ctx.plugin.copies_by_address() && text.find(std::to_string(victim)) == std::string::npos)
    TCHECK_FAIL("the error of ep_read from the dead rank does not name it (rank %d): \"%s\"", victim, text.c_str());
  std::string wrong = Payload(victim, victim, kMappedWriteId, kSlot).mismatch(static_cast<const uint8_t*>(region));
  if (!wrong.empty()) TCHECK_FAIL("the dead rank's region, mapped before it died: %s", wrong.c_str());
  // The death may still be under way (its memory gone, its files not yet
  // closed): mapping must fail once it is over, within the same 2 s.
  const std::string late_what = "mem_map of the dead rank's registered buffer";
  for (;;) {
    void *late = nullptr, *late_mapping = nullptr;
    auto map = [&] { return api.mem_map(s.context(), &dead.registered, &late, &late_mapping); };
    if (limit.expired()) {
      expect_error(s, late_what + " 2 s after it died", map);
      break;
    }
    std::string map_text;
    if (s.call(map, &map_text) != HCOMM_SUCCESS) {
      if (map_text.empty()) TCHECK_FAIL("%s failed but set no error text", late_what.c_str());
      break;
    }
    s.require("mem_unmap of a mapping made while the rank was dying", [&] { return api.mem_unmap(late_mapping); });
    ::usleep(1000);
  }
  s.require("mem_unmap", [&] { return api.mem_unmap(mapping); });
  s.require("mem_release", [&] { return api.mem_release(own.buffer_handle); });
  s.require("mem_release", [&] { return api.mem_release(own.region_handle); });
  if (ctx.rank == 0) ctx.note(format("ep_read: \"%s\"", text.c_str()));

  s.phase("memory-death: waiting for the other survivors");
  s.shared().survivors.wait(s.deadline());
  s.close();
  s.finalize();
}

}  // namespace hcomm::tcheck
