// How a check fails inside a rank: a CheckFailure carrying the text that ends
// up in the result table; Skipped when a test does not apply to the plugin.
#pragma once

#include <stdexcept>
#include <string>

#include "hcomm/plugin/util.hpp"
#include "hcomm/types.h"

namespace hcomm::tcheck {

using plugin::format;

class CheckFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Skipped : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

#define TCHECK_FAIL(...) throw ::hcomm::tcheck::CheckFailure(::hcomm::tcheck::format(__VA_ARGS__))

// "HCOMM_ERR_REMOTE", or "code 42" for a value outside the enum.
std::string result_name(hcomm_result_t code);

}  // namespace hcomm::tcheck
