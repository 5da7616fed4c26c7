#include "config.hpp"

#include <strings.h>

#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>

#include "layout.hpp"

namespace hcomm::shm {

namespace {

enum SettingIndex { kFifoBytesSetting, kCmaSetting, kCmaBytesSetting };

std::string value_or_default(const plugin::Services& services, const hcomm_setting_decl_t& decl) {
  std::string v = services.setting(decl.name);
  return v.empty() ? decl.default_value : v;
}

bool parse_bool(const std::string& v, const char* name) {
  for (const char* yes : {"1", "true", "yes", "on"})
    if (::strcasecmp(v.c_str(), yes) == 0) return true;
  for (const char* no : {"0", "false", "no", "off"})
    if (::strcasecmp(v.c_str(), no) == 0) return false;
  HCOMM_PLUGIN_THROW(HCOMM_ERR_CONFIG, "%s='%s' is not a boolean: use 0/1, true/false, yes/no or on/off", name,
                     v.c_str());
}

uint64_t parse_size(const std::string& v, const char* name) {
  static constexpr std::string_view kUnits = "KMG";  // powers of 1024
  const size_t digits = std::min(v.find_first_not_of("0123456789"), v.size());
  const std::string suffix = v.substr(digits);
  const size_t unit = suffix.size() == 1 ? kUnits.find(static_cast<char>(std::toupper(suffix[0]))) : kUnits.npos;
  // Ten digits at most, so that the number with its unit fits 64 bits.
  if (digits == 0 || digits > 10 || (!suffix.empty() && unit == kUnits.npos))
    HCOMM_PLUGIN_THROW(HCOMM_ERR_CONFIG, "%s='%s' is not a size: use a number of bytes with an optional K, M or G",
                       name, v.c_str());
  const int shift = suffix.empty() ? 0 : 10 * static_cast<int>(unit + 1);
  return std::stoull(v.substr(0, digits)) << shift;
}

}  // namespace

const hcomm_setting_decl_t kSettings[] = {
    {.name = "HCOMM_SHM_FIFO_BYTES",
     .type = HCOMM_SETTING_SIZE,
     .default_value = "1M",
     .doc = "bytes of each receive FIFO (one per sending peer); messages stream through it in 1/16 pieces",
     .min = "64K",
     .max = "1G"},
    {.name = "HCOMM_SHM_CMA",
     .type = HCOMM_SETTING_BOOL,
     .default_value = "1",
     .doc = "copy large messages, and buffers read by address, once with cross-memory attach (process_vm_readv) where "
            "the kernel permits it"},
    {.name = "HCOMM_SHM_CMA_BYTES",
     .type = HCOMM_SETTING_SIZE,
     .default_value = "64K",
     .doc = "messages of at least this many bytes take the cross-memory-attach path"},
};
const size_t kNumSettings = sizeof kSettings / sizeof kSettings[0];

Config Config::read(const plugin::Services& services) {
  const hcomm_setting_decl_t& fifo = kSettings[kFifoBytesSetting];
  const hcomm_setting_decl_t& cma = kSettings[kCmaSetting];
  const hcomm_setting_decl_t& cma_bytes = kSettings[kCmaBytesSetting];
  Config c{};
  c.fifo_bytes = parse_size(value_or_default(services, fifo), fifo.name);
  c.fifo_bytes = c.fifo_bytes / kPage * kPage;
  c.cma = parse_bool(value_or_default(services, cma), cma.name);
  c.cma_threshold = parse_size(value_or_default(services, cma_bytes), cma_bytes.name);
  return c;
}

}  // namespace hcomm::shm
