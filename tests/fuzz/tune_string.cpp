// HCOMM_TUNE (core/algorithm/tune.cpp): any text parses or is a
// HCOMM_ERR_CONFIG error, and every rule it yields reads back as itself.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "core/algorithm/tune.hpp"
#include "core/common/error.hpp"

using namespace hcomm;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<algorithm::TuneRule> rules;
  try {
    rules = algorithm::parse_tune(std::string(reinterpret_cast<const char*>(data), size));
  } catch (const Error& e) {
    if (e.code() != HCOMM_ERR_CONFIG) std::abort();
    return 0;
  }
  for (const algorithm::TuneRule& rule : rules) {
    static_cast<void>(rule.described());
    const std::vector<algorithm::TuneRule> again = algorithm::parse_tune(rule.text());
    if (again.size() != 1 || again[0].coll != rule.coll || again[0].lo != rule.lo || again[0].hi != rule.hi ||
        again[0].algorithm != rule.algorithm)
      std::abort();
  }
  return 0;
}
