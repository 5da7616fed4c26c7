// Point to point through the C and C++ APIs: argument checks, and messages
// a rank sends itself (every element checked, one tag's messages in order,
// counts that differ are an error that says so).
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "hcomm/hcomm.h"
#include "hcomm/hcomm.hpp"
#include "tests/unit/api_fixture.hpp"

namespace {

class ApiP2P : public ApiFixture {};

// Element i of message k with tag t: every message and element differ.
std::vector<int32_t> message(int tag, int k, size_t count) {
  std::vector<int32_t> v(count);
  for (size_t i = 0; i < count; ++i) v[i] = static_cast<int32_t>(i * 7 + k * 1000003u + static_cast<uint32_t>(tag) * 31u);
  return v;
}

void expect_message(const std::vector<int32_t>& got, int tag, int k) {
  const std::vector<int32_t> want = message(tag, k, got.size());
  for (size_t i = 0; i < got.size(); ++i)
    if (got[i] != want[i]) {
      ADD_FAILURE() << "tag " << tag << " message " << k << ": element " << i << " is " << got[i] << ", expected "
                    << want[i];
      return;
    }
}

TEST_F(ApiP2P, ArgumentChecks) {
  int32_t x[4] = {};
  int stream = 0;
  hcomm_request_t req;
  auto e = HCOMM_ERR_INVALID_ARGUMENT;
  expect_error(hcomm_send(x, 4, HCOMM_INT32, 0, 0, nullptr, nullptr), e, "hcomm_send: comm is NULL");
  expect_error(hcomm_irecv(x, 4, HCOMM_INT32, 0, 0, nullptr, &req), e, "hcomm_irecv: comm is NULL");
  expect_error(hcomm_send(nullptr, 4, HCOMM_INT32, 0, 0, comm_, nullptr), e, "hcomm_send: buf is NULL");
  expect_error(hcomm_recv(nullptr, 1, HCOMM_INT8, 0, 0, comm_, nullptr), e, "hcomm_recv: buf is NULL");
  expect_error(hcomm_isend(x, 4, static_cast<hcomm_dtype_t>(11), 0, 0, comm_, &req), e, "hcomm_isend: dtype 11");
  expect_error(hcomm_recv(x, 4, HCOMM_INT32, 1, 0, comm_, nullptr), e,
               "hcomm_recv: peer 1 is not a rank of this communicator (0..0)");
  expect_error(hcomm_isend(x, 4, HCOMM_INT32, -1, 0, comm_, &req), e, "hcomm_isend: peer -1");
  expect_error(hcomm_send(x, 4, HCOMM_INT32, 0, -5, comm_, nullptr), e,
               "hcomm_send: tag -5 is outside 0..HCOMM_TAG_MAX (2147483647)");
  expect_error(hcomm_irecv(x, 4, HCOMM_INT32, 0, -1, comm_, &req), e, "hcomm_irecv: tag -1");
  expect_error(hcomm_send(x, SIZE_MAX / 4, HCOMM_INT64, 0, 0, comm_, nullptr), e, "hcomm_send: count");
  expect_error(hcomm_isend(x, 4, HCOMM_INT32, 0, 0, comm_, nullptr), e, "hcomm_isend: request is NULL");
  expect_error(hcomm_recv(x, 4, HCOMM_INT32, 0, 0, comm_, &stream), HCOMM_ERR_UNSUPPORTED,
               "hcomm_recv: stream is not NULL, but no device plugin sees a device");
  // The failed calls sent nothing: the first message of tag 0 is this one.
  std::vector<int32_t> out = message(0, 1, 4), in(4, -1);
  ASSERT_EQ(hcomm_isend(out.data(), 4, HCOMM_INT32, 0, 0, comm_, &req), HCOMM_SUCCESS) << hcomm_get_last_error();
  ASSERT_EQ(hcomm_recv(in.data(), 4, HCOMM_INT32, 0, 0, comm_, nullptr), HCOMM_SUCCESS) << hcomm_get_last_error();
  ASSERT_EQ(hcomm_wait(req), HCOMM_SUCCESS) << hcomm_get_last_error();
  expect_message(in, 0, 1);
}

TEST_F(ApiP2P, BlockingSendToSelfReturnsBeforeTheReceive) {
  std::vector<int32_t> out = message(9, 0, 1027), in(1027, -1);
  ASSERT_EQ(hcomm_send(out.data(), out.size(), HCOMM_INT32, 0, 9, comm_, nullptr), HCOMM_SUCCESS)
      << hcomm_get_last_error();
  out.assign(out.size(), 0);  // the message was taken when the send returned
  ASSERT_EQ(hcomm_recv(in.data(), in.size(), HCOMM_INT32, 0, 9, comm_, nullptr), HCOMM_SUCCESS)
      << hcomm_get_last_error();
  expect_message(in, 9, 0);
}

// Several tags in flight, receives posted before and after their sends: one
// tag's messages arrive in the order they were sent, whatever the sizes.
TEST_F(ApiP2P, SelfMessagesOfOneTagArriveInOrder) {
  const int tags[] = {0, 5, HCOMM_TAG_MAX};
  const size_t sizes[] = {0, 1, 7, 1027, (1u << 20) + 5};  // the last one spans several chunks
  const int per_tag = 5;
  std::vector<std::vector<int32_t>> out, in;
  std::vector<hcomm_request_t> reqs;
  auto post_receives = [&](int from, int to) {
    for (int k = from; k < to; ++k)
      for (int t : tags) {
        in.emplace_back(sizes[k], -1);
        reqs.emplace_back();
        ASSERT_EQ(hcomm_irecv(in.back().data(), sizes[k], HCOMM_INT32, 0, t, comm_, &reqs.back()), HCOMM_SUCCESS)
            << hcomm_get_last_error();
      }
  };
  auto post_sends = [&](int from, int to) {
    for (int k = from; k < to; ++k)
      for (int t : tags) {
        out.push_back(message(t, k, sizes[k]));
        reqs.emplace_back();
        ASSERT_EQ(hcomm_isend(out.back().data(), sizes[k], HCOMM_INT32, 0, t, comm_, &reqs.back()), HCOMM_SUCCESS)
            << hcomm_get_last_error();
      }
  };
  post_receives(0, 2);  // receives first
  post_sends(0, per_tag);
  post_receives(2, per_tag);  // sends first
  for (size_t i = reqs.size(); i-- > 0;) ASSERT_EQ(hcomm_wait(reqs[i]), HCOMM_SUCCESS) << hcomm_get_last_error();
  for (int k = 0; k < per_tag; ++k)
    for (size_t t = 0; t < std::size(tags); ++t) expect_message(in[k * std::size(tags) + t], tags[t], k);
}

TEST_F(ApiP2P, ZeroElementMessagesMatchToo) {
  hcomm_request_t recv;
  ASSERT_EQ(hcomm_irecv(nullptr, 0, HCOMM_FLOAT64, 0, 4, comm_, &recv), HCOMM_SUCCESS) << hcomm_get_last_error();
  int done = 1;
  ASSERT_EQ(hcomm_test(recv, &done), HCOMM_SUCCESS) << hcomm_get_last_error();
  EXPECT_EQ(done, 0) << "a receive completes only when its message came";
  ASSERT_EQ(hcomm_send(nullptr, 0, HCOMM_FLOAT64, 0, 4, comm_, nullptr), HCOMM_SUCCESS) << hcomm_get_last_error();
  ASSERT_EQ(hcomm_wait(recv), HCOMM_SUCCESS) << hcomm_get_last_error();
}

// The communicator is unusable after the error, so each case has its own.
TEST_F(ApiP2P, CountsThatDifferAreAnErrorThatSaysSo) {
  for (size_t recv_count : {7, 9}) {
    hcomm_unique_id_t id;
    hcomm_comm_t comm = nullptr;
    ASSERT_EQ(hcomm_get_unique_id(&id), HCOMM_SUCCESS);
    ASSERT_EQ(hcomm_comm_init_rank(&comm, &id, 1, 0), HCOMM_SUCCESS) << hcomm_get_last_error();
    std::vector<int32_t> out = message(3, 0, 8), in(9);
    hcomm_request_t req;
    ASSERT_EQ(hcomm_isend(out.data(), 8, HCOMM_INT32, 0, 3, comm, &req), HCOMM_SUCCESS) << hcomm_get_last_error();
    expect_error(hcomm_recv(in.data(), recv_count, HCOMM_INT32, 0, 3, comm, nullptr), HCOMM_ERR_INVALID_ARGUMENT,
                 "receive of " + std::to_string(recv_count) + " elements from rank 0 with tag 3");
    EXPECT_NE(std::string(hcomm_get_last_error()).find("a receive's count must equal the count of the send"),
              std::string::npos)
        << hcomm_get_last_error();
    EXPECT_EQ(hcomm_comm_destroy(comm), HCOMM_SUCCESS);
  }
}

// Between two ranks too: a message shorter than its receive is the
// executor's error, a longer one the transport's; the sender is not told.
TEST_F(ApiP2P, CountsThatDifferBetweenRanksAreAnErrorOnTheReceiver) {
  for (size_t recv_count : {7, 9}) {
    on_two_ranks([&](hcomm_comm_t comm, int rank) {
      std::vector<int32_t> out = message(5, 0, 8), in(9);
      if (rank == 0) {
        ASSERT_EQ(hcomm_send(out.data(), 8, HCOMM_INT32, 1, 5, comm, nullptr), HCOMM_SUCCESS)
            << hcomm_get_last_error();
        return;
      }
      EXPECT_EQ(hcomm_recv(in.data(), recv_count, HCOMM_INT32, 0, 5, comm, nullptr), HCOMM_ERR_INVALID_ARGUMENT);
      const std::string error = hcomm_get_last_error();
      if (recv_count > 8)
        EXPECT_NE(error.find("rank 0 sent 32 bytes where this rank expects 36"), std::string::npos) << error;
      else
        EXPECT_NE(error.find("longer than the 28-byte receive"), std::string::npos) << error;
    });
  }
}

TEST_F(ApiP2P, TwoRanksExchangeInBothDirections) {
  on_two_ranks([](hcomm_comm_t comm, int rank) {
    const int peer = 1 - rank;
    const size_t count = 100003;
    std::vector<int32_t> out = message(rank, 0, count), in(count, -1), echo(count, -1);
    hcomm_request_t reqs[2];
    ASSERT_EQ(hcomm_irecv(in.data(), count, HCOMM_INT32, peer, 11, comm, &reqs[0]), HCOMM_SUCCESS);
    ASSERT_EQ(hcomm_isend(out.data(), count, HCOMM_INT32, peer, 11, comm, &reqs[1]), HCOMM_SUCCESS);
    ASSERT_EQ(hcomm_wait(reqs[1]), HCOMM_SUCCESS) << hcomm_get_last_error();
    ASSERT_EQ(hcomm_wait(reqs[0]), HCOMM_SUCCESS) << hcomm_get_last_error();
    expect_message(in, peer, 0);
    // Rank 0 sends first, rank 1 receives first: blocking calls that pair up.
    if (rank == 0) {
      ASSERT_EQ(hcomm_send(in.data(), count, HCOMM_INT32, peer, 12, comm, nullptr), HCOMM_SUCCESS);
      ASSERT_EQ(hcomm_recv(echo.data(), count, HCOMM_INT32, peer, 12, comm, nullptr), HCOMM_SUCCESS);
    } else {
      ASSERT_EQ(hcomm_recv(echo.data(), count, HCOMM_INT32, peer, 12, comm, nullptr), HCOMM_SUCCESS);
      ASSERT_EQ(hcomm_send(in.data(), count, HCOMM_INT32, peer, 12, comm, nullptr), HCOMM_SUCCESS);
    }
    expect_message(echo, rank, 0);
  });
}

TEST_F(ApiP2P, CxxWrapper) {
  hcomm::Communicator c(hcomm::Communicator::unique_id(), 1, 0);
  std::vector<int32_t> out = message(1, 0, 33), in(33, -1);
  hcomm::Request r = c.irecv(std::span<int32_t>(in), 0, 1);
  EXPECT_FALSE(r.test());
  c.send(std::span<const int32_t>(out), 0, 1);
  r.wait();
  expect_message(in, 1, 0);
  try {
    c.recv(std::span<int32_t>(in), 0, -1);
    FAIL() << "a negative tag must throw";
  } catch (const hcomm::Error& e) {
    EXPECT_EQ(e.code(), HCOMM_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("hcomm_recv: tag -1"), std::string::npos) << e.what();
  }
  std::vector<int32_t> gathered(2);
  try {
    c.allgather(std::span<const int32_t>(out), std::span<int32_t>(gathered));
    FAIL() << "a receive span of the wrong size must throw";
  } catch (const hcomm::Error& e) {
    EXPECT_EQ(e.code(), HCOMM_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("receive span holds 2 elements, not one block of 33"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(c.force_algorithm(HCOMM_COLL_ALLREDUCE, "no_such_algorithm"), hcomm::Error);
  const std::string chosen = c.query_algorithm(HCOMM_COLL_ALLREDUCE, 10, HCOMM_FLOAT32);
  EXPECT_FALSE(chosen.empty());
}

}  // namespace
