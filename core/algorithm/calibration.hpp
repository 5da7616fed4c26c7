// The parts of the link model that one process measures alone (hcomm-perf
// --calibrate measures the rest between ranks): the core's reduction, which
// the cost functions' gamma stands for, and a memory copy, which is what a
// transfer through mapped memory costs (the mapped beta). Buffers are larger
// than the L2 cache, so that both are memory-bound as large messages are.
#pragma once

namespace hcomm::algorithm {

struct LocalRates {
  double reduce_us_per_byte;  // float32 sum, per byte of one operand
  double copy_us_per_byte;    // per byte copied
};

// The median of several timed passes, after one that faults the pages in.
LocalRates measure_local_rates();

}  // namespace hcomm::algorithm
