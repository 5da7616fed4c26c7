#include "device.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "gid.hpp"
#include "hca_filter.hpp"

namespace hcomm::verbs {

namespace {

GidType gid_type_of(uint32_t type) {
  switch (type) {
    case IBV_GID_TYPE_ROCE_V1:
      return GidType::kRoceV1;
    case IBV_GID_TYPE_ROCE_V2:
      return GidType::kRoceV2;
    default:
      return GidType::kIb;
  }
}

// The port's GID table, read with the RoCE version of every entry (the
// library reads the kernel's gid_attrs for it).
std::vector<GidEntry> gid_table(ibv_context* ctx, uint8_t port, int length) {
  std::vector<GidEntry> table;
  for (int i = 0; i < length; ++i) {
    ibv_gid_entry e{};
    if (ibv_query_gid_ex(ctx, port, static_cast<uint32_t>(i), &e, 0) != 0) continue;  // empty slot
    GidEntry g{.index = i, .type = gid_type_of(e.gid_type), .gid = {}};
    std::memcpy(g.gid.data(), e.gid.raw, g.gid.size());
    table.push_back(g);
  }
  return table;
}

const char* layer_name(LinkLayer l) { return l == LinkLayer::kInfiniBand ? "InfiniBand" : "Ethernet (RoCE)"; }

}  // namespace

uint32_t link_rate_mbps(uint8_t width, uint32_t speed) {
  uint32_t lanes = 0;
  switch (width) {
    case 1:
      lanes = 1;
      break;
    case 2:
      lanes = 4;
      break;
    case 4:
      lanes = 8;
      break;
    case 8:
      lanes = 12;
      break;
    case 16:
      lanes = 2;
      break;
    default:
      return 0;
  }
  uint32_t lane_mbps = 0;
  switch (speed) {
    case 1:
      lane_mbps = 2500;
      break;  // SDR
    case 2:
      lane_mbps = 5000;
      break;  // DDR
    case 4:
    case 8:
      lane_mbps = 10000;
      break;  // QDR, FDR10
    case 16:
      lane_mbps = 14000;
      break;  // FDR
    case 32:
      lane_mbps = 25000;
      break;  // EDR
    case 64:
      lane_mbps = 50000;
      break;  // HDR
    case 128:
      lane_mbps = 100000;
      break;  // NDR
    case 256:
      lane_mbps = 200000;
      break;  // XDR
    default:
      return 0;
  }
  return lanes * lane_mbps;
}

std::string PortInfo::describe() const {
  std::string gid_text;
  if (gid_index >= 0) gid_text = plugin::format(", GID index %d", gid_index);
  return plugin::format("%s port %u (%s, LID %u, %u Mb/s%s)", device.c_str(), port, layer_name(link_layer), lid,
                        rate_mbps, gid_text.c_str());
}

std::unique_ptr<Device> Device::open(const Config& config, const plugin::Services& services, std::string* why) {
  HcaFilter filter = HcaFilter::parse(config.hca);
  int count = 0;
  ibv_device** list = ibv_get_device_list(&count);
  if (!list || count == 0) {
    if (list) ibv_free_device_list(list);
    *why = plugin::format(
        "no RDMA device found (ibv_get_device_list: %s); an RDMA driver or Soft-RoCE (rdma link "
        "add rxe0 type rxe netdev IF) provides one",
        list ? "none listed" : std::strerror(errno));
    return nullptr;
  }
  std::string seen;
  std::unique_ptr<Device> chosen;
  for (int d = 0; d < count && !chosen; ++d) {
    std::string name = ibv_get_device_name(list[d]);
    ibv_context* ctx = ibv_open_device(list[d]);
    if (!ctx) {
      seen += plugin::format("; %s cannot be opened (%s)", name.c_str(), std::strerror(errno));
      continue;
    }
    ibv_device_attr attr{};
    bool kept = false;
    if (ibv_query_device(ctx, &attr) == 0) {
      for (uint8_t p = 1; p <= attr.phys_port_cnt && !kept; ++p) {
        ibv_port_attr pa{};
        if (ibv_query_port(ctx, p, &pa) != 0) continue;
        if (!filter.accepts(name, p)) {
          seen += plugin::format("; %s:%u excluded by HCOMM_IB_HCA", name.c_str(), p);
          continue;
        }
        if (pa.state != IBV_PORT_ACTIVE) {
          seen += plugin::format("; %s:%u not active (%s)", name.c_str(), p, ibv_port_state_str(pa.state));
          continue;
        }
        PortInfo info{
            .device = name,
            .port = p,
            .link_layer = pa.link_layer == IBV_LINK_LAYER_ETHERNET ? LinkLayer::kEthernet : LinkLayer::kInfiniBand,
            .lid = pa.lid,
            .mtu = static_cast<uint8_t>(pa.active_mtu),
            .rate_mbps = link_rate_mbps(pa.active_width, pa.active_speed),
            .gid_index = -1,
            .gid = {}};
        std::vector<GidEntry> table = gid_table(ctx, p, pa.gid_tbl_len);
        // RoCE always routes by GID; InfiniBand by LID unless a GID index is set.
        bool roce = info.link_layer == LinkLayer::kEthernet;
        if (roce || config.gid_index >= 0) {
          std::optional<GidEntry> g = choose_gid(table, config.gid_index);
          if (!g) {
            seen += plugin::format("; %s:%u has no %s", name.c_str(), p,
                                   config.gid_index >= 0 ? "GID at HCOMM_IB_GID_INDEX" : "usable GID");
            continue;
          }
          info.gid_index = g->index;
          info.gid = g->gid;
        } else if (!table.empty()) {
          info.gid = table.front().gid;  // its subnet prefix tells which fabric the port is on
        }
        chosen.reset(new Device(ctx, attr, pa, info, config));
        kept = true;
      }
    }
    if (!kept) ibv_close_device(ctx);
  }
  ibv_free_device_list(list);
  if (!chosen) {
    *why = plugin::format("no usable RDMA port among %d device%s%s", count, count == 1 ? "" : "s", seen.c_str());
    return nullptr;
  }
  services.log(HCOMM_LOG_INFO, "INIT", "verbs: using " + chosen->port().describe());
  return chosen;
}

Device::Device(ibv_context* ctx, const ibv_device_attr& attr, const ibv_port_attr& port_attr, PortInfo port,
               const Config& config)
    : ctx_(ctx), attr_(attr), port_(std::move(port)), max_msg_(port_attr.max_msg_sz) {
  pd_ = ibv_alloc_pd(ctx_);
  if (!pd_) {
    int error = errno;
    ibv_close_device(ctx_);
    HCOMM_PLUGIN_THROW(HCOMM_ERR_SYSTEM, "verbs: ibv_alloc_pd on %s: %s", port_.device.c_str(), std::strerror(error));
  }
  ibv_pd* pd = pd_;
  std::string device = port_.device;
  cache_ = std::make_unique<RegCache>(
      [pd, device](uintptr_t start, size_t bytes) {
        ibv_mr* mr =
            ibv_reg_mr(pd, reinterpret_cast<void*>(start), bytes, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
        if (!mr)
          HCOMM_PLUGIN_THROW(HCOMM_ERR_SYSTEM, "verbs: ibv_reg_mr of %zu bytes at %p on %s: %s", bytes,
                             reinterpret_cast<void*>(start), device.c_str(), std::strerror(errno));
        return MemoryKey{.handle = mr, .lkey = mr->lkey, .rkey = mr->rkey};
      },
      [](const MemoryKey& key) { ibv_dereg_mr(static_cast<ibv_mr*>(key.handle)); }, config.reg_cache_bytes,
      static_cast<size_t>(::sysconf(_SC_PAGESIZE)));
}

Device::~Device() {
  cache_.reset();
  ibv_dealloc_pd(pd_);
  ibv_close_device(ctx_);
}

}  // namespace hcomm::verbs
