// Finds the executable to start before any rank starts, so that a typo is one
// clear error instead of N failed ranks.
#pragma once

#include <string>

namespace hcomm::run {

// A name with a slash is used as given; otherwise PATH is searched the way
// a shell does. Throws UsageError naming the program when there is none.
std::string resolve_program(const std::string& name);

}  // namespace hcomm::run
