#include "qp_plan.hpp"

#include <algorithm>
#include <cstring>

namespace hcomm::verbs {

namespace {

QpTransition blank(ibv_qp_state target) {
  QpTransition t{.target = target, .attr = {}, .mask = IBV_QP_STATE};
  t.attr.qp_state = target;
  return t;
}

// Below 7 (infinite) the receiver could make an RNR-retrying sender fail
// while its progress was merely late.
constexpr uint8_t kRnrRetryForever = 7;
// 12: 0.64 ms, the RNR NAK delay a receiver asks for.
constexpr uint8_t kMinRnrTimer = 12;

}  // namespace

QpTransition to_init(const LocalQp& local) {
  QpTransition t = blank(IBV_QPS_INIT);
  t.attr.pkey_index = 0;
  t.attr.port_num = local.port;
  t.attr.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
  t.mask |= IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
  return t;
}

QpTransition to_rtr(const LocalQp& local, const RemoteQp& remote) {
  QpTransition t = blank(IBV_QPS_RTR);
  t.attr.path_mtu = static_cast<ibv_mtu>(std::min(local.mtu, remote.mtu));
  t.attr.dest_qp_num = remote.qpn;
  t.attr.rq_psn = remote.psn;
  t.attr.max_dest_rd_atomic = local.max_rd_atomic;
  t.attr.min_rnr_timer = kMinRnrTimer;
  t.attr.ah_attr.port_num = local.port;
  t.attr.ah_attr.dlid = remote.lid;
  t.attr.ah_attr.sl = 0;
  t.attr.ah_attr.src_path_bits = 0;
  if (local.gid_index >= 0) {
    t.attr.ah_attr.is_global = 1;
    std::memcpy(t.attr.ah_attr.grh.dgid.raw, remote.gid.data(), remote.gid.size());
    t.attr.ah_attr.grh.sgid_index = static_cast<uint8_t>(local.gid_index);
    t.attr.ah_attr.grh.hop_limit = 255;
    t.attr.ah_attr.grh.flow_label = 0;
    t.attr.ah_attr.grh.traffic_class = 0;
  }
  t.mask |=
      IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
  return t;
}

QpTransition to_rts(const LocalQp& local) {
  QpTransition t = blank(IBV_QPS_RTS);
  t.attr.sq_psn = local.psn;
  t.attr.timeout = static_cast<uint8_t>(local.timeout);
  t.attr.retry_cnt = static_cast<uint8_t>(local.retry_cnt);
  t.attr.rnr_retry = kRnrRetryForever;
  t.attr.max_rd_atomic = local.max_rd_atomic;
  t.mask |= IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
  return t;
}

}  // namespace hcomm::verbs
