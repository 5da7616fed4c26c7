// Runs all ranks' schedules of one call in process, on real data: chunks run
// in random order once their dependencies are done, a receive chunk once the
// matching send chunk ran (a send reads its source when it runs, as a
// transport would copy it) and a WAIT chunk once its signal was raised (the
// j-th SIGNAL chunk of the peer towards this rank and flag; the signals of
// one pair and flag are raised in order). LOAD, LOAD_REDUCE and STORE read or
// write the peer's memory when they run; the checker has made sure that no
// other order could change that.
//
// Transports may complete a send as soon as they took its data (eager) or
// only once its receive took it (rendezvous); a schedule must be right under
// both, so the simulator runs either.
#pragma once

#include <random>
#include <string>
#include <vector>

#include "algorithm_case.hpp"
#include "algorithm_layout.hpp"

namespace hcomm::algotest {

enum class Sends { kEager, kRendezvous };
inline constexpr Sends kBothSends[] = {Sends::kEager, Sends::kRendezvous};

// Whether a rank's peers map its RECV: they read it in place and its
// HCOMM_STEP_PUBLISH copies are skipped, or they read what those copies put
// in its window. Every rank alike, or alternate ranks.
enum class Receives { kInWindow, kInPlace, kMixed };
inline constexpr Receives kEveryReceives[] = {Receives::kInWindow, Receives::kInPlace, Receives::kMixed};

class Simulator {
 public:
  // `dtype` and `op` of the call (the same on every rank).
  Simulator(const std::vector<RankSchedule>& ranks, hcomm_dtype_t dtype, hcomm_op_t op, std::vector<RankMemory>& memory,
            uint32_t seed, Sends sends, Receives receives = Receives::kInWindow);

  // A held rank runs nothing: it has not entered the call yet.
  void hold(int rank) { held_[static_cast<size_t>(rank)] = true; }
  void release(int rank);

  // Runs ready chunks, picked at random, until none is left.
  void run();

  bool finished(int rank) const;
  // The steps not done, for a deadlock's message; empty when all are.
  std::string unfinished() const;

 private:
  struct Chunk {
    int rank;
    size_t step;
    uint32_t index;
    int pending = 0;               // dependencies, the send or signal it waits for, not done yet
    std::vector<size_t> partners;  // chunks that wait for it besides its step's dependents
    size_t sender = kNone;         // a receive chunk's send chunk
  };
  static constexpr size_t kNone = ~size_t{0};

  const hcomm_step_t& step_of(size_t id) const;
  size_t chunk_id(int rank, size_t step, uint32_t chunk) const;
  void index_chunks();
  void link_dependencies();
  void satisfy(size_t id);
  void execute(size_t id);
  // The chunk's step's dependents may go on.
  void complete(size_t id);

  const std::vector<RankSchedule>& ranks_;
  hcomm_dtype_t dtype_;
  hcomm_op_t op_;
  Sends sends_;
  std::vector<bool> publishes_, in_place_;  // per rank: it publishes its RECV; peers read it in place
  size_t elem_;
  std::vector<RankMemory>& memory_;
  std::vector<bool> held_;
  std::mt19937 rng_;
  std::vector<Chunk> chunks_;
  std::vector<std::vector<size_t>> first_;                       // [rank][step] -> id of its chunk 0
  std::vector<std::vector<uint32_t>> completed_;                 // [rank][step] -> chunks done
  std::vector<std::vector<size_t>> chunk_waiters_;               // chunk id -> chunks waiting chunk-wise
  std::vector<std::vector<std::vector<size_t>>> whole_waiters_;  // [rank][step] -> steps waiting for all of it
  std::vector<std::vector<uint8_t>> in_flight_;                  // receive chunk id -> payload
  std::vector<size_t> ready_, parked_;
};

}  // namespace hcomm::algotest
