// The window every rank of a host-mapped communicator shares with the others
// (HCOMM_VIEW_MAPPED): a header, the flags peers raise for this rank, and two
// halves of window_bytes that calls use in turn (HCOMM_BUF_WINDOW).
//
// Flag (writer w, match m) in rank r's window is written by rank w only and
// read by rank r: the value of a mapped call's j-th SIGNAL(r, m) of rank w is
// call << kOccurrenceBits | j, so a flag (each of its lines) only grows and
// WAIT compares. A flag has a line per lap: calls take the kLaps laps in
// turn, and the two halves by parity. A writer's lines of one lap lie in
// match order, next to each other, so that a payload over several flags is
// one run of lines.
// Everything more than one process writes is a lock-free std::atomic.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "hcomm/plugin/algorithm.h"
#include "hcomm/plugin/transport.h"

namespace hcomm::exec::window {

inline constexpr uint64_t kMagic = 0x574f444e49574d48ull;  // "HMWINDOW"
// Raised whenever the window's layout or meaning changes: ranks of different
// builds refuse each other's windows.
inline constexpr uint32_t kVersion = 7;
inline constexpr uint64_t kLine = 64;
inline constexpr uint64_t kPage = 4096;
// A call that uses no half (its data travels in the signals) may begin once
// every rank finished the call kLaps before it, not the one 2 before: the
// root of back-to-back small broadcasts, say, then runs ahead of the others
// rather than waiting on each call for a peer's progress.
// The flags take kLaps x HCOMM_MAX_SIGNALS lines per rank of the
// communicator in every window: 32 KiB per rank.
inline constexpr uint64_t kLaps = 8;
constexpr uint64_t lap_of(uint64_t call) { return call % kLaps; }
inline constexpr int kOccurrenceBits = 20;
inline constexpr uint64_t kMaxOccurrences = HCOMM_MAX_SIGNAL_OCCURRENCES;
static_assert(kMaxOccurrences < (uint64_t{1} << kOccurrenceBits), "occurrences must fit below the call number");

constexpr uint64_t flag_value(uint64_t call, uint64_t occurrence) { return call << kOccurrenceBits | occurrence; }
// A signal with a payload is its pair's only one in the call (occurrence 1),
// so its occurrence bits carry part of the call's signature instead: any
// value from 1 on is taken as that occurrence, and the waiter compares them.
constexpr uint64_t payload_occurrence(uint64_t signature) {
  return (signature & ((uint64_t{1} << (kOccurrenceBits - 1)) - 1)) << 1 | 1;
}
constexpr uint64_t call_of(uint64_t value) { return value >> kOccurrenceBits; }

static_assert(std::atomic<uint64_t>::is_always_lock_free && std::atomic<uint32_t>::is_always_lock_free,
              "atomics shared between processes must be lock-free");

inline constexpr uint64_t kPayloadBytes = HCOMM_SIGNAL_PAYLOAD_BYTES;

// A flag's line: its value and the payload a signal may carry, so that a
// small message arrives with its flag; a signal without payload puts the
// call's signature there instead, for the waiter to compare. A call uses the
// lines of its lap; the writer of call k + kLaps waits until every rank
// finished call k, so a payload is never rewritten while its reader still
// looks at it. A plain signal may raise its line again in the same call while
// a waiter reads the signature, so the signature goes through atomics.
struct alignas(kLine) FlagLine {
  std::atomic<uint64_t> value;
  union {
    uint8_t payload[kPayloadBytes];
    uint64_t signature;
  };
};
static_assert(sizeof(FlagLine) == kLine, "a flag's value and payload share one cache line");

inline void put_signature(FlagLine& line, uint64_t signature) {
  std::atomic_ref<uint64_t>(line.signature).store(signature, std::memory_order_relaxed);
}
inline uint64_t signature_of(FlagLine& line) {
  return std::atomic_ref<uint64_t>(line.signature).load(std::memory_order_relaxed);
}

// Asks for a line's ownership ahead of writing it, so that the writes of
// several lines another core holds wait for their transfers at once, not
// in turn. PREFETCHW is a no-op on x86 processors without it.
inline void claim(const void* line) {
#if defined(__x86_64__) || defined(__i386__)
  asm volatile("prefetchw %0" : : "m"(*static_cast<const char*>(line)));
#else
  __builtin_prefetch(line, 1);
#endif
}

// The lines a signal of `bytes` of payload raises (one without).
constexpr uint32_t lines_of(uint64_t bytes) {
  return bytes <= kPayloadBytes ? 1 : static_cast<uint32_t>((bytes + kPayloadBytes - 1) / kPayloadBytes);
}

// A user buffer this rank lets peers read or write during one call: where it
// lies in this rank's address space and the part of it peers can map, or,
// `in_window`, a copy of it at the start of the owner's half for the call,
// but for bytes [hole_lo, hole_hi), where the owner's steps use the window
// (a SEND the core copied there; a RECV the steps publish there, of which
// peers read only the published bytes).
struct Exposed {
  uint64_t address;
  uint64_t bytes;
  hcomm_mem_desc_t mapped;
  uint64_t in_window;
  uint64_t hole_lo, hole_hi;
};

struct alignas(kLine) Publication {
  uint64_t call;  // the mapped call whose buffers these are
  Exposed send;
  Exposed recv;
};

struct Header {
  uint64_t magic;  // written once the rest of the window is initialised
  uint32_t version;
  int32_t rank;
  int32_t nranks;
  uint64_t window_bytes;
  // The last mapped call this rank finished: a rank writes its half of call
  // k only once every rank finished call k - 2, which read it before, and
  // its flags' lines and publication of call k once every rank finished
  // call k - kLaps.
  alignas(kLine) std::atomic<uint64_t> completed;
  // Doorbell: the owner sleeps on `bell`, for a bounded time, after
  // announcing it in `sleeping`; a rank that raised a flag for it rings it.
  // The signaller does not fence between the flag and its look at `sleeping`,
  // so a wake-up may be lost in that instant: the sleep then ends by its
  // timeout. So does a wait for `completed`.
  alignas(kLine) std::atomic<uint32_t> sleeping;
  std::atomic<uint32_t> bell;
  // The CPU the owner last waited on (-1: unknown), for peers to see when two
  // ranks share a CPU while another one idles.
  std::atomic<int32_t> cpu;
  // A publication per lap, as for the flags' lines.
  Publication published[kLaps];
};

// Where things lie in a window of a communicator of `nranks`.
struct Layout {
  int nranks;
  uint64_t window_bytes;

  static constexpr uint64_t flags_offset() { return (sizeof(Header) + kLine - 1) / kLine * kLine; }
  // The line of flag (writer, match) for calls of lap `lap`.
  uint64_t flag_offset(int writer, uint32_t match, uint64_t lap) const {
    return flags_offset() + ((lap * nranks + static_cast<uint64_t>(writer)) * HCOMM_MAX_SIGNALS + match) * kLine;
  }
  uint64_t data_offset() const { return (flag_offset(0, 0, kLaps) + kPage - 1) / kPage * kPage; }
  uint64_t total_bytes() const { return data_offset() + 2 * window_bytes; }
};

// Initialises the header and flags of a window at `base` (total_bytes(), zeroed).
void initialise(void* base, const Layout& layout, int rank);
// Checks a peer's window header against what this rank expects; throws
// HCOMM_ERR_REMOTE naming the rank when it does not match.
void check(const void* base, const Layout& layout, int rank, size_t mapped_bytes);

// The doorbell of a window's owner.
void ring(Header& owner);
// Sleeps on `own`'s bell until `ready()` or timeout_us pass.
template <class Ready>
void sleep(Header& own, int64_t timeout_us, Ready ready);
void sleep_on_bell(Header& own, uint32_t seen, int64_t timeout_us);

template <class Ready>
void sleep(Header& own, int64_t timeout_us, Ready ready) {
  const uint32_t seen = own.bell.load(std::memory_order_seq_cst);
  own.sleeping.store(1, std::memory_order_seq_cst);
  if (!ready()) sleep_on_bell(own, seen, timeout_us);
  own.sleeping.store(0, std::memory_order_relaxed);
}

}  // namespace hcomm::exec::window
