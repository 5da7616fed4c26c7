#include "config.hpp"

namespace hcomm::verbs {

namespace {

// Eager buffers are posted per peer; beyond this they cost more than a rendezvous.
constexpr uint64_t kMaxEagerBytes = 1ull << 20;

int ranged(const plugin::Services& services, const char* name, long long lo, long long hi, const char* what) {
  long long v = services.setting_int(name);
  if (v < lo || v > hi)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_CONFIG, "%s=%lld: give %s from %lld to %lld", name, v, what, lo, hi);
  return static_cast<int>(v);
}

}  // namespace

Config Config::read(const plugin::Services& services) {
  Config c;
  c.hca = services.setting("HCOMM_IB_HCA");
  c.gid_index = ranged(services, "HCOMM_IB_GID_INDEX", -1, 65535, "a GID index (-1: automatic)");
  c.timeout = ranged(services, "HCOMM_IB_TIMEOUT", 1, 31, "an ack timeout exponent");
  c.retry_cnt = ranged(services, "HCOMM_IB_RETRY_CNT", 0, 7, "a retry count");
  c.credits = ranged(services, "HCOMM_IB_CREDITS", 4, 4096, "a number of receive buffers per peer");
  c.eager_bytes = services.setting_size("HCOMM_IB_EAGER_BYTES");
  if (c.eager_bytes > kMaxEagerBytes)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_CONFIG, "HCOMM_IB_EAGER_BYTES=%s: give a size up to 1M",
                       services.setting("HCOMM_IB_EAGER_BYTES").c_str());
  c.reg_cache_bytes = services.setting_size("HCOMM_IB_REG_CACHE");
  c.if_addr = services.setting("HCOMM_IB_IF_ADDR");
  return c;
}

}  // namespace hcomm::verbs
