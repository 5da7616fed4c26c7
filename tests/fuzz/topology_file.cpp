// Topology files (core/topology/topo_file.cpp over core/common/json.cpp, which
// reads through nlohmann/json): any text is a topology or a HCOMM_ERR_CONFIG
// error; a JSON document written out reads back as the same text.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "core/common/error.hpp"
#include "core/common/json.hpp"
#include "core/topology/topo_file.hpp"

using namespace hcomm;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  nlohmann::ordered_json document;
  try {
    document = json::parse(std::string_view(reinterpret_cast<const char*>(data), size));
  } catch (const Error& e) {
    if (e.code() != HCOMM_ERR_CONFIG) std::abort();
    return 0;
  }
  const std::string text = json::write(document);
  if (json::write(json::parse(text)) != text) std::abort();
  try {
    static_cast<void>(topology::from_json(document));
  } catch (const Error& e) {
    if (e.code() != HCOMM_ERR_CONFIG) std::abort();
  }
  return 0;
}
