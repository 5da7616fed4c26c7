// hcomm-perf --calibrate FILE: measures, on the communicator it runs on, the
// link model the algorithms' cost functions use, and writes it as a tune
// file (core/algorithm/tune_file.hpp) that HCOMM_TUNE_FILE=FILE hands to
// every later communicator:
//   alpha_us: the median time of an 8-byte exchange in which every rank sends
//     to the next rank and receives from the previous one at once (one hop
//     on every link together, as a ring step), on the slowest rank; on a
//     communicator that spans hosts, of the first ranks of hosts 0 and 1
//     alone (the slowest link, and inter.*), and of the first two ranks of
//     the first host that has two (intra.*): the costs count the ranks that
//     share a host's network themselves; the best of 3 rounds;
//   beta_us_per_byte: what a 16 MiB exchange takes beyond the 8-byte one, per byte;
//   gamma_us_per_byte: the core's float32 sum over buffers larger than the L2
//     cache, per byte of one operand, every rank at once (as in a collective),
//     the slowest rank's;
//   mapped.beta_us_per_byte: a memory copy of the same size, per byte, and
//   mapped.gamma_us_per_byte: gamma again: what moving and reducing through
//     mapped memory costs, for communicators whose ranks map each other's.
// Every exchanged byte is checked. The file also records the rank and host
// counts and the transports (HCOMM_TRANSPORTS when set, else those loaded).
// With --select COLLS, each collective's algorithms are then swept as
// --sweep-algos does (-b to -e, every element checked), once with malloc'd
// and once with hcomm_mem_alloc'd buffers, and the algorithm least behind
// the best at each size in its worse sweep (smoothed_choices; a lone
// winner that stays is measured once more) becomes a select rule from that
// size on: the selector takes those before its cost model, for host memory,
// on communicators of the same ranks, hosts and transports.
#pragma once

#include "communicator.hpp"
#include "options.hpp"

namespace hcomm::perf {

// Collective across all ranks; rank 0 writes the file and prints the
// parameters. Returns the exit status.
int calibrate(const Options& options, Communicator& comm);

}  // namespace hcomm::perf
