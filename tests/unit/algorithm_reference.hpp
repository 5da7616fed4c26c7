// The data side of a case: every rank's memory before the call (inputs in
// SEND's blocks, canaries everywhere else), the memory a serial reference
// says the call leaves, and the comparison of the two, element by element.
#pragma once

#include <string>
#include <vector>

#include "algorithm_case.hpp"
#include "algorithm_layout.hpp"

namespace hcomm::algotest {

// Inputs, distinct per rank and element: small values for PROD, integers
// that every summation order adds exactly for the other reductions, the
// rank's own range for kRankOrderOp, unique values where data only moves.
std::vector<RankMemory> initial_memory(const CallArgs& args, const std::vector<RankSchedule>& ranks,
                                       uint64_t window_bytes);

// The serial reference of every collective: `initial` with each rank's
// output blocks written into RECV and nothing else changed (outputs a rank
// does not define, gaps between blocks and the send buffer keep their bytes).
// AVG divides the sum by the number of ranks, truncating for integers.
std::vector<RankMemory> expected_memory(const CallArgs& args, const std::vector<RankMemory>& initial);

// Every difference in the caller's buffers, at most a few per rank.
std::vector<std::string> compare_memory(const CallArgs& args, const std::vector<RankMemory>& expected,
                                        const std::vector<RankMemory>& actual);

}  // namespace hcomm::algotest
