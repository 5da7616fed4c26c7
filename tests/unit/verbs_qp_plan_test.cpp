// The RC queue pair's RESET -> INIT -> RTR -> RTS plan as data: every
// transition sets the attributes its mask names, with the values the local
// port and the peer's hello give.
#if HCOMM_HAVE_VERBS
#include <gtest/gtest.h>

#include "plugins/transport/verbs/qp_plan.hpp"

namespace hcomm::verbs {
namespace {

LocalQp local(int gid_index) {
  return LocalQp{.port = 2,
                 .gid_index = gid_index,
                 .psn = 0xabcde,
                 .timeout = 14,
                 .retry_cnt = 5,
                 .mtu = IBV_MTU_4096,
                 .max_rd_atomic = 1};
}

RemoteQp remote() {
  RemoteQp r{.qpn = 0x1234, .psn = 0x777, .lid = 9, .gid = {}, .mtu = IBV_MTU_1024};
  for (size_t i = 0; i < r.gid.size(); ++i) r.gid[i] = static_cast<uint8_t>(i + 1);
  return r;
}

TEST(VerbsQpPlan, InitSetsPortPartitionAndRemoteWrite) {
  QpTransition t = to_init(local(-1));
  EXPECT_EQ(t.target, IBV_QPS_INIT);
  EXPECT_EQ(t.attr.qp_state, IBV_QPS_INIT);
  EXPECT_EQ(t.mask, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
  EXPECT_EQ(t.attr.port_num, 2);
  EXPECT_EQ(t.attr.pkey_index, 0);
  EXPECT_EQ(t.attr.qp_access_flags, static_cast<unsigned>(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE));
}

TEST(VerbsQpPlan, RtrOverRoceCarriesTheGid) {
  QpTransition t = to_rtr(local(3), remote());
  EXPECT_EQ(t.target, IBV_QPS_RTR);
  EXPECT_EQ(t.mask, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                        IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
  EXPECT_EQ(t.attr.dest_qp_num, 0x1234u);
  EXPECT_EQ(t.attr.rq_psn, 0x777u);
  EXPECT_EQ(t.attr.path_mtu, IBV_MTU_1024);  // the smaller of the two
  EXPECT_EQ(t.attr.ah_attr.port_num, 2);
  EXPECT_EQ(t.attr.ah_attr.dlid, 9);
  EXPECT_EQ(t.attr.ah_attr.is_global, 1);
  EXPECT_EQ(t.attr.ah_attr.grh.sgid_index, 3);
  EXPECT_EQ(t.attr.ah_attr.grh.hop_limit, 255);
  for (size_t i = 0; i < 16; ++i) EXPECT_EQ(t.attr.ah_attr.grh.dgid.raw[i], i + 1) << i;
  EXPECT_GT(t.attr.min_rnr_timer, 0);
  EXPECT_EQ(t.attr.max_dest_rd_atomic, 1);
}

TEST(VerbsQpPlan, RtrOverInfiniBandAddressesByLid) {
  RemoteQp r = remote();
  r.mtu = IBV_MTU_4096;
  LocalQp l = local(-1);
  l.mtu = IBV_MTU_2048;
  QpTransition t = to_rtr(l, r);
  EXPECT_EQ(t.attr.ah_attr.is_global, 0);
  EXPECT_EQ(t.attr.ah_attr.dlid, 9);
  EXPECT_EQ(t.attr.path_mtu, IBV_MTU_2048);
  for (size_t i = 0; i < 16; ++i) EXPECT_EQ(t.attr.ah_attr.grh.dgid.raw[i], 0) << i;
}

TEST(VerbsQpPlan, RtsSetsPsnTimeoutAndRetries) {
  QpTransition t = to_rts(local(0));
  EXPECT_EQ(t.target, IBV_QPS_RTS);
  EXPECT_EQ(t.mask, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                        IBV_QP_MAX_QP_RD_ATOMIC);
  EXPECT_EQ(t.attr.sq_psn, 0xabcdeu);
  EXPECT_EQ(t.attr.timeout, 14);
  EXPECT_EQ(t.attr.retry_cnt, 5);
  EXPECT_EQ(t.attr.rnr_retry, 7);  // without end
  EXPECT_EQ(t.attr.max_rd_atomic, 1);
}

}  // namespace
}  // namespace hcomm::verbs
#endif
