// The test bodies; each file of this folder holds one.
#pragma once

#include "../test_case.hpp"

namespace hcomm::tcheck {

void run_abi(RankContext& ctx);
void run_connect(RankContext& ctx);
void run_comm_key(RankContext& ctx);
void run_sizes(RankContext& ctx);
void run_tags(RankContext& ctx);
void run_truncation(RankContext& ctx);
void run_retry(RankContext& ctx);
void run_wait(RankContext& ctx);
void run_peer_death(RankContext& ctx);
void run_quiet_death(RankContext& ctx);
void run_close(RankContext& ctx);
void run_drain(RankContext& ctx);
void run_sent_then_died(RankContext& ctx);
void run_sent_then_reset(RankContext& ctx);
void run_memory(RankContext& ctx);
void run_memory_death(RankContext& ctx);

}  // namespace hcomm::tcheck
