// Argument checks of the collectives beyond allreduce and broadcast: every
// bad argument is an error that names the function and the argument, the
// in-place relations of hcomm.h are accepted, and a rank that is not the
// root ignores the buffers only the root uses.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "hcomm/hcomm.h"
#include "tests/unit/api_fixture.hpp"

namespace {

class ApiCollectives : public ApiFixture {};

// Buffers of one rank's valid call: 4 elements each, one block of 4 per rank.
struct Buffers {
  float send[4] = {1, -2, 3.5f, 4};
  float recv[4] = {0, 0, 0, 0};
  size_t counts[1] = {4};
  size_t displs[1] = {0};
};

// One collective, called with valid buffers and the given dtype, comm and
// completion; the blocking form takes a stream, the nonblocking a request.
struct Collective {
  std::string name;
  std::function<hcomm_result_t(Buffers&, hcomm_dtype_t, hcomm_comm_t, hcomm_stream_t)> blocking;
  std::function<hcomm_result_t(Buffers&, hcomm_dtype_t, hcomm_comm_t, hcomm_request_t*)> nonblocking;
  bool reduces;
  bool rank_order = false;  // scan, exscan: no HCOMM_AVG
};

std::vector<Collective> collectives(hcomm_op_t op) {
  return {
      {"reduce",
       [=](Buffers& b, hcomm_dtype_t t, hcomm_comm_t c, hcomm_stream_t s) {
         return hcomm_reduce(b.send, b.recv, 4, t, op, 0, c, s);
       },
       [=](Buffers& b, hcomm_dtype_t t, hcomm_comm_t c, hcomm_request_t* r) {
         return hcomm_ireduce(b.send, b.recv, 4, t, op, 0, c, r);
       },
       true},
      {"allgather",
       [](Buffers& b, hcomm_dtype_t t, hcomm_comm_t c, hcomm_stream_t s) {
         return hcomm_allgather(b.send, b.recv, 4, t, c, s);
       },
       [](Buffers& b, hcomm_dtype_t t, hcomm_comm_t c, hcomm_request_t* r) {
         return hcomm_iallgather(b.send, b.recv, 4, t, c, r);
       },
       false},
      {"allgatherv",
       [](Buffers& b, hcomm_dtype_t t, hcomm_comm_t c, hcomm_stream_t s) {
         return hcomm_allgatherv(b.send, b.recv, b.counts, b.displs, t, c, s);
       },
       [](Buffers& b, hcomm_dtype_t t, hcomm_comm_t c, hcomm_request_t* r) {
         return hcomm_iallgatherv(b.send, b.recv, b.counts, b.displs, t, c, r);
       },
       false},
      {"reduce_scatter",
       [=](Buffers& b, hcomm_dtype_t t, hcomm_comm_t c, hcomm_stream_t s) {
         return hcomm_reduce_scatter(b.send, b.recv, 4, t, op, c, s);
       },
       [=](Buffers& b, hcomm_dtype_t t, hcomm_comm_t c, hcomm_request_t* r) {
         return hcomm_ireduce_scatter(b.send, b.recv, 4, t, op, c, r);
       },
       true},
      {"reduce_scatter_v",
       [=](Buffers& b, hcomm_dtype_t t, hcomm_comm_t c, hcomm_stream_t s) {
         return hcomm_reduce_scatter_v(b.send, b.recv, b.counts, t, op, c, s);
       },
       [=](Buffers& b, hcomm_dtype_t t, hcomm_comm_t c, hcomm_request_t* r) {
         return hcomm_ireduce_scatter_v(b.send, b.recv, b.counts, t, op, c, r);
       },
       true},
      {"alltoall",
       [](Buffers& b, hcomm_dtype_t t, hcomm_comm_t c, hcomm_stream_t s) {
         return hcomm_alltoall(b.send, b.recv, 4, t, c, s);
       },
       [](Buffers& b, hcomm_dtype_t t, hcomm_comm_t c, hcomm_request_t* r) {
         return hcomm_ialltoall(b.send, b.recv, 4, t, c, r);
       },
       false},
      {"alltoallv",
       [](Buffers& b, hcomm_dtype_t t, hcomm_comm_t c, hcomm_stream_t s) {
         return hcomm_alltoallv(b.send, b.counts, b.displs, b.recv, b.counts, b.displs, t, c, s);
       },
       [](Buffers& b, hcomm_dtype_t t, hcomm_comm_t c, hcomm_request_t* r) {
         return hcomm_ialltoallv(b.send, b.counts, b.displs, b.recv, b.counts, b.displs, t, c, r);
       },
       false},
      {"gather",
       [](Buffers& b, hcomm_dtype_t t, hcomm_comm_t c, hcomm_stream_t s) {
         return hcomm_gather(b.send, b.recv, 4, t, 0, c, s);
       },
       [](Buffers& b, hcomm_dtype_t t, hcomm_comm_t c, hcomm_request_t* r) {
         return hcomm_igather(b.send, b.recv, 4, t, 0, c, r);
       },
       false},
      {"scatter",
       [](Buffers& b, hcomm_dtype_t t, hcomm_comm_t c, hcomm_stream_t s) {
         return hcomm_scatter(b.send, b.recv, 4, t, 0, c, s);
       },
       [](Buffers& b, hcomm_dtype_t t, hcomm_comm_t c, hcomm_request_t* r) {
         return hcomm_iscatter(b.send, b.recv, 4, t, 0, c, r);
       },
       false},
      {"scan",
       [=](Buffers& b, hcomm_dtype_t t, hcomm_comm_t c, hcomm_stream_t s) {
         return hcomm_scan(b.send, b.recv, 4, t, op, c, s);
       },
       [=](Buffers& b, hcomm_dtype_t t, hcomm_comm_t c, hcomm_request_t* r) {
         return hcomm_iscan(b.send, b.recv, 4, t, op, c, r);
       },
       true, true},
      {"exscan",
       [=](Buffers& b, hcomm_dtype_t t, hcomm_comm_t c, hcomm_stream_t s) {
         return hcomm_exscan(b.send, b.recv, 4, t, op, c, s);
       },
       [=](Buffers& b, hcomm_dtype_t t, hcomm_comm_t c, hcomm_request_t* r) {
         return hcomm_iexscan(b.send, b.recv, 4, t, op, c, r);
       },
       true, true},
  };
}

TEST_F(ApiCollectives, CommDtypeOpRequestAndStreamOfEveryCollective) {
  int stream = 0;
  for (const Collective& c : collectives(HCOMM_SUM)) {
    SCOPED_TRACE(c.name);
    const std::string fn = "hcomm_" + c.name, ifn = "hcomm_i" + c.name;
    Buffers b;
    hcomm_request_t req = reinterpret_cast<hcomm_request_t>(&stream);
    expect_error(c.blocking(b, HCOMM_FLOAT32, nullptr, nullptr), HCOMM_ERR_INVALID_ARGUMENT, fn + ": comm is NULL");
    expect_error(c.nonblocking(b, HCOMM_FLOAT32, nullptr, &req), HCOMM_ERR_INVALID_ARGUMENT, ifn + ": comm is NULL");
    EXPECT_EQ(req, nullptr) << "a failed call hands back no request";
    expect_error(c.nonblocking(b, HCOMM_FLOAT32, comm_, nullptr), HCOMM_ERR_INVALID_ARGUMENT,
                 ifn + ": request is NULL");
    expect_error(c.blocking(b, HCOMM_FLOAT32, comm_, &stream), HCOMM_ERR_UNSUPPORTED, fn + ": stream is not NULL, but no device plugin sees a device");
    expect_error(c.blocking(b, static_cast<hcomm_dtype_t>(10), comm_, nullptr), HCOMM_ERR_INVALID_ARGUMENT,
                 fn + ": dtype 10");
    expect_error(c.nonblocking(b, static_cast<hcomm_dtype_t>(-3), comm_, &req), HCOMM_ERR_INVALID_ARGUMENT,
                 ifn + ": dtype -3");
  }
  for (const Collective& c : collectives(static_cast<hcomm_op_t>(5))) {
    SCOPED_TRACE(c.name);
    Buffers b;
    hcomm_result_t rc = c.blocking(b, HCOMM_FLOAT32, comm_, nullptr);
    if (c.reduces)
      expect_error(rc, HCOMM_ERR_INVALID_ARGUMENT, "hcomm_" + c.name + ": op 5 is not an hcomm_op_t");
    else
      EXPECT_NE(rc, HCOMM_ERR_INVALID_ARGUMENT) << "op is not an argument of " << c.name << ": "
                                                << hcomm_get_last_error();
  }
}

// One rank's results are its own inputs: reductions of one value (AVG
// divides by 1) and every block a copy; exscan, which reduces no rank there,
// leaves recvbuf as it was.
TEST_F(ApiCollectives, ValidCallsOnOneRankGiveTheirInputs) {
  for (hcomm_op_t op : {HCOMM_SUM, HCOMM_AVG, HCOMM_MIN})
    for (const Collective& c : collectives(op)) {
      if (c.rank_order && op == HCOMM_AVG) continue;
      SCOPED_TRACE(c.name);
      Buffers b;
      const std::vector<float> input(b.send, b.send + 4);
      const std::vector<float> output = c.name == "exscan" ? std::vector<float>(b.recv, b.recv + 4) : input;
      if (accepted(c.blocking(b, HCOMM_FLOAT32, comm_, nullptr))) {
        EXPECT_EQ(std::vector<float>(b.recv, b.recv + 4), output);
      }
      Buffers nb;
      hcomm_request_t req = nullptr;
      if (accepted(c.nonblocking(nb, HCOMM_FLOAT32, comm_, &req))) {
        ASSERT_EQ(hcomm_wait(req), HCOMM_SUCCESS) << hcomm_get_last_error();
        EXPECT_EQ(std::vector<float>(nb.recv, nb.recv + 4), output);
      }
      EXPECT_EQ(std::vector<float>(b.send, b.send + 4), input) << "sendbuf is read only";
    }
}

TEST_F(ApiCollectives, NullBuffersWithCounts) {
  float x[4] = {};
  size_t n[1] = {4}, d[1] = {0};
  auto e = HCOMM_ERR_INVALID_ARGUMENT;
  expect_error(hcomm_reduce(nullptr, x, 4, HCOMM_FLOAT32, HCOMM_SUM, 0, comm_, nullptr), e,
               "hcomm_reduce: sendbuf is NULL");
  expect_error(hcomm_reduce(x, nullptr, 4, HCOMM_FLOAT32, HCOMM_SUM, 0, comm_, nullptr), e,
               "hcomm_reduce: recvbuf is NULL");
  expect_error(hcomm_allgather(nullptr, x, 4, HCOMM_FLOAT32, comm_, nullptr), e, "hcomm_allgather: sendbuf is NULL");
  expect_error(hcomm_allgather(x, nullptr, 4, HCOMM_FLOAT32, comm_, nullptr), e, "hcomm_allgather: recvbuf is NULL");
  expect_error(hcomm_allgatherv(nullptr, x, n, d, HCOMM_FLOAT32, comm_, nullptr), e,
               "hcomm_allgatherv: sendbuf is NULL");
  expect_error(hcomm_allgatherv(x, nullptr, n, d, HCOMM_FLOAT32, comm_, nullptr), e,
               "hcomm_allgatherv: recvbuf is NULL");
  expect_error(hcomm_reduce_scatter(nullptr, x, 4, HCOMM_FLOAT32, HCOMM_SUM, comm_, nullptr), e,
               "hcomm_reduce_scatter: sendbuf is NULL");
  expect_error(hcomm_reduce_scatter(x, nullptr, 4, HCOMM_FLOAT32, HCOMM_SUM, comm_, nullptr), e,
               "hcomm_reduce_scatter: recvbuf is NULL");
  expect_error(hcomm_reduce_scatter_v(nullptr, x, n, HCOMM_FLOAT32, HCOMM_SUM, comm_, nullptr), e,
               "hcomm_reduce_scatter_v: sendbuf is NULL");
  expect_error(hcomm_reduce_scatter_v(x, nullptr, n, HCOMM_FLOAT32, HCOMM_SUM, comm_, nullptr), e,
               "hcomm_reduce_scatter_v: recvbuf is NULL");
  expect_error(hcomm_alltoall(nullptr, x, 4, HCOMM_FLOAT32, comm_, nullptr), e, "hcomm_alltoall: sendbuf is NULL");
  expect_error(hcomm_alltoall(x, nullptr, 4, HCOMM_FLOAT32, comm_, nullptr), e, "hcomm_alltoall: recvbuf is NULL");
  expect_error(hcomm_alltoallv(nullptr, n, d, x, n, d, HCOMM_FLOAT32, comm_, nullptr), e,
               "hcomm_alltoallv: sendbuf is NULL");
  expect_error(hcomm_alltoallv(x, n, d, nullptr, n, d, HCOMM_FLOAT32, comm_, nullptr), e,
               "hcomm_alltoallv: recvbuf is NULL");
  expect_error(hcomm_gather(nullptr, x, 4, HCOMM_FLOAT32, 0, comm_, nullptr), e, "hcomm_gather: sendbuf is NULL");
  expect_error(hcomm_gather(x, nullptr, 4, HCOMM_FLOAT32, 0, comm_, nullptr), e, "hcomm_gather: recvbuf is NULL");
  expect_error(hcomm_scatter(nullptr, x, 4, HCOMM_FLOAT32, 0, comm_, nullptr), e, "hcomm_scatter: sendbuf is NULL");
  hcomm_request_t req;
  expect_error(hcomm_iscatter(x, nullptr, 4, HCOMM_FLOAT32, 0, comm_, &req), e, "hcomm_iscatter: recvbuf is NULL");
}

TEST_F(ApiCollectives, NullBuffersWithNothingToMoveAreAccepted) {
  size_t zero[1] = {0};
  accepted(hcomm_reduce(nullptr, nullptr, 0, HCOMM_INT8, HCOMM_MAX, 0, comm_, nullptr));
  accepted(hcomm_allgather(nullptr, nullptr, 0, HCOMM_INT8, comm_, nullptr));
  accepted(hcomm_allgatherv(nullptr, nullptr, zero, zero, HCOMM_INT8, comm_, nullptr));
  accepted(hcomm_reduce_scatter_v(nullptr, nullptr, zero, HCOMM_INT8, HCOMM_SUM, comm_, nullptr));
  accepted(hcomm_alltoallv(nullptr, zero, zero, nullptr, zero, zero, HCOMM_INT8, comm_, nullptr));
  accepted(hcomm_scatter(nullptr, nullptr, 0, HCOMM_INT8, 0, comm_, nullptr));
}

TEST_F(ApiCollectives, RootOutOfRange) {
  float x[4] = {}, y[4] = {};
  auto e = HCOMM_ERR_INVALID_ARGUMENT;
  expect_error(hcomm_reduce(x, y, 4, HCOMM_FLOAT32, HCOMM_SUM, 1, comm_, nullptr), e,
               "hcomm_reduce: root 1 is not a rank of this communicator (0..0)");
  hcomm_request_t req;
  expect_error(hcomm_ireduce(x, y, 4, HCOMM_FLOAT32, HCOMM_SUM, -1, comm_, &req), e, "hcomm_ireduce: root -1");
  expect_error(hcomm_gather(x, y, 4, HCOMM_FLOAT32, 7, comm_, nullptr), e, "hcomm_gather: root 7");
  expect_error(hcomm_igather(x, y, 4, HCOMM_FLOAT32, -2, comm_, &req), e, "hcomm_igather: root -2");
  expect_error(hcomm_scatter(x, y, 4, HCOMM_FLOAT32, 1, comm_, nullptr), e, "hcomm_scatter: root 1");
  expect_error(hcomm_iscatter(x, y, 0, HCOMM_FLOAT32, 1, comm_, &req), e, "hcomm_iscatter: root 1");
}

TEST_F(ApiCollectives, NullLayoutArrays) {
  float x[4] = {}, y[4] = {};
  size_t n[1] = {4}, d[1] = {0};
  auto e = HCOMM_ERR_INVALID_ARGUMENT;
  expect_error(hcomm_allgatherv(x, y, nullptr, d, HCOMM_FLOAT32, comm_, nullptr), e,
               "hcomm_allgatherv: recvcounts is NULL");
  expect_error(hcomm_allgatherv(x, y, n, nullptr, HCOMM_FLOAT32, comm_, nullptr), e,
               "hcomm_allgatherv: displs is NULL");
  hcomm_request_t req;
  expect_error(hcomm_iallgatherv(nullptr, nullptr, nullptr, nullptr, HCOMM_FLOAT32, comm_, &req), e,
               "hcomm_iallgatherv: recvcounts is NULL");
  expect_error(hcomm_reduce_scatter_v(x, y, nullptr, HCOMM_FLOAT32, HCOMM_SUM, comm_, nullptr), e,
               "hcomm_reduce_scatter_v: recvcounts is NULL");
  expect_error(hcomm_ireduce_scatter_v(x, y, nullptr, HCOMM_FLOAT32, HCOMM_SUM, comm_, &req), e,
               "hcomm_ireduce_scatter_v: recvcounts is NULL");
  expect_error(hcomm_alltoallv(x, nullptr, d, y, n, d, HCOMM_FLOAT32, comm_, nullptr), e,
               "hcomm_alltoallv: sendcounts is NULL");
  expect_error(hcomm_alltoallv(x, n, nullptr, y, n, d, HCOMM_FLOAT32, comm_, nullptr), e,
               "hcomm_alltoallv: sdispls is NULL");
  expect_error(hcomm_alltoallv(x, n, d, y, nullptr, d, HCOMM_FLOAT32, comm_, nullptr), e,
               "hcomm_alltoallv: recvcounts is NULL");
  expect_error(hcomm_ialltoallv(x, n, d, y, n, nullptr, HCOMM_FLOAT32, comm_, &req), e,
               "hcomm_ialltoallv: rdispls is NULL");
  // In place ignores the send layout, but not the receive layout.
  expect_error(hcomm_alltoallv(y, nullptr, nullptr, y, n, nullptr, HCOMM_FLOAT32, comm_, nullptr), e,
               "hcomm_alltoallv: rdispls is NULL");
  const std::vector<float> before(y, y + 4);
  if (accepted(hcomm_alltoallv(y, nullptr, nullptr, y, n, d, HCOMM_FLOAT32, comm_, nullptr))) {
    EXPECT_EQ(std::vector<float>(y, y + 4), before);
  }
}

TEST_F(ApiCollectives, CountsThatOverflowTheByteSize) {
  double x[1] = {}, y[1] = {};
  const size_t huge = SIZE_MAX / 4;
  auto e = HCOMM_ERR_INVALID_ARGUMENT;
  expect_error(hcomm_reduce(x, y, huge, HCOMM_FLOAT64, HCOMM_SUM, 0, comm_, nullptr), e, "hcomm_reduce: count");
  expect_error(hcomm_allgather(x, y, huge, HCOMM_FLOAT64, comm_, nullptr), e, "hcomm_allgather: count");
  expect_error(hcomm_reduce_scatter(x, y, huge, HCOMM_FLOAT64, HCOMM_SUM, comm_, nullptr), e,
               "hcomm_reduce_scatter: count");
  expect_error(hcomm_alltoall(x, y, huge, HCOMM_FLOAT64, comm_, nullptr), e, "overflows the byte size");
  expect_error(hcomm_gather(x, y, huge, HCOMM_FLOAT64, 0, comm_, nullptr), e, "hcomm_gather: count");
  expect_error(hcomm_scatter(x, y, huge, HCOMM_FLOAT64, 0, comm_, nullptr), e, "hcomm_scatter: count");
  size_t counts[1] = {huge}, one[1] = {1}, far[1] = {SIZE_MAX / 16}, zero[1] = {0};
  expect_error(hcomm_allgatherv(x, y, counts, zero, HCOMM_FLOAT64, comm_, nullptr), e,
               "hcomm_allgatherv: the recvcounts add up to more than");
  expect_error(hcomm_allgatherv(x, y, one, far, HCOMM_FLOAT64, comm_, nullptr), e,
               "hcomm_allgatherv: displs[0] + recvcounts[0]");
  expect_error(hcomm_reduce_scatter_v(x, y, counts, HCOMM_FLOAT64, HCOMM_SUM, comm_, nullptr), e,
               "hcomm_reduce_scatter_v: the recvcounts add up");
  expect_error(hcomm_alltoallv(x, one, far, y, one, zero, HCOMM_FLOAT64, comm_, nullptr), e,
               "hcomm_alltoallv: sdispls[0] + sendcounts[0]");
  expect_error(hcomm_alltoallv(x, one, zero, y, one, far, HCOMM_FLOAT64, comm_, nullptr), e,
               "hcomm_alltoallv: rdispls[0] + recvcounts[0]");
}

// On one rank every in-place relation is a pointer equality or an offset of
// 0 blocks; buffers shifted by one element overlap without being in place.
TEST_F(ApiCollectives, OverlapIsAnErrorUnlessItIsTheInPlaceRelation) {
  float v[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  auto e = HCOMM_ERR_INVALID_ARGUMENT;
  expect_error(hcomm_reduce(v, v + 1, 4, HCOMM_FLOAT32, HCOMM_SUM, 0, comm_, nullptr), e,
               "hcomm_reduce: sendbuf and recvbuf overlap but the call is not in place (in place is sendbuf == "
               "recvbuf on the root)");
  expect_error(hcomm_allgather(v + 1, v, 4, HCOMM_FLOAT32, comm_, nullptr), e,
               "in place is sendbuf == recvbuf + rank*count elements");
  expect_error(hcomm_reduce_scatter(v, v + 2, 4, HCOMM_FLOAT32, HCOMM_SUM, comm_, nullptr), e,
               "in place is recvbuf == sendbuf + rank*recvcount elements");
  expect_error(hcomm_alltoall(v + 3, v, 4, HCOMM_FLOAT32, comm_, nullptr), e, "hcomm_alltoall: sendbuf and recvbuf");
  expect_error(hcomm_gather(v, v + 1, 4, HCOMM_FLOAT32, 0, comm_, nullptr), e,
               "in place is sendbuf == recvbuf + root*count elements on the root");
  expect_error(hcomm_scatter(v + 1, v, 4, HCOMM_FLOAT32, 0, comm_, nullptr), e,
               "in place is recvbuf == sendbuf + root*count elements on the root");
  size_t four[1] = {4}, zero[1] = {0}, one[1] = {1};
  expect_error(hcomm_reduce_scatter_v(v, v + 1, four, HCOMM_FLOAT32, HCOMM_SUM, comm_, nullptr), e,
               "hcomm_reduce_scatter_v: sendbuf and recvbuf overlap");
  expect_error(hcomm_alltoallv(v, four, zero, v + 1, four, zero, HCOMM_FLOAT32, comm_, nullptr), e,
               "hcomm_alltoallv: sendbuf and recvbuf overlap");
  // Equal pointers are not allgatherv's in-place form when displs[rank] is not 0.
  expect_error(hcomm_allgatherv(v, v, four, one, HCOMM_FLOAT32, comm_, nullptr), e,
               "in place is sendbuf == recvbuf + displs[rank] elements");

  const std::vector<float> before(v, v + 8);
  accepted(hcomm_reduce(v, v, 4, HCOMM_FLOAT32, HCOMM_SUM, 0, comm_, nullptr));
  accepted(hcomm_allgather(v, v, 4, HCOMM_FLOAT32, comm_, nullptr));
  accepted(hcomm_allgatherv(v + 1, v, four, one, HCOMM_FLOAT32, comm_, nullptr));
  accepted(hcomm_reduce_scatter(v, v, 4, HCOMM_FLOAT32, HCOMM_MAX, comm_, nullptr));
  accepted(hcomm_reduce_scatter_v(v, v, four, HCOMM_FLOAT32, HCOMM_MIN, comm_, nullptr));
  accepted(hcomm_alltoall(v, v, 4, HCOMM_FLOAT32, comm_, nullptr));
  accepted(hcomm_gather(v, v, 4, HCOMM_FLOAT32, 0, comm_, nullptr));
  accepted(hcomm_scatter(v, v, 4, HCOMM_FLOAT32, 0, comm_, nullptr));
  EXPECT_EQ(std::vector<float>(v, v + 8), before) << "one rank's in-place calls change nothing";
}

// Rank 1 passes NULL where only the root reads or writes; the checks let the
// call through (it then runs, or no loaded algorithm serves it).
TEST_F(ApiCollectives, BuffersOfTheRootAreNotCheckedElsewhere) {
  on_two_ranks([](hcomm_comm_t comm, int rank) {
    std::vector<int32_t> send(8, rank + 1), recv(8, -1);
    const bool root = rank == 0;
    hcomm_result_t rc = hcomm_reduce(send.data(), root ? recv.data() : nullptr, 4, HCOMM_INT32, HCOMM_SUM, 0, comm,
                                     nullptr);
    if (accepted(rc) && root) {
      EXPECT_EQ(recv, (std::vector<int32_t>{3, 3, 3, 3, -1, -1, -1, -1}));
    }
    rc = hcomm_gather(send.data(), root ? recv.data() : nullptr, 4, HCOMM_INT32, 0, comm, nullptr);
    if (accepted(rc) && root) {
      EXPECT_EQ(recv, (std::vector<int32_t>{1, 1, 1, 1, 2, 2, 2, 2}));
    }
    std::vector<int32_t> blocks = {10, 11, 20, 21}, mine(2, -1);
    rc = hcomm_scatter(root ? blocks.data() : nullptr, mine.data(), 2, HCOMM_INT32, 0, comm, nullptr);
    if (accepted(rc)) {
      EXPECT_EQ(mine, (std::vector<int32_t>{10 + 10 * rank, 11 + 10 * rank}));
    }
    // Overlap matters only where the buffer is used: rank 1's recvbuf is not.
    rc = hcomm_reduce(send.data(), root ? recv.data() : send.data() + 1, 4, HCOMM_INT32, HCOMM_SUM, 0, comm,
                      nullptr);
    if (accepted(rc) && root) {
      EXPECT_EQ(recv[0], 3);
    }
  });
}

// A v-collective's layout belongs to its call: calls that differ only in
// their counts or displacements each land their own way, and the caller may
// reuse its arrays once the call has started.
TEST_F(ApiCollectives, VariableLayoutsAreTakenAtTheCall) {
  struct Layout {
    std::vector<size_t> counts, displs;
  };
  const Layout layouts[] = {{{2, 3}, {0, 2}}, {{2, 3}, {5, 0}}, {{1, 1}, {0, 1}}, {{0, 4}, {0, 3}}};
  on_two_ranks([&](hcomm_comm_t comm, int rank) {
    for (const Layout& l : layouts) {
      std::vector<size_t> counts = l.counts, displs = l.displs;
      std::vector<int32_t> send(counts[rank]), recv(8, -1), expected(8, -1);
      for (size_t i = 0; i < send.size(); ++i) send[i] = 100 * (rank + 1) + static_cast<int32_t>(i);
      for (int r = 0; r < 2; ++r)
        for (size_t i = 0; i < l.counts[r]; ++i) expected[l.displs[r] + i] = 100 * (r + 1) + static_cast<int32_t>(i);
      hcomm_request_t req = nullptr;
      if (!accepted(hcomm_iallgatherv(send.data(), recv.data(), counts.data(), displs.data(), HCOMM_INT32, comm, &req)))
        return;
      counts.assign(2, 1);
      displs.assign(2, 7);
      ASSERT_EQ(hcomm_wait(req), HCOMM_SUCCESS) << hcomm_get_last_error();
      EXPECT_EQ(recv, expected) << "rank " << rank << ", displs " << l.displs[0] << ", " << l.displs[1];
    }
  });
}

// Scan and exscan: AVG has no prefix form; exscan's rank 0 leaves its
// recvbuf alone and may pass none; the other buffer checks are allreduce's.
TEST_F(ApiCollectives, ScanAndExscanArguments) {
  float x[4] = {1, 2, 3, 4}, y[4] = {};
  auto e = HCOMM_ERR_INVALID_ARGUMENT;
  hcomm_request_t req = nullptr;
  expect_error(hcomm_scan(x, y, 4, HCOMM_FLOAT32, HCOMM_AVG, comm_, nullptr), e,
               "hcomm_scan: op is HCOMM_AVG, which has no prefix form");
  expect_error(hcomm_iscan(x, y, 4, HCOMM_FLOAT32, HCOMM_AVG, comm_, &req), e, "hcomm_iscan: op is HCOMM_AVG");
  expect_error(hcomm_exscan(x, y, 4, HCOMM_INT32, HCOMM_AVG, comm_, nullptr), e, "hcomm_exscan: op is HCOMM_AVG");
  expect_error(hcomm_iexscan(x, x, 4, HCOMM_INT32, HCOMM_AVG, comm_, &req), e, "hcomm_iexscan: op is HCOMM_AVG");
  EXPECT_EQ(req, nullptr);
  expect_error(hcomm_scan(nullptr, y, 4, HCOMM_FLOAT32, HCOMM_SUM, comm_, nullptr), e, "hcomm_scan: sendbuf is NULL");
  expect_error(hcomm_scan(x, nullptr, 4, HCOMM_FLOAT32, HCOMM_SUM, comm_, nullptr), e, "hcomm_scan: recvbuf is NULL");
  expect_error(hcomm_exscan(nullptr, y, 4, HCOMM_FLOAT32, HCOMM_SUM, comm_, nullptr), e,
               "hcomm_exscan: sendbuf is NULL");
  expect_error(hcomm_scan(x, x + 1, 3, HCOMM_FLOAT32, HCOMM_MAX, comm_, nullptr), e,
               "hcomm_scan: sendbuf and recvbuf overlap but the call is not in place (in place is sendbuf == recvbuf)");
  expect_error(hcomm_iscan(x + 1, x, 3, HCOMM_FLOAT32, HCOMM_MAX, comm_, &req), e,
               "hcomm_iscan: sendbuf and recvbuf overlap");
  expect_error(hcomm_scan(x, y, SIZE_MAX / 4, HCOMM_FLOAT64, HCOMM_SUM, comm_, nullptr), e, "hcomm_scan: count");
  // Rank 0's exscan result is undefined: nothing is written, no buffer needed
  // (nor checked for overlap).
  accepted(hcomm_exscan(x, nullptr, 4, HCOMM_FLOAT32, HCOMM_SUM, comm_, nullptr));
  accepted(hcomm_exscan(x + 1, x, 3, HCOMM_FLOAT32, HCOMM_SUM, comm_, nullptr));
  accepted(hcomm_exscan(x, x, 4, HCOMM_FLOAT32, HCOMM_PROD, comm_, nullptr));
  EXPECT_EQ(std::vector<float>(x, x + 4), (std::vector<float>{1, 2, 3, 4}));
  accepted(hcomm_scan(x, x, 4, HCOMM_FLOAT32, HCOMM_PROD, comm_, nullptr));
  EXPECT_EQ(std::vector<float>(x, x + 4), (std::vector<float>{1, 2, 3, 4}));
  const char* algorithm = nullptr;
  if (accepted(hcomm_comm_query_algorithm(comm_, HCOMM_COLL_EXSCAN, 4, HCOMM_FLOAT32, &algorithm))) {
    EXPECT_NE(algorithm, nullptr);
  }
}

// Two ranks: rank 1 gets rank 0's input (exscan) or the two reduced (scan);
// rank 0's exscan recvbuf keeps its bytes, or is NULL.
TEST_F(ApiCollectives, ScanAndExscanOnTwoRanks) {
  on_two_ranks([](hcomm_comm_t comm, int rank) {
    const std::vector<int32_t> input = {rank + 1, -(rank + 3), 10 * rank, 7};
    std::vector<int32_t> recv(4, -1);
    if (accepted(hcomm_scan(input.data(), recv.data(), 4, HCOMM_INT32, HCOMM_SUM, comm, nullptr))) {
      EXPECT_EQ(recv, rank == 0 ? input : (std::vector<int32_t>{3, -7, 10, 14}));
    }
    recv.assign(4, -1);
    if (accepted(hcomm_exscan(input.data(), recv.data(), 4, HCOMM_INT32, HCOMM_MIN, comm, nullptr))) {
      EXPECT_EQ(recv, rank == 0 ? std::vector<int32_t>(4, -1) : (std::vector<int32_t>{1, -3, 0, 7}));
    }
    std::vector<int32_t> inout = input;
    hcomm_request_t req = nullptr;
    if (accepted(
            hcomm_iexscan(inout.data(), rank == 0 ? nullptr : inout.data(), 4, HCOMM_INT32, HCOMM_MAX, comm, &req))) {
      ASSERT_EQ(hcomm_wait(req), HCOMM_SUCCESS) << hcomm_get_last_error();
      // Rank 0 passes no recvbuf; rank 1, in place, gets rank 0's input.
      EXPECT_EQ(inout, rank == 0 ? input : (std::vector<int32_t>{1, -3, 0, 7}));
    }
  });
}

}  // namespace
