// Tune files (core/algorithm/tune_file.cpp): any text parses or is a
// HCOMM_ERR_CONFIG error; what parses is written out and parses again.
#include "core/algorithm/tune_file.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "core/common/error.hpp"

using namespace hcomm;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  algorithm::TuneFile file;
  try {
    file = algorithm::parse_tune_file(std::string(reinterpret_cast<const char*>(data), size), "fuzz.tune");
  } catch (const Error& e) {
    if (e.code() != HCOMM_ERR_CONFIG) std::abort();
    return 0;
  }
  const std::string text = algorithm::format_tune_file(file);
  if (algorithm::format_tune_file(algorithm::parse_tune_file(text, "fuzz.tune")) != text) std::abort();
  return 0;
}
