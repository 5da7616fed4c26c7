// A communicator's chunk size (hcomm_config_t.chunk_bytes) reaches the
// algorithms' cost model as well as their schedules: the ring plugin's cost
// of a chain broadcast counts the chunks of the schedule it builds, not those
// of the process-wide HCOMM_CHUNK_BYTES.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <vector>

#include "core/api/handles.hpp"
#include "core/exec/operation.hpp"
#include "hcomm/hcomm.h"
#include "tests/unit/api_fixture.hpp"

namespace {

class ChunkBytes : public ApiFixture {};

TEST_F(ChunkBytes, RingCostCountsTheChunksOfTheCommunicatorsSchedule) {
  unsetenv("HCOMM_CHUNK_BYTES");  // the process-wide chunk size is then the default, 512 KiB
  hcomm_config_t config = HCOMM_CONFIG_INITIALIZER;
  config.chunk_bytes = 4096;
  constexpr size_t kBytes = 1 << 20;
  on_two_ranks(
      [&](hcomm_comm_t comm, int rank) {
        ASSERT_EQ(hcomm_comm_force_algorithm(comm, HCOMM_COLL_BROADCAST, "ring"), HCOMM_SUCCESS)
            << hcomm_get_last_error();
        std::vector<uint8_t> buf(kBytes, static_cast<uint8_t>(rank == 0 ? 7 : 0));
        hcomm_request_t request = nullptr;
        ASSERT_EQ(hcomm_ibroadcast(buf.data(), buf.data(), kBytes, HCOMM_UINT8, 0, comm, &request), HCOMM_SUCCESS)
            << hcomm_get_last_error();
        const hcomm::exec::Schedule& schedule = *request->op->schedule();
        ASSERT_EQ(schedule.algorithm, "ring");
        ASSERT_EQ(schedule.steps.size(), 1u);  // the root's send, the other rank's receive
        const uint32_t chunks = schedule.steps[0].nchunks;
        const hcomm_coll_args_t args = schedule.args;
        ASSERT_EQ(hcomm_wait(request), HCOMM_SUCCESS) << hcomm_get_last_error();
        EXPECT_EQ(buf, std::vector<uint8_t>(kBytes, 7));
        EXPECT_EQ(chunks, kBytes / 4096);

        const hcomm::comm::Communicator& c = *comm->impl;
        const hcomm_algorithm_desc_t* ring = c.query_algorithm(args);
        ASSERT_NE(ring, nullptr);
        ASSERT_STREQ(ring->name, "ring");
        // On two ranks a chain of k chunks costs (n - 1 + k - 1)(alpha + beta B/k) = k alpha + beta B.
        const hcomm_link_model_t& link = c.view().link;
        EXPECT_DOUBLE_EQ(ring->cost(&args, &c.view()), chunks * link.alpha_us + kBytes * link.beta_us_per_byte);
      },
      &config);
}

}  // namespace
