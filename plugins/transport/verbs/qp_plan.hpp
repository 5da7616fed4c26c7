// The RC queue pair's way from RESET to RTS as plain data: which attributes
// each transition sets and with which mask, so the plan can be checked
// without a device and applied by one ibv_modify_qp call per step.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>

#include "wire.hpp"

namespace hcomm::verbs {

struct QpTransition {
  ibv_qp_state target;
  ibv_qp_attr attr;
  int mask;
};

// What the local side brings to the plan.
struct LocalQp {
  uint8_t port = 1;
  int gid_index = -1;  // -1: address by LID (InfiniBand)
  uint32_t psn = 0;
  int timeout = 18;
  int retry_cnt = 7;
  uint8_t mtu = IBV_MTU_1024;
  uint8_t max_rd_atomic = 1;
};

// What the peer's hello brings.
struct RemoteQp {
  uint32_t qpn = 0;
  uint32_t psn = 0;
  uint16_t lid = 0;
  Gid gid{};
  uint8_t mtu = IBV_MTU_1024;
};

// RESET -> INIT: port, partition 0, remote write allowed (rendezvous data).
QpTransition to_init(const LocalQp& local);
// INIT -> RTR: the peer's QP, the smaller MTU of the two, a GRH when a GID
// index is set (RoCE always), the receive PSN.
QpTransition to_rtr(const LocalQp& local, const RemoteQp& remote);
// RTR -> RTS: send PSN, ack timeout, retries; RNR retries without end, as
// receive buffers are reposted by progress and credits keep them ahead.
QpTransition to_rts(const LocalQp& local);

}  // namespace hcomm::verbs
