// The rules every rank's schedule of one call must keep, checked for all
// ranks together before anything runs:
// - each step: a known kind (mapped kinds only in a mapped view), chunks
//   between 1 and 2^16, whole elements, dependencies that point backwards
//   (chunk-wise only on steps of as many chunks), FINAL only on reductions,
//   a real peer, tags and flags in range, references inside their buffers
//   (a peer's buffers for the peer's side of LOAD, LOAD_REDUCE and STORE;
//   peers' SEND and RECV only with HCOMM_VIEW_PEER_BUFFERS, never a peer's
//   scratch), no write to SEND, sources and destinations equal or apart;
// - sends and receives matched one to one with equal bytes and chunks; no
//   more WAIT chunks towards a (peer, flag) than signals (SIGNAL chunks) to
//   pair with; mapped steps or the WINDOW on every rank or on none;
// - mapped memory, by the order the dependencies, transfers and signals put
//   between steps of all ranks: a step touches a peer's memory only once a
//   step of that peer is ordered before it (the peer is in the call); no
//   other step writes bytes it touches, or touches bytes it writes, unless
//   one of the two is ordered before the other; and a peer's SEND or RECV is
//   touched only before a later step of that peer, so that the peer cannot
//   return while another rank still uses them.
#pragma once

#include <string>
#include <vector>

#include "algorithm_case.hpp"
#include "algorithm_layout.hpp"

namespace hcomm::algotest {

// One line per broken rule; empty when the schedules are sound. `memory`
// gives each rank's buffer sizes and the arenas its buffers alias.
std::vector<std::string> check_schedules(const std::vector<RankSchedule>& ranks, const std::vector<RankMemory>& memory,
                                         const View& view, size_t dtype_size);

// "rank 2 step 5 (LOAD)", for messages.
std::string step_name(int rank, size_t step, const hcomm_step_t& s);

}  // namespace hcomm::algotest
