// User ops (hcomm_op_create) and opaque dtypes where no peer is needed:
// making and destroying ops, their values, hcomm_reduce_local with built-in
// and user ops (the operand order MPI gives: in on the left), the executor's
// operand order for dst aliasing either source, opaque dtypes' sizes and
// names, collectives of one rank and two ranks with a user op, and the
// errors of bad ops and dtypes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "api_fixture.hpp"
#include "core/device/reduce.hpp"
#include "core/device/user_op.hpp"
#include "hcomm/hcomm.h"
#include "hcomm/plugin/algorithm.h"

namespace {

// Strings as elements of 4 bytes: a op b appends b's letters to a's, so the
// result spells the order of its operands. 8 letters at most: the last kept.
struct Word {
  char letters[4];
};

Word word(const char* s) {
  Word w{};
  std::memcpy(w.letters, s, std::min(std::strlen(s), sizeof w.letters));
  return w;
}

std::string text(const Word& w) { return std::string(w.letters, strnlen(w.letters, sizeof w.letters)); }

int g_calls = 0;
hcomm_dtype_t g_dtype = HCOMM_UINT8;

// inout = in op inout: in's letters, then inout's.
void concatenate(const void* in, void* inout, size_t count, hcomm_dtype_t dtype, void*) {
  ++g_calls;
  g_dtype = dtype;
  const auto* a = static_cast<const Word*>(in);
  auto* b = static_cast<Word*>(inout);
  for (size_t i = 0; i < count; ++i) {
    std::string s = text(a[i]) + text(b[i]);
    if (s.size() > 4) s = s.substr(s.size() - 4);
    b[i] = word(s.c_str());
  }
}

void add_u32(const void* in, void* inout, size_t count, hcomm_dtype_t, void* user_data) {
  ++*static_cast<int*>(user_data);
  const auto* a = static_cast<const uint32_t*>(in);
  auto* b = static_cast<uint32_t*>(inout);
  for (size_t i = 0; i < count; ++i) b[i] += a[i];
}

class UserOps : public ApiFixture {};

TEST_F(UserOps, CreateGivesDistinctValuesApartFromTheBuiltInOnes) {
  hcomm_op_t a, b;
  ASSERT_EQ(hcomm_op_create(concatenate, nullptr, 0, &a), HCOMM_SUCCESS) << hcomm_get_last_error();
  ASSERT_EQ(hcomm_op_create(concatenate, nullptr, 1, &b), HCOMM_SUCCESS) << hcomm_get_last_error();
  EXPECT_NE(a, b);
  for (hcomm_op_t op : {a, b}) {
    EXPECT_GE(static_cast<int>(op), HCOMM_NUM_OPS);
    EXPECT_NE(op, HCOMM_OP_USER_COMMUTATIVE);
    EXPECT_NE(op, HCOMM_OP_USER_ORDERED);
    EXPECT_STREQ(hcomm_op_name(op), "user");
  }
  EXPECT_EQ(hcomm_op_destroy(a), HCOMM_SUCCESS);
  expect_error(hcomm_op_destroy(a), HCOMM_ERR_INVALID_ARGUMENT, "no live user op");
  EXPECT_EQ(hcomm_op_destroy(b), HCOMM_SUCCESS);
}

TEST_F(UserOps, BadArgumentsAreErrors) {
  hcomm_op_t op;
  expect_error(hcomm_op_create(nullptr, nullptr, 1, &op), HCOMM_ERR_INVALID_ARGUMENT, "fn is NULL");
  expect_error(hcomm_op_create(concatenate, nullptr, 1, nullptr), HCOMM_ERR_INVALID_ARGUMENT, "op is NULL");
  expect_error(hcomm_op_destroy(HCOMM_SUM), HCOMM_ERR_INVALID_ARGUMENT, "built in");
  expect_error(hcomm_op_destroy(static_cast<hcomm_op_t>(0x5000)), HCOMM_ERR_INVALID_ARGUMENT, "op 20480");
  uint32_t x = 1, y = 2;
  expect_error(hcomm_reduce_local(&x, &y, 1, HCOMM_UINT32, static_cast<hcomm_op_t>(77)), HCOMM_ERR_INVALID_ARGUMENT,
               "op 77 is not an hcomm_op_t");
  expect_error(hcomm_reduce_local(&x, &y, 1, HCOMM_UINT32, HCOMM_AVG), HCOMM_ERR_INVALID_ARGUMENT, "HCOMM_AVG");
  expect_error(hcomm_reduce_local(&x, &y, 1, HCOMM_DTYPE_OPAQUE(4), HCOMM_SUM), HCOMM_ERR_INVALID_ARGUMENT,
               "user op only");
  expect_error(hcomm_reduce_local(nullptr, &y, 1, HCOMM_UINT32, HCOMM_SUM), HCOMM_ERR_INVALID_ARGUMENT, "in is NULL");
  uint32_t both[3] = {1, 2, 3};
  expect_error(hcomm_reduce_local(both, both + 1, 2, HCOMM_UINT32, HCOMM_SUM), HCOMM_ERR_INVALID_ARGUMENT, "overlap");
  expect_error(hcomm_allreduce(&x, &y, 1, HCOMM_DTYPE_OPAQUE(HCOMM_OPAQUE_MAX_BYTES + 1), HCOMM_SUM, comm_, nullptr),
               HCOMM_ERR_INVALID_ARGUMENT, "dtype");
  expect_error(hcomm_allreduce(&x, &y, 1, HCOMM_DTYPE_OPAQUE(4), HCOMM_MAX, comm_, nullptr), HCOMM_ERR_INVALID_ARGUMENT,
               "user op only");
  expect_error(hcomm_reduce(&x, &y, 1, HCOMM_UINT32, static_cast<hcomm_op_t>(0x40001234), 0, comm_, nullptr),
               HCOMM_ERR_INVALID_ARGUMENT, "nor a live user op");
}

TEST_F(UserOps, OpaqueDtypesHaveTheirSize) {
  EXPECT_EQ(hcomm_dtype_size(HCOMM_DTYPE_OPAQUE(12)), 12u);
  EXPECT_EQ(hcomm_dtype_size(HCOMM_DTYPE_OPAQUE(1)), 1u);
  EXPECT_EQ(hcomm_dtype_size(HCOMM_DTYPE_OPAQUE(HCOMM_OPAQUE_MAX_BYTES)), size_t{HCOMM_OPAQUE_MAX_BYTES});
  EXPECT_EQ(hcomm_dtype_size(HCOMM_DTYPE_OPAQUE(0)), 0u);
  EXPECT_EQ(hcomm_dtype_size(HCOMM_DTYPE_OPAQUE(HCOMM_OPAQUE_MAX_BYTES + 1)), 0u);
  EXPECT_STREQ(hcomm_dtype_name(HCOMM_DTYPE_OPAQUE(7)), "opaque");
}

TEST_F(UserOps, ReduceLocalPutsInOnTheLeft) {
  hcomm_op_t op;
  ASSERT_EQ(hcomm_op_create(concatenate, nullptr, 0, &op), HCOMM_SUCCESS);
  const Word in[2] = {word("ab"), word("x")};
  Word inout[2] = {word("cd"), word("yz")};
  g_calls = 0;
  ASSERT_EQ(hcomm_reduce_local(in, inout, 2, HCOMM_DTYPE_OPAQUE(4), op), HCOMM_SUCCESS) << hcomm_get_last_error();
  EXPECT_EQ(text(inout[0]), "abcd");
  EXPECT_EQ(text(inout[1]), "xyz");
  EXPECT_EQ(g_dtype, HCOMM_DTYPE_OPAQUE(4));
  EXPECT_GE(g_calls, 1);
  // With a built-in dtype, which the function receives.
  ASSERT_EQ(hcomm_reduce_local(in, inout, 1, HCOMM_UINT32, op), HCOMM_SUCCESS);
  EXPECT_EQ(g_dtype, HCOMM_UINT32);
  EXPECT_EQ(hcomm_op_destroy(op), HCOMM_SUCCESS);
  // Built-in ops: in op inout.
  const int32_t a[3] = {1, 5, -3};
  int32_t b[3] = {4, 2, -7};
  ASSERT_EQ(hcomm_reduce_local(a, b, 3, HCOMM_INT32, HCOMM_MAX), HCOMM_SUCCESS);
  EXPECT_EQ(b[0], 4);
  EXPECT_EQ(b[1], 5);
  EXPECT_EQ(b[2], -3);
  EXPECT_EQ(hcomm_reduce_local(a, b, 0, HCOMM_INT32, HCOMM_SUM), HCOMM_SUCCESS);
}

// device::reduce with a user op: dst = a op b whichever source dst is, the
// function never seeing in and inout overlap.
TEST(UserOpReduction, OperandOrderWhateverDstAliases) {
  const hcomm::device::UserOp op{concatenate, nullptr, false};
  const hcomm::device::Reduction r{HCOMM_DTYPE_OPAQUE(4), HCOMM_OP_USER_ORDERED, 4, &op};
  Word a = word("ab"), b = word("cd"), dst{};
  hcomm::device::reduce(r, &dst, &a, &b, 1, 0);
  EXPECT_EQ(text(dst), "abcd");
  EXPECT_EQ(text(a), "ab");
  EXPECT_EQ(text(b), "cd");
  hcomm::device::reduce(r, &b, &a, &b, 1, 0);  // dst is b
  EXPECT_EQ(text(b), "abcd");
  b = word("cd");
  hcomm::device::reduce(r, &a, &a, &b, 1, 0);  // dst is a
  EXPECT_EQ(text(a), "abcd");
  EXPECT_EQ(text(b), "cd");
  a = word("ab");
  hcomm::device::reduce(r, &a, &a, &a, 1, 0);  // all three
  EXPECT_EQ(text(a), "abab");
  // Many elements, dst a: through copies of b in pieces.
  std::vector<Word> x(100000, word("p")), y(100000, word("q"));
  hcomm::device::reduce(r, x.data(), x.data(), y.data(), x.size(), 0);
  for (const Word& w : x) ASSERT_EQ(text(w), "pq");
}

TEST_F(UserOps, CollectivesOfOneRank) {
  int calls = 0;
  hcomm_op_t op;
  ASSERT_EQ(hcomm_op_create(add_u32, &calls, 1, &op), HCOMM_SUCCESS);
  uint32_t send[5] = {1, 2, 3, 4, 5}, recv[5] = {};
  ASSERT_EQ(hcomm_allreduce(send, recv, 5, HCOMM_UINT32, op, comm_, nullptr), HCOMM_SUCCESS) << hcomm_get_last_error();
  EXPECT_EQ(std::vector<uint32_t>(recv, recv + 5), std::vector<uint32_t>(send, send + 5));
  hcomm_request_t request = nullptr;
  ASSERT_EQ(hcomm_ireduce_scatter(send, recv, 5, HCOMM_DTYPE_OPAQUE(4), op, comm_, &request), HCOMM_SUCCESS);
  ASSERT_EQ(hcomm_op_destroy(op), HCOMM_SUCCESS);  // in flight: goes on with the op
  ASSERT_EQ(hcomm_wait(request), HCOMM_SUCCESS) << hcomm_get_last_error();
  EXPECT_EQ(std::vector<uint32_t>(recv, recv + 5), std::vector<uint32_t>(send, send + 5));
}

// Two ranks, one thread each: the order rank 0 op rank 1, in every reducing
// collective, under the selector's choice and with a commutative op's
// algorithm forced (which an op that does not commute falls back from).
TEST_F(UserOps, TwoRanksCombineInRankOrder) {
  on_two_ranks([](hcomm_comm_t comm, int rank) {
    hcomm_op_t op;
    ASSERT_EQ(hcomm_op_create(concatenate, nullptr, 0, &op), HCOMM_SUCCESS);
    const Word mine = word(rank == 0 ? "ab" : "cd");
    for (const char* forced : {static_cast<const char*>(nullptr), "ring"}) {
      hcomm_comm_force_algorithm(comm, HCOMM_COLL_ALLREDUCE, forced);
      Word send[3] = {mine, mine, mine}, recv[3] = {};
      ASSERT_EQ(hcomm_allreduce(send, recv, 3, HCOMM_DTYPE_OPAQUE(4), op, comm, nullptr), HCOMM_SUCCESS)
          << hcomm_get_last_error();
      for (const Word& w : recv) EXPECT_EQ(text(w), "abcd");
      ASSERT_EQ(hcomm_allreduce(send, send, 3, HCOMM_DTYPE_OPAQUE(4), op, comm, nullptr), HCOMM_SUCCESS);
      for (const Word& w : send) EXPECT_EQ(text(w), "abcd");
    }
    for (int root = 0; root < 2; ++root) {
      Word send[2] = {mine, mine}, recv[2] = {};
      ASSERT_EQ(hcomm_reduce(send, recv, 2, HCOMM_DTYPE_OPAQUE(4), op, root, comm, nullptr), HCOMM_SUCCESS)
          << hcomm_get_last_error();
      if (rank == root) {
        for (const Word& w : recv) EXPECT_EQ(text(w), "abcd") << "root " << root;
      }
    }
    Word blocks[4] = {mine, mine, mine, mine}, out[2] = {};
    ASSERT_EQ(hcomm_reduce_scatter(blocks, out, 2, HCOMM_DTYPE_OPAQUE(4), op, comm, nullptr), HCOMM_SUCCESS)
        << hcomm_get_last_error();
    for (const Word& w : out) EXPECT_EQ(text(w), "abcd");
    const size_t counts[2] = {1, 3};
    ASSERT_EQ(hcomm_reduce_scatter_v(blocks, blocks + (rank ? 1 : 0), counts, HCOMM_DTYPE_OPAQUE(4), op, comm, nullptr),
              HCOMM_SUCCESS)
        << hcomm_get_last_error();
    for (size_t i = 0; i < counts[rank]; ++i) EXPECT_EQ(text(blocks[(rank ? 1 : 0) + i]), "abcd");
    EXPECT_EQ(hcomm_op_destroy(op), HCOMM_SUCCESS);
  });
}

// Opaque elements travel whole where nothing reduces them: a send and
// receive of 12-byte records, and an allgather of them.
TEST_F(UserOps, OpaqueElementsMoveWhole) {
  on_two_ranks([](hcomm_comm_t comm, int rank) {
    struct Record {
      uint32_t a, b, c;
    };
    const hcomm_dtype_t t = HCOMM_DTYPE_OPAQUE(sizeof(Record));
    std::vector<Record> mine(5), theirs(5), all(10);
    for (uint32_t i = 0; i < 5; ++i) mine[i] = {static_cast<uint32_t>(rank), i, i * 7 + 1};
    const int peer = 1 - rank;
    hcomm_request_t request = nullptr;
    ASSERT_EQ(hcomm_irecv(theirs.data(), 5, t, peer, 3, comm, &request), HCOMM_SUCCESS) << hcomm_get_last_error();
    ASSERT_EQ(hcomm_send(mine.data(), 5, t, peer, 3, comm, nullptr), HCOMM_SUCCESS) << hcomm_get_last_error();
    ASSERT_EQ(hcomm_wait(request), HCOMM_SUCCESS) << hcomm_get_last_error();
    ASSERT_EQ(hcomm_allgather(mine.data(), all.data(), 5, t, comm, nullptr), HCOMM_SUCCESS) << hcomm_get_last_error();
    for (uint32_t i = 0; i < 5; ++i) {
      EXPECT_EQ(theirs[i].a, static_cast<uint32_t>(peer));
      EXPECT_EQ(theirs[i].c, i * 7 + 1);
      for (uint32_t r = 0; r < 2; ++r) {
        EXPECT_EQ(all[r * 5 + i].a, r);
        EXPECT_EQ(all[r * 5 + i].b, i);
      }
    }
  });
}

}  // namespace
