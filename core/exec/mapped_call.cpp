#include "core/exec/mapped_call.hpp"

#include <algorithm>
#include <cstring>

#include "core/common/error.hpp"
#include "core/device/copy.hpp"
#include "core/device/evict.hpp"
#include "core/device/reduce.hpp"
#include "core/exec/operation.hpp"

namespace hcomm::exec {

namespace {

// Data copied by address lands here when it may not land in place.
constexpr size_t kStagingBytes = 256 << 10;
// A store into a peer's memory from this size on goes past this core's
// caches (device::copy_past_caches) where the peer's caches are apart from
// this core's (MappedIO::caches_apart): the peer reads it from memory.
constexpr uint64_t kStoresPastCachesFrom = 4 << 10;
// Mapped input read and evicted a block at a time, while its lines are near.
constexpr uint64_t kEvictBlock = 64 << 10;

// f(offset, bytes) over [0, bytes) of `mapped`; with `evict`, in blocks of
// whole units (elements), each evicted once f is done with it.
template <class F>
void reading(const uint8_t* mapped, uint64_t bytes, bool evict, uint64_t unit, F f) {
  if (!evict) return f(0, bytes);
  const uint64_t block = std::max(unit, kEvictBlock / unit * unit);
  for (uint64_t done = 0; done < bytes; done += block) {
    const uint64_t part = std::min(block, bytes - done);
    f(done, part);
    device::evict(mapped + done, part);
  }
}

// Calls f(offset in the span, bytes, local pointer or nullptr, peer address)
// for the parts of the span: mapped ones with their local pointer, the rest
// without. With `unit` above 1, parts whose ends would split a unit (an
// element) are all copied instead.
template <class F>
void for_each_part(uint64_t address, uint64_t bytes, const uint8_t* mapped, uint64_t lo, uint64_t hi, uint64_t unit,
                   F f) {
  const uint64_t end = address + bytes;
  uint64_t m0 = mapped ? std::clamp(lo, address, end) : end, m1 = mapped ? std::clamp(hi, m0, end) : end;
  if ((m0 - address) % unit || (m1 - address) % unit) m0 = m1 = end;
  if (address < m0) f(0, m0 - address, nullptr, address);
  if (m0 < m1) f(m0 - address, m1 - m0, mapped + (m0 - lo), m0);
  if (m1 < end) f(m1 - address, end - m1, nullptr, m1);
}

}  // namespace

MappedCall::~MappedCall() {
  if (begun_) io_->calls().busy = false;
}

bool MappedCall::begin(MappedIO* io, const Schedule& schedule, const Buffers& buffers, uint64_t signature) {
  if (!io)
    HCOMM_THROW(HCOMM_ERR_INTERNAL, "algorithm %s uses mapped-memory steps, but this communicator's ranks do not map "
                "each other's memory (HCOMM_VIEW_MAPPED is off)", schedule.algorithm.c_str());
  MappedIO::Calls& calls = io->calls();
  if (!begun_) {
    if (calls.busy) return false;
    if (schedule.window_extent > io->window_bytes())
      HCOMM_THROW(HCOMM_ERR_INTERNAL, "algorithm %s reaches %llu bytes into a window of %llu (HCOMM_WINDOW_BYTES)",
                  schedule.algorithm.c_str(), static_cast<unsigned long long>(schedule.window_extent),
                  static_cast<unsigned long long>(io->window_bytes()));
    io_ = io;
    own_ = &buffers;
    schedule_ = &schedule;
    calls.busy = begun_ = true;
    call_ = ++calls.begun;
    signature_ = signature;
  }
  // Every rank must have finished the call that last used this call's lap
  // (its flags' lines and publication), and where this call uses a half,
  // call_ - 2, whose readers the half served.
  const int me = io->rank();
  const uint64_t behind = schedule.uses_halves ? 2 : window::kLaps;
  for (int r = 0; r < io->nranks(); ++r) {
    if (r == me || calls.finished[r] + behind >= call_) continue;
    const std::atomic<uint64_t>& completed = io->header(r).completed;
    calls.finished[r] = completed.load(std::memory_order_acquire);
    if (calls.finished[r] + behind < call_) {
      calls.awaited = &completed;
      calls.awaited_value = call_ - behind;
      return false;
    }
  }
  calls.awaited = nullptr;
  window::Publication& p = io->header(me).published[window::lap_of(call_)];
  // A buffer no peer reaches is not described (nor registered automatically).
  auto expose = [&](window::Exposed& e, const void* ptr, uint64_t bytes, bool reached) {
    e.address = reinterpret_cast<uintptr_t>(ptr);
    e.bytes = ptr ? bytes : 0;
    e.in_window = e.hole_lo = e.hole_hi = 0;
    if (e.bytes && reached)
      io->describe(ptr, bytes, &e.mapped);
    else
      e.mapped.bytes = 0;
  };
  // In place one buffer holds the other (an allgather's SEND is a block of
  // RECV, a reduce-scatter's RECV a block of SEND): the larger is described
  // first, since registering it automatically would release a registration
  // of the smaller made before, whose description would then be stale.
  const bool recv_first = schedule.recv_bytes > schedule.send_bytes;
  if (recv_first) expose(p.recv, buffers.recv, schedule.recv_bytes, true);
  expose(p.send, buffers.send, schedule.send_bytes, schedule.peers_read_send);
  if (!recv_first) expose(p.recv, buffers.recv, schedule.recv_bytes, true);
  // A RECV peers map is read in place, as is one from kWindowCopiesBelow on
  // (by address); else peers read the window where the steps publish it, at
  // RECV's offsets, instead of copying it by address.
  recv_in_place_ = p.recv.mapped.bytes != 0 || p.recv.bytes >= kWindowCopiesBelow;
  if (schedule.publishes_recv && p.recv.bytes && !recv_in_place_) p.recv.in_window = 1;
  // Peers would copy a SEND they cannot map by address (cross-memory attach:
  // a system call, pinned pages, the kernel's copy). Where it fits this call's
  // half below every byte the steps use, or around the bytes this rank's own
  // steps use, one copy into it, which every peer maps, is faster, up to
  // kWindowCopiesBelow. Steps have not run yet, so SEND still holds the
  // input in place.
  const uint64_t b = p.send.bytes;
  if (schedule.peers_read_send && b && p.send.mapped.bytes == 0 && b <= io->window_bytes() &&
      b < kWindowCopiesBelow) {
    const bool below = b <= schedule.window_base;
    const bool around = !schedule.stores_to_windows && schedule.own_window_lo < schedule.own_window_hi &&
                        schedule.own_window_hi <= b;
    if (below || around) {
      const auto* send = static_cast<const uint8_t*>(buffers.send);
      const uint64_t lo = below ? b : schedule.own_window_lo, hi = below ? b : schedule.own_window_hi;
      device::copy(window(), send, lo);
      device::copy(window() + hi, send + hi, b - hi);
      p.send.in_window = 1;
      p.send.hole_lo = lo;
      p.send.hole_hi = hi;
    }
  }
  p.call = call_;
  running_ = true;
  return true;
}

// Nobody is woken for this: ranks wait for each other's calls to end only
// when a call did not synchronise with every rank, which is rare.
void MappedCall::end() {
  io_->header(io_->rank()).completed.store(call_, std::memory_order_release);
  MappedIO::Calls& calls = io_->calls();
  calls.busy = begun_ = running_ = false;
  calls.awaited = nullptr;
}

void MappedCall::bad_peer(int peer) const {
  HCOMM_THROW(HCOMM_ERR_INTERNAL, "algorithm %s names rank %d of a communicator of %d", schedule_->algorithm.c_str(),
              peer, io_->nranks());
}

const MappedIO::Calls::PeerBuffer& MappedCall::peer_buffer(int peer, uint32_t buffer) {
  MappedIO::Calls::PeerBuffer& b = io_->calls().buffers[peer][buffer == HCOMM_BUF_RECV ? 1 : 0];
  if (b.call == call_) return b;
  const window::Publication& p = io_->header(peer).published[window::lap_of(call_)];
  if (p.call != call_)
    HCOMM_THROW(HCOMM_ERR_INTERNAL, "algorithm %s reads the buffers of rank %d before that rank published them for "
                "this call: a step may touch a peer's memory only after a WAIT for a SIGNAL the peer raised",
                schedule_->algorithm.c_str(), peer);
  const window::Exposed& e = buffer == HCOMM_BUF_RECV ? p.recv : p.send;
  b = {.call = call_, .address = e.address, .bytes = e.bytes, .mapped = nullptr, .lo = 0, .hi = 0, .hole_lo = 0,
       .hole_hi = 0, .evict = false};
  if (e.in_window) {
    // A RECV published in part may be larger than the window; the rest of it
    // is copied by address.
    b.mapped = io_->half(peer, call_);
    b.lo = e.address;
    b.hi = e.address + std::min<uint64_t>(e.bytes, io_->window_bytes());
    b.hole_lo = e.address + e.hole_lo;
    b.hole_hi = e.address + e.hole_hi;
  } else if (e.mapped.bytes) {
    b.mapped = io_->map(peer, e.mapped);
    b.lo = e.mapped.address;
    b.hi = e.mapped.address + e.mapped.bytes;
    b.evict = buffer != HCOMM_BUF_RECV && io_->caches_apart(peer);
  }
  return b;
}

MappedCall::Span MappedCall::remote(int peer, const hcomm_bufref_t& ref, uint64_t offset, uint64_t bytes) {
  check_peer(peer);
  const uint64_t at = ref.offset + offset;
  if (ref.buffer == HCOMM_BUF_WINDOW) {
    // A window is mapped whole; its offsets stand for addresses.
    return {.peer = peer, .address = at, .bytes = bytes, .mapped = io_->half(peer, call_), .lo = 0,
            .hi = io_->window_bytes(), .evict = false};
  }
  const bool own = peer == io_->rank();
  const MappedIO::Calls::PeerBuffer* b = own ? nullptr : &peer_buffer(peer, ref.buffer);
  const uint64_t limit = own ? (ref.buffer == HCOMM_BUF_RECV ? schedule_->recv_bytes : schedule_->send_bytes) : b->bytes;
  if (at > limit || bytes > limit - at)
    HCOMM_THROW(HCOMM_ERR_INTERNAL, "algorithm %s reaches bytes %llu..%llu of rank %d's %s buffer, which holds %llu",
                schedule_->algorithm.c_str(), static_cast<unsigned long long>(at),
                static_cast<unsigned long long>(at + bytes), peer, ref.buffer == HCOMM_BUF_RECV ? "receive" : "send",
                static_cast<unsigned long long>(limit));
  if (own) {
    // This rank's own buffers, as if mapped at offsets.
    const void* base = ref.buffer == HCOMM_BUF_RECV ? own_->recv : own_->send;
    return {.peer = peer, .address = at, .bytes = bytes, .mapped = static_cast<const uint8_t*>(base), .lo = 0,
            .hi = limit, .evict = false};
  }
  const uint64_t address = b->address + at;
  if (address < b->hole_hi && address + bytes > b->hole_lo)  // not in the copy: by address
    return {.peer = peer, .address = address, .bytes = bytes, .mapped = nullptr, .lo = 0, .hi = 0, .evict = false};
  return {.peer = peer, .address = address, .bytes = bytes, .mapped = b->mapped, .lo = b->lo, .hi = b->hi,
          .evict = b->evict};
}

void MappedCall::load(int peer, const hcomm_bufref_t& src, uint64_t offset, uint8_t* dst, uint64_t bytes) {
  const Span s = remote(peer, src, offset, bytes);
  for_each_part(s.address, s.bytes, s.mapped, s.lo, s.hi, 1,
                [&](uint64_t at, uint64_t n, const uint8_t* local, uint64_t address) {
                  if (local)
                    reading(local, n, s.evict, 1,
                            [&](uint64_t d, uint64_t part) { device::copy(dst + at + d, local + d, part); });
                  else
                    io_->read(peer, address, dst + at, n);
                });
}

void MappedCall::load_reduce(int peer, const hcomm_bufref_t& src2, uint64_t offset, uint8_t* dst, const uint8_t* src,
                             uint64_t bytes, const device::Reduction& reduction, int divisor, device::Stores stores) {
  const Span s = remote(peer, src2, offset, bytes);
  const uint64_t es = reduction.elem_bytes;
  for_each_part(s.address, s.bytes, s.mapped, s.lo, s.hi, es,
                [&](uint64_t at, uint64_t n, const uint8_t* local, uint64_t address) {
                  if (local) {
                    reading(local, n, s.evict, es, [&](uint64_t d, uint64_t part) {
                      device::reduce(reduction, dst + at + d, src + at + d, local + d, elements(part, es), divisor,
                                     stores);
                    });
                  } else {
                    // Through a staging buffer that stays in cache: reading the
                    // peer's data into dst first would move dst through memory
                    // twice more. Its parts hold whole elements.
                    const uint64_t stage = std::max(es, kStagingBytes / es * es);
                    std::vector<uint8_t>& staging = io_->calls().staging;
                    staging.resize(std::max<uint64_t>(staging.size(), stage));
                    for (uint64_t done = 0; done < n; done += stage) {
                      const uint64_t part = std::min<uint64_t>(stage, n - done);
                      io_->read(peer, address + done, staging.data(), part);
                      device::reduce(reduction, dst + at + done, src + at + done, staging.data(), elements(part, es),
                                     divisor, stores);
                    }
                  }
                });
}

void MappedCall::store(int peer, const hcomm_bufref_t& dst, uint64_t offset, const uint8_t* src, uint64_t bytes) {
  const Span s = remote(peer, dst, offset, bytes);
  const bool past_caches = io_->caches_apart(peer);
  for_each_part(s.address, s.bytes, s.mapped, s.lo, s.hi, 1,
                [&](uint64_t at, uint64_t n, const uint8_t* local, uint64_t address) {
                  if (local && past_caches && n >= kStoresPastCachesFrom)
                    device::copy_past_caches(const_cast<uint8_t*>(local), src + at, n);
                  else if (local)
                    device::copy(const_cast<uint8_t*>(local), src + at, n);
                  else
                    io_->write(peer, address, src + at, n);
                });
}

// A payload fills the lines of flag `match` and the ones after it, in order,
// each raised once its part is in. Their reader read them a lap ago, so
// each write waits for its line to come back; asking for them all first
// (window::claim) overlaps those transfers.
// A release store and a plain look at the doorbell: a fence between them
// would stall every signal for a cross-core round trip. The cost is a rare
// wake-up lost when the peer announces its sleep just as the flag is raised;
// it then sleeps until its timeout (Peers::wait: a millisecond at most).
// The call's signature travels in the line too (window::FlagLine).
void MappedCall::signal(int peer, uint32_t match, uint64_t occurrence, const uint8_t* payload, uint64_t bytes) {
  check_peer(peer);
  const uint64_t value = window::flag_value(call_, bytes ? window::payload_occurrence(signature_) : occurrence);
  const uint32_t lines = window::lines_of(bytes);
  for (uint32_t j = 0; j < lines; ++j) window::claim(&io_->flag(peer, io_->rank(), match + j, call_));
  for (uint32_t j = 0; j < lines; ++j) {
    window::FlagLine& line = io_->flag(peer, io_->rank(), match + j, call_);
    const uint64_t at = j * window::kPayloadBytes;
    if (bytes)
      std::memcpy(line.payload, payload + at, std::min(window::kPayloadBytes, bytes - at));
    else
      window::put_signature(line, signature_);
    line.value.store(value, std::memory_order_release);
  }
  window::Header& h = io_->header(peer);
  if (h.sleeping.load(std::memory_order_relaxed)) window::ring(h);
}

// Looks at a payload's lines in order, up to the first not raised yet: the
// first is seen as soon as the peer raised it, while it still writes the
// others, whose transfers then overlap its writes. Raising the first line
// last and waiting on it alone is no faster, and looking at every line in
// each pass takes lines back from the writer while it writes them, which
// costs most where the CPUs are busy.
bool MappedCall::wait(int peer, uint32_t match, uint64_t occurrence, uint8_t* payload, uint64_t bytes) {
  check_peer(peer);
  const uint64_t want = window::flag_value(call_, bytes ? 1 : occurrence);
  MappedIO::Calls& calls = io_->calls();
  uint64_t seen = 0;
  for (uint32_t j = 0; j < window::lines_of(bytes); ++j) {
    window::FlagLine& line = io_->flag(io_->rank(), peer, match + j, call_);
    const uint64_t value = line.value.load(std::memory_order_acquire);
    if (value < want) {
      calls.awaited = &line.value;
      calls.awaited_value = want;
      return false;
    }
    // A payload's lines carry the signature in their occurrence, a plain
    // signal's line in its payload bytes.
    const uint64_t signature = bytes ? 0 : window::signature_of(line);
    if (window::call_of(value) == call_ &&
        (bytes ? value != window::flag_value(call_, window::payload_occurrence(signature_)) : signature != signature_))
        [[unlikely]] {
      calls.awaited = nullptr;
      calls.mismatched = peer;
      return false;
    }
    if (j == 0) seen = value;
  }
  calls.awaited = nullptr;
  // The peer is in call call_of(seen), so it finished the one before.
  calls.finished[peer] = std::max(calls.finished[peer], window::call_of(seen) - 1);
  for (uint64_t at = 0, j = 0; at < bytes; at += window::kPayloadBytes, ++j)
    std::memcpy(payload + at, io_->flag(io_->rank(), peer, match + j, call_).payload,
                std::min(window::kPayloadBytes, bytes - at));
  return true;
}

}  // namespace hcomm::exec
