// What the ranks of one test share: a MAP_SHARED anonymous region mapped
// before fork, holding a barrier with deadlines, the address blobs, the score
// matrix and one result slot per rank that the parent reads afterwards.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "clock.hpp"
#include "hcomm/plugin/transport.h"

namespace hcomm::tcheck {

constexpr int kMaxRanks = 64;
constexpr int kNumCommKeys = 4;  // one per net a test opens

// A central barrier on a futex in shared memory. Every wait has a deadline, and
// abort() releases all waiters at once, so a failed or dead rank cannot leave
// the others blocked.
class SharedBarrier {
 public:
  void init(uint32_t parties);
  // Waits without using CPU.
  void wait(Deadline deadline);
  // Calls `poll` while waiting, for ranks whose transport must keep moving.
  void wait_polling(Deadline deadline, const std::function<void()>& poll);
  void abort();
  // Every wait of a rank calls this, so that one failure stops the whole group.
  void throw_if_aborted() const;

 private:
  uint32_t arrive();

  std::atomic<uint32_t> arrived_;
  std::atomic<uint32_t> generation_;  // the futex word
  std::atomic<uint32_t> aborted_;
  uint32_t parties_;
};

enum class Outcome : int { kNone = 0, kPass, kFail, kSkip };

// One rank's corner of the region. The parent reads it after the rank ended
// (or was killed): `phase` says what a rank that hung was doing.
struct RankSlot {
  std::atomic<int> outcome;
  uint64_t retries;
  char detail[1024];
  char phase[192];
  char shm_files[4096];  // /dev/shm files the rank had open or mapped, one a line
  uint32_t address_len;
  uint8_t address[HCOMM_TRANSPORT_MAX_ADDRESS];
  hcomm_link_score_t scores[kMaxRanks];  // score(this rank's address, rank j's)
  // Mapped memory (memory tests): a region from mem_alloc and one from
  // mem_register, and where the registered buffer lies in this rank's process.
  hcomm_mem_desc_t allocated;
  hcomm_mem_desc_t registered;
  uint64_t buffer_address;
  uint64_t buffer_bytes;

  void set_phase(const char* text);
  void set_shm_files(const std::set<std::string>& files);
  std::vector<std::string> shm_file_list() const;
  void finish(Outcome outcome, const char* text);
};

struct SharedState {
  SharedBarrier barrier;
  SharedBarrier survivors;  // every rank but the last, for after it died on purpose
  int nranks;
  uint64_t seed;
  int64_t deadline_ns;                 // when the ranks give up (the parent kills a bit later)
  std::atomic<int> first_failed_rank;  // -1 until a rank fails
  std::atomic<int64_t> event_ns;       // a moment one rank announces to the others
  uint8_t comm_keys[kNumCommKeys][16];
  RankSlot slots[kMaxRanks];

  Deadline deadline() const { return Deadline(from_ns(deadline_ns)); }
  // Releases every rank from every wait; their waits throw.
  void abort();
  // Records `rank` as the first failure unless another came first, then stops everyone.
  void report_failure(int rank);
};

// The anonymous shared mapping that holds a SharedState; it must exist before fork.
class SharedRegion {
 public:
  SharedRegion(int nranks, uint64_t seed, Deadline rank_deadline);
  ~SharedRegion();
  SharedRegion(const SharedRegion&) = delete;
  SharedRegion& operator=(const SharedRegion&) = delete;

  SharedState& state() { return *state_; }

 private:
  SharedState* state_;
};

}  // namespace hcomm::tcheck
