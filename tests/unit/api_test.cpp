// The C API's argument checks: every bad argument is a clear error naming
// it, nothing crashes, and the communicator stays usable afterwards.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "hcomm/hcomm.h"
#include "hcomm/hcomm.hpp"
#include "tests/unit/api_fixture.hpp"

namespace {

class Api : public ApiFixture {};

TEST_F(Api, NullBufferWithCountIsAnError) {
  float x = 1;
  expect_error(hcomm_allreduce(nullptr, &x, 1, HCOMM_FLOAT32, HCOMM_SUM, comm_, nullptr), HCOMM_ERR_INVALID_ARGUMENT,
               "hcomm_allreduce: sendbuf is NULL");
  expect_error(hcomm_allreduce(&x, nullptr, 1, HCOMM_FLOAT32, HCOMM_SUM, comm_, nullptr), HCOMM_ERR_INVALID_ARGUMENT,
               "recvbuf is NULL");
  expect_error(hcomm_broadcast(&x, nullptr, 1, HCOMM_FLOAT32, 0, comm_, nullptr), HCOMM_ERR_INVALID_ARGUMENT,
               "hcomm_broadcast: recvbuf is NULL");
  EXPECT_EQ(hcomm_allreduce(nullptr, nullptr, 0, HCOMM_FLOAT32, HCOMM_SUM, comm_, nullptr), HCOMM_SUCCESS)
      << "count 0 needs no buffers";
}

TEST_F(Api, UnknownDtypeAndOp) {
  float x = 1, y = 0;
  expect_error(hcomm_allreduce(&x, &y, 1, static_cast<hcomm_dtype_t>(42), HCOMM_SUM, comm_, nullptr),
               HCOMM_ERR_INVALID_ARGUMENT, "dtype 42");
  expect_error(hcomm_allreduce(&x, &y, 1, static_cast<hcomm_dtype_t>(-1), HCOMM_SUM, comm_, nullptr),
               HCOMM_ERR_INVALID_ARGUMENT, "dtype -1");
  expect_error(hcomm_allreduce(&x, &y, 1, HCOMM_FLOAT32, static_cast<hcomm_op_t>(9), comm_, nullptr),
               HCOMM_ERR_INVALID_ARGUMENT, "op 9");
  expect_error(hcomm_broadcast(&x, &y, 1, static_cast<hcomm_dtype_t>(10), 0, comm_, nullptr),
               HCOMM_ERR_INVALID_ARGUMENT, "dtype 10");
}

TEST_F(Api, CountThatOverflowsBytes) {
  float x = 1, y = 0;
  expect_error(hcomm_allreduce(&x, &y, SIZE_MAX / 2, HCOMM_FLOAT64, HCOMM_SUM, comm_, nullptr),
               HCOMM_ERR_INVALID_ARGUMENT, "overflows");
}

TEST_F(Api, OtherBadArguments) {
  float v[4] = {1, 2, 3, 4};
  expect_error(hcomm_allreduce(v, v + 1, 2, HCOMM_FLOAT32, HCOMM_SUM, comm_, nullptr), HCOMM_ERR_INVALID_ARGUMENT,
               "overlap");
  expect_error(hcomm_broadcast(v, v, 1, HCOMM_FLOAT32, 1, comm_, nullptr), HCOMM_ERR_INVALID_ARGUMENT, "root 1");
  expect_error(hcomm_allreduce(v, v, 1, HCOMM_FLOAT32, HCOMM_SUM, nullptr, nullptr), HCOMM_ERR_INVALID_ARGUMENT,
               "comm is NULL");
  expect_error(hcomm_iallreduce(v, v, 1, HCOMM_FLOAT32, HCOMM_SUM, comm_, nullptr), HCOMM_ERR_INVALID_ARGUMENT,
               "request is NULL");
  int stream = 0;
  expect_error(hcomm_allreduce(v, v, 1, HCOMM_FLOAT32, HCOMM_SUM, comm_, &stream), HCOMM_ERR_UNSUPPORTED,
               "stream is not NULL, but no device plugin sees a device");
  expect_error(hcomm_test(nullptr, nullptr), HCOMM_ERR_INVALID_ARGUMENT, "request is NULL");
  expect_error(hcomm_wait(nullptr), HCOMM_ERR_INVALID_ARGUMENT, "request is NULL");
  hcomm_comm_t c;
  hcomm_unique_id_t id{};
  expect_error(hcomm_comm_init_rank(&c, &id, 0, 0), HCOMM_ERR_INVALID_ARGUMENT, "nranks is 0");
  expect_error(hcomm_comm_init_rank(&c, &id, 2, 2), HCOMM_ERR_INVALID_ARGUMENT, "rank 2");
  expect_error(hcomm_comm_init_rank(&c, nullptr, 2, 0), HCOMM_ERR_INVALID_ARGUMENT, "id is NULL");
}

TEST_F(Api, SingleRankCollectivesWorkAfterErrors) {
  std::vector<double> send = {1.5, -2, 3}, recv(3, 0);
  ASSERT_EQ(hcomm_allreduce(send.data(), recv.data(), 3, HCOMM_FLOAT64, HCOMM_AVG, comm_, nullptr), HCOMM_SUCCESS)
      << hcomm_get_last_error();
  EXPECT_EQ(recv, send);
  hcomm_request_t req;
  ASSERT_EQ(hcomm_ibarrier(comm_, &req), HCOMM_SUCCESS);
  EXPECT_EQ(hcomm_wait(req), HCOMM_SUCCESS);
}

TEST_F(Api, CxxWrapperThrowsTypedErrors) {
  hcomm::Communicator c(hcomm::Communicator::unique_id(), 1, 0);
  std::vector<int32_t> v = {1, 2, 3};
  c.allreduce(std::span<int32_t>(v), HCOMM_MAX);
  EXPECT_EQ(v, (std::vector<int32_t>{1, 2, 3}));
  std::vector<int32_t> shorter(2);
  try {
    c.allreduce(std::span<const int32_t>(v), std::span<int32_t>(shorter), HCOMM_SUM);
    FAIL();
  } catch (const hcomm::Error& e) {
    EXPECT_EQ(e.code(), HCOMM_ERR_INVALID_ARGUMENT);
  }
  EXPECT_EQ(c.rank(), 0);
  EXPECT_EQ(c.size(), 1);
}

TEST_F(Api, ForceAndQueryCheckTheirArguments) {
  const char* name = "x";
  expect_error(hcomm_comm_query_algorithm(comm_, HCOMM_COLL_ALLREDUCE, 1, HCOMM_FLOAT32, nullptr),
               HCOMM_ERR_INVALID_ARGUMENT, "hcomm_comm_query_algorithm: algorithm is NULL");
  expect_error(hcomm_comm_query_algorithm(nullptr, HCOMM_COLL_ALLREDUCE, 1, HCOMM_FLOAT32, &name),
               HCOMM_ERR_INVALID_ARGUMENT, "hcomm_comm_query_algorithm: comm is NULL");
  EXPECT_EQ(name, nullptr) << "a failed query leaves no name behind";
  expect_error(hcomm_comm_query_algorithm(comm_, HCOMM_NUM_COLLS, 1, HCOMM_FLOAT32, &name), HCOMM_ERR_INVALID_ARGUMENT,
               "hcomm_comm_query_algorithm: coll " + std::to_string(HCOMM_NUM_COLLS) + " is not a collective");
  expect_error(hcomm_comm_query_algorithm(comm_, HCOMM_COLL_SENDRECV, 1, HCOMM_FLOAT32, &name),
               HCOMM_ERR_INVALID_ARGUMENT, "point to point has no algorithm");
  expect_error(hcomm_comm_query_algorithm(comm_, HCOMM_COLL_ALLREDUCE, 1, static_cast<hcomm_dtype_t>(12), &name),
               HCOMM_ERR_INVALID_ARGUMENT, "hcomm_comm_query_algorithm: dtype 12");
  expect_error(hcomm_comm_query_algorithm(comm_, HCOMM_COLL_ALLGATHER, SIZE_MAX / 4, HCOMM_FLOAT64, &name),
               HCOMM_ERR_INVALID_ARGUMENT, "overflows");
  expect_error(hcomm_comm_force_algorithm(nullptr, HCOMM_COLL_ALLREDUCE, nullptr), HCOMM_ERR_INVALID_ARGUMENT,
               "hcomm_comm_force_algorithm: comm is NULL");
  expect_error(hcomm_comm_force_algorithm(comm_, static_cast<hcomm_coll_t>(-1), nullptr), HCOMM_ERR_INVALID_ARGUMENT,
               "hcomm_comm_force_algorithm: coll -1 is not a collective");
  expect_error(hcomm_comm_force_algorithm(comm_, HCOMM_COLL_ALLREDUCE, "no_such_algorithm"),
               HCOMM_ERR_INVALID_ARGUMENT, "no_such_algorithm");
}

// Every algorithm some plugin provides, as hcomm-info lists them.
std::vector<std::string> provided_algorithms() {
  std::vector<std::string> names;
  for (int i = 0; i < hcomm_plugin_count(); ++i) {
    hcomm_plugin_desc_t d;
    if (hcomm_plugin_get(i, &d) != HCOMM_SUCCESS || !d.provides) continue;
    std::stringstream list(d.provides);
    for (std::string name; std::getline(list, name, ',');) names.push_back(name);
  }
  return names;
}

TEST_F(Api, ForcedAlgorithmIsTheQueriedOneUntilCleared) {
  const size_t count = 1000;
  const char* chosen = nullptr;
  ASSERT_EQ(hcomm_comm_query_algorithm(comm_, HCOMM_COLL_ALLREDUCE, count, HCOMM_FLOAT32, &chosen), HCOMM_SUCCESS)
      << hcomm_get_last_error();
  const std::string by_selector = chosen;
  int forced = 0;
  for (const std::string& name : provided_algorithms()) {
    if (hcomm_comm_force_algorithm(comm_, HCOMM_COLL_ALLREDUCE, name.c_str()) != HCOMM_SUCCESS) {
      EXPECT_NE(std::string(hcomm_get_last_error()).find("algorithms that do"), std::string::npos)
          << hcomm_get_last_error();
      continue;
    }
    ASSERT_EQ(hcomm_comm_query_algorithm(comm_, HCOMM_COLL_ALLREDUCE, count, HCOMM_FLOAT32, &chosen), HCOMM_SUCCESS)
        << hcomm_get_last_error();
    if (chosen != name) continue;  // forced, but it does not serve this call: the selector chose
    ++forced;
    std::vector<int32_t> v = {3, -4, 5};
    ASSERT_EQ(hcomm_allreduce(v.data(), v.data(), v.size(), HCOMM_INT32, HCOMM_SUM, comm_, nullptr), HCOMM_SUCCESS)
        << name << ": " << hcomm_get_last_error();
    EXPECT_EQ(v, (std::vector<int32_t>{3, -4, 5})) << name;
  }
  EXPECT_GE(forced, 1) << "no provided algorithm could be forced for allreduce";
  ASSERT_EQ(hcomm_comm_force_algorithm(comm_, HCOMM_COLL_ALLREDUCE, nullptr), HCOMM_SUCCESS) << hcomm_get_last_error();
  ASSERT_EQ(hcomm_comm_query_algorithm(comm_, HCOMM_COLL_ALLREDUCE, count, HCOMM_FLOAT32, &chosen), HCOMM_SUCCESS);
  EXPECT_EQ(chosen, by_selector) << "forcing NULL goes back to the selector's choice";
}

TEST_F(Api, CallThatNoAlgorithmServesLeavesTheCommunicatorUsable) {
  std::vector<int64_t> send = {1, 2}, recv(2);
  hcomm_result_t rc = hcomm_alltoall(send.data(), recv.data(), 2, HCOMM_INT64, comm_, nullptr);
  if (accepted(rc)) {
    EXPECT_EQ(recv, send);
  }
  std::vector<double> in = {1.5, -2}, out(2, 0);
  ASSERT_EQ(hcomm_allreduce(in.data(), out.data(), 2, HCOMM_FLOAT64, HCOMM_SUM, comm_, nullptr), HCOMM_SUCCESS)
      << hcomm_get_last_error();
  EXPECT_EQ(out, in);
}

TEST(ApiNames, DtypesAndOps) {
  EXPECT_STREQ(hcomm_dtype_name(HCOMM_BFLOAT16), "bfloat16");
  EXPECT_EQ(hcomm_dtype_size(HCOMM_FLOAT16), 2u);
  EXPECT_EQ(hcomm_dtype_size(static_cast<hcomm_dtype_t>(77)), 0u);
  EXPECT_STREQ(hcomm_op_name(HCOMM_AVG), "avg");
  EXPECT_STREQ(hcomm_result_string(HCOMM_ERR_TIMEOUT), "timeout");
}

}  // namespace
