// The parts of the link model that one process measures alone (hcomm-perf
// --calibrate measures the rest between ranks): the core's reduction, which
// the cost functions' gamma stands for, and a memory copy, which is what a
// transfer through mapped memory costs (the mapped beta). Buffers are larger
// than the L2 cache, so that both are memory-bound as large messages are.
#pragma once

#include <cstddef>

namespace hcomm::algorithm {

struct LocalRates {
  double reduce_us_per_byte;  // float32 sum, per byte of one operand
  double copy_us_per_byte;    // per byte copied
};

// The fastest of several timed passes of each over buffers of `bytes`, taken
// in turn, after one of each that faults the pages in.
LocalRates measure_local_rates(size_t bytes = size_t{8} << 20, int passes = 9);

// How many times a copy's time a reduction takes per byte of one operand on
// this CPU (operands of 1 MiB, beyond a core's L2, as the messages where the
// direct algorithms part ways): measured at the first call in the process,
// about a millisecond, and kept within [0.5, 4].
double reduce_to_copy_ratio();

}  // namespace hcomm::algorithm
