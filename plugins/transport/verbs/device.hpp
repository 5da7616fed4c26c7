// The RDMA port this process uses: discovery over every device and port
// (ibv_get_device_list, ibv_query_port), the HCOMM_IB_HCA filter, the GID,
// and the opened device with its protection domain and registration cache.
// Finding no usable port is not an error: the plugin then loads, says why,
// and scores every link unreachable.
#pragma once

#include <infiniband/verbs.h>

#include <memory>
#include <string>

#include "config.hpp"
#include "hcomm/plugin/util.hpp"
#include "reg_cache.hpp"
#include "wire.hpp"

namespace hcomm::verbs {

struct PortInfo {
  std::string device;
  uint8_t port = 0;
  LinkLayer link_layer = LinkLayer::kNone;
  uint16_t lid = 0;
  uint8_t mtu = 0;  // active MTU, enum ibv_mtu
  uint32_t rate_mbps = 0;
  int gid_index = -1;  // -1: InfiniBand addressed by LID
  Gid gid{};
  std::string describe() const;
};

// Link rate of an ibv_port_attr's active_width and active_speed codes;
// 0 for codes this build does not know.
uint32_t link_rate_mbps(uint8_t width, uint32_t speed);

class Device {
 public:
  // The first active port that HCOMM_IB_HCA accepts, or nullptr with *why
  // saying what was found. A bad setting throws HCOMM_ERR_CONFIG.
  static std::unique_ptr<Device> open(const Config& config, const plugin::Services& services, std::string* why);
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  ibv_context* context() const { return ctx_; }
  ibv_pd* pd() const { return pd_; }
  const PortInfo& port() const { return port_; }
  const ibv_device_attr& attr() const { return attr_; }
  uint32_t max_msg() const { return max_msg_; }
  RegCache& cache() { return *cache_; }

 private:
  Device(ibv_context* ctx, const ibv_device_attr& attr, const ibv_port_attr& port_attr, PortInfo port,
         const Config& config);

  ibv_context* ctx_;
  ibv_pd* pd_ = nullptr;
  ibv_device_attr attr_;
  PortInfo port_;
  uint32_t max_msg_;
  std::unique_ptr<RegCache> cache_;
};

}  // namespace hcomm::verbs
