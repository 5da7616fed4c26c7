// Dependencies on steps that may have been left out (index -1).
#pragma once

#include <cstdint>
#include <initializer_list>

#include "common/schedule_writer.hpp"

namespace hcomm::algo {

// Every chunk of `step` waits for all of each step named; -1 names none.
inline void wait_all(hcomm_step_t& step, std::initializer_list<int32_t> deps) {
  for (int32_t dep : deps)
    if (dep >= 0) wait_whole(step, dep);
}

}  // namespace hcomm::algo
