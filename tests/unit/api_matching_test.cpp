// Point to point in matching mode any through the C API, on one rank (its
// messages to itself) and on two ranks on two threads: argument checks,
// the config field and its inheritance, wildcards and statuses, probes,
// cancel, truncation, and the transfer of messages above the envelope's
// 4 KiB, every element checked.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "hcomm/hcomm.h"
#include "hcomm/hcomm.hpp"
#include "tests/unit/api_fixture.hpp"

namespace {

std::vector<int32_t> message(int tag, int k, size_t count) {
  std::vector<int32_t> v(count);
  for (size_t i = 0; i < count; ++i)
    v[i] = static_cast<int32_t>(i * 13 + k * 1000003u + static_cast<uint32_t>(tag) * 31u);
  return v;
}

// The first `count` elements of `got` hold message (tag, k); the rest stays -1.
void expect_message(const std::vector<int32_t>& got, int tag, int k, size_t count) {
  const std::vector<int32_t> want = message(tag, k, count);
  for (size_t i = 0; i < got.size(); ++i) {
    const int32_t w = i < count ? want[i] : -1;
    if (got[i] != w) {
      ADD_FAILURE() << "tag " << tag << " message " << k << ": element " << i << " is " << got[i] << ", expected " << w;
      return;
    }
  }
}

hcomm_config_t matching_config() {
  hcomm_config_t config = HCOMM_CONFIG_INITIALIZER;
  config.p2p_matching = HCOMM_P2P_MATCHING_ANY;
  return config;
}

class ApiMatching : public ApiFixture {
 protected:
  static void SetUpTestSuite() {
    ApiFixture::SetUpTestSuite();
    hcomm_unique_id_t id;
    ASSERT_EQ(hcomm_get_unique_id(&id), HCOMM_SUCCESS) << hcomm_get_last_error();
    const hcomm_config_t config = matching_config();
    ASSERT_EQ(hcomm_comm_init_rank_config(&matching_, &id, 1, 0, &config), HCOMM_SUCCESS) << hcomm_get_last_error();
  }
  static void TearDownTestSuite() {
    EXPECT_EQ(hcomm_comm_destroy(matching_), HCOMM_SUCCESS);
    matching_ = nullptr;
    ApiFixture::TearDownTestSuite();
  }
  static inline hcomm_comm_t matching_ = nullptr;
};

TEST_F(ApiMatching, ExactModeRefusesWhatNeedsMatching) {
  int32_t x = 0;
  int flag = 0;
  hcomm_status_t s;
  hcomm_message_t m;
  const auto e = HCOMM_ERR_INVALID_ARGUMENT;
  const std::string setting =
      "needs point to point in matching mode any, and this communicator's is exact: create it "
      "with HCOMM_P2P_MATCHING=any";
  expect_error(hcomm_recv(&x, 1, HCOMM_INT32, HCOMM_ANY_SOURCE, 0, comm_, nullptr), e,
               "hcomm_recv: peer -1 (HCOMM_ANY_SOURCE) " + setting);
  expect_error(hcomm_recv_status(&x, 1, HCOMM_INT32, 0, HCOMM_ANY_TAG, comm_, nullptr, &s), e,
               "hcomm_recv_status: tag -1 (HCOMM_ANY_TAG) " + setting);
  expect_error(hcomm_iprobe(0, 0, comm_, &flag, &s), e, "hcomm_iprobe: a probe " + setting);
  expect_error(hcomm_mprobe(0, 0, comm_, &m, &s), e, "hcomm_mprobe: a probe " + setting);
  expect_error(hcomm_ssend(&x, 1, HCOMM_INT32, 0, 0, comm_, nullptr), e, "hcomm_ssend: a synchronous send " + setting);
}

TEST_F(ApiMatching, ArgumentChecks) {
  int32_t x = 0;
  int flag = 0;
  hcomm_status_t s;
  hcomm_message_t m = nullptr;
  hcomm_request_t r;
  const auto e = HCOMM_ERR_INVALID_ARGUMENT;
  expect_error(hcomm_isend(&x, 1, HCOMM_INT32, HCOMM_ANY_SOURCE, 0, matching_, &r), e,
               "hcomm_isend: peer -1 is not a rank");
  expect_error(hcomm_send(&x, 1, HCOMM_INT32, 0, HCOMM_ANY_TAG, matching_, nullptr), e,
               "hcomm_send: tag -1 is outside 0..HCOMM_TAG_MAX");
  expect_error(hcomm_irecv(&x, 1, HCOMM_INT32, 0, -2, matching_, &r), e,
               "hcomm_irecv: tag -2 is outside 0..HCOMM_TAG_MAX (2147483647) and is not HCOMM_ANY_TAG");
  expect_error(hcomm_recv(&x, 1, HCOMM_INT32, -2, 0, matching_, nullptr), e, "hcomm_recv: peer -2 is not a rank");
  expect_error(hcomm_iprobe(0, 0, matching_, nullptr, &s), e, "hcomm_iprobe: flag is NULL");
  expect_error(hcomm_improbe(0, 0, matching_, &flag, nullptr, &s), e, "hcomm_improbe: message is NULL");
  expect_error(hcomm_iprobe(1, 0, matching_, &flag, &s), e, "hcomm_iprobe: peer 1 is not a rank");
  expect_error(hcomm_mrecv(&x, 1, HCOMM_INT32, nullptr, &s), e, "hcomm_mrecv: message is NULL");
  expect_error(hcomm_mrecv(&x, 1, HCOMM_INT32, &m, &s), e, "hcomm_mrecv: *message is NULL");
  expect_error(hcomm_cancel(nullptr), e, "hcomm_cancel: request is NULL");
  expect_error(hcomm_wait_status(nullptr, &s), e, "hcomm_wait_status: request is NULL");
  // Nothing was sent: no probe finds anything.
  ASSERT_EQ(hcomm_iprobe(HCOMM_ANY_SOURCE, HCOMM_ANY_TAG, matching_, &flag, &s), HCOMM_SUCCESS)
      << hcomm_get_last_error();
  EXPECT_EQ(flag, 0);
  EXPECT_EQ(s.source, HCOMM_ANY_SOURCE);
}

TEST_F(ApiMatching, ConfigFieldIsCheckedAndInherited) {
  hcomm_config_t config = HCOMM_CONFIG_INITIALIZER;
  EXPECT_EQ(config.p2p_matching, -1);
  config.p2p_matching = 2;
  hcomm_comm_t c = nullptr;
  expect_error(hcomm_comm_split(matching_, 0, 0, &config, &c), HCOMM_ERR_INVALID_ARGUMENT,
               "hcomm_config_t: p2p_matching is 2");
  // A config that leaves the field unset: the parent's mode.
  config.p2p_matching = -1;
  ASSERT_EQ(hcomm_comm_split(matching_, 0, 0, &config, &c), HCOMM_SUCCESS) << hcomm_get_last_error();
  int flag = 1;
  EXPECT_EQ(hcomm_iprobe(HCOMM_ANY_SOURCE, HCOMM_ANY_TAG, c, &flag, nullptr), HCOMM_SUCCESS) << hcomm_get_last_error();
  EXPECT_EQ(hcomm_comm_destroy(c), HCOMM_SUCCESS);
  // An older program's config, which ends before the field: unset.
  config.size = offsetof(hcomm_config_t, p2p_matching);
  config.p2p_matching = HCOMM_P2P_MATCHING_EXACT;
  ASSERT_EQ(hcomm_comm_split(matching_, 0, 0, &config, &c), HCOMM_SUCCESS) << hcomm_get_last_error();
  EXPECT_EQ(hcomm_iprobe(HCOMM_ANY_SOURCE, HCOMM_ANY_TAG, c, &flag, nullptr), HCOMM_SUCCESS) << hcomm_get_last_error();
  EXPECT_EQ(hcomm_comm_destroy(c), HCOMM_SUCCESS);
  config.size = sizeof config;
  ASSERT_EQ(hcomm_comm_split(matching_, 0, 0, &config, &c), HCOMM_SUCCESS) << hcomm_get_last_error();
  EXPECT_EQ(hcomm_iprobe(HCOMM_ANY_SOURCE, HCOMM_ANY_TAG, c, &flag, nullptr), HCOMM_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hcomm_comm_destroy(c), HCOMM_SUCCESS);
  // The environment wins over the field.
  setenv("HCOMM_P2P_MATCHING", "any", 1);
  ASSERT_EQ(hcomm_comm_split(comm_, 0, 0, &config, &c), HCOMM_SUCCESS) << hcomm_get_last_error();
  unsetenv("HCOMM_P2P_MATCHING");
  EXPECT_EQ(hcomm_iprobe(HCOMM_ANY_SOURCE, HCOMM_ANY_TAG, c, &flag, nullptr), HCOMM_SUCCESS) << hcomm_get_last_error();
  EXPECT_EQ(hcomm_comm_destroy(c), HCOMM_SUCCESS);
}

// Messages to itself, of either side of the envelope's 4 KiB and of several
// chunks, into receives with room to spare: wildcards, statuses, order.
TEST_F(ApiMatching, SelfMessagesWithWildcards) {
  const size_t sizes[] = {0, 1, 1024, 1025, (size_t{1} << 19) + 3};
  for (size_t count : sizes) {
    std::vector<int32_t> a = message(4, 0, count), b = message(2, 1, count);
    ASSERT_EQ(hcomm_send(a.data(), count, HCOMM_INT32, 0, 4, matching_, nullptr), HCOMM_SUCCESS)
        << hcomm_get_last_error();
    ASSERT_EQ(hcomm_send(b.data(), count, HCOMM_INT32, 0, 2, matching_, nullptr), HCOMM_SUCCESS)
        << hcomm_get_last_error();
    a.assign(count, 0);  // the messages were taken when the sends returned
    hcomm_status_t s;
    int flag = 0;
    ASSERT_EQ(hcomm_iprobe(0, 2, matching_, &flag, &s), HCOMM_SUCCESS) << hcomm_get_last_error();
    EXPECT_EQ(flag, 1);
    EXPECT_EQ(s.bytes, count * 4);
    for (int k = 0; k < 2; ++k) {
      std::vector<int32_t> in(count + 2, -1);
      ASSERT_EQ(
          hcomm_recv_status(in.data(), count + 2, HCOMM_INT32, HCOMM_ANY_SOURCE, HCOMM_ANY_TAG, matching_, nullptr, &s),
          HCOMM_SUCCESS)
          << hcomm_get_last_error();
      EXPECT_EQ(s.source, 0);
      EXPECT_EQ(s.tag, k == 0 ? 4 : 2) << "the first message sent comes first";
      EXPECT_EQ(s.bytes, count * 4);
      EXPECT_EQ(s.cancelled, 0);
      expect_message(in, k == 0 ? 4 : 2, k, count);
    }
  }
}

TEST_F(ApiMatching, TruncationFailsTheReceiveAloneAndCancelWithdrawsOne) {
  for (size_t count : {size_t{9}, size_t{3000}}) {
    std::vector<int32_t> out = message(6, 0, count), in(count / 2, -1);
    ASSERT_EQ(hcomm_send(out.data(), count, HCOMM_INT32, 0, 6, matching_, nullptr), HCOMM_SUCCESS);
    hcomm_status_t s;
    in.resize(count / 2 + 1, -1);
    expect_error(hcomm_recv_status(in.data(), count / 2, HCOMM_INT32, 0, 6, matching_, nullptr, &s),
                 HCOMM_ERR_TRUNCATED, "more than the receive's room of " + std::to_string(count / 2 * 4) + " bytes");
    EXPECT_EQ(s.bytes, count * 4);
    expect_message(in, 6, 0, count / 2);
  }
  hcomm_request_t never, taker;
  int32_t x = -1, y = -1;
  ASSERT_EQ(hcomm_irecv(&x, 1, HCOMM_INT32, HCOMM_ANY_SOURCE, 8, matching_, &never), HCOMM_SUCCESS);
  ASSERT_EQ(hcomm_irecv(&y, 1, HCOMM_INT32, 0, 8, matching_, &taker), HCOMM_SUCCESS);
  ASSERT_EQ(hcomm_cancel(never), HCOMM_SUCCESS) << hcomm_get_last_error();
  const int32_t one = 1;
  ASSERT_EQ(hcomm_send(&one, 1, HCOMM_INT32, 0, 8, matching_, nullptr), HCOMM_SUCCESS) << hcomm_get_last_error();
  hcomm_status_t s;
  ASSERT_EQ(hcomm_wait_status(never, &s), HCOMM_SUCCESS) << hcomm_get_last_error();
  EXPECT_EQ(s.cancelled, 1);
  EXPECT_EQ(x, -1);
  ASSERT_EQ(hcomm_wait_status(taker, &s), HCOMM_SUCCESS) << hcomm_get_last_error();
  EXPECT_EQ(s.cancelled, 0);
  EXPECT_EQ(y, 1);
}

TEST_F(ApiMatching, CxxWrapper) {
  setenv("HCOMM_P2P_MATCHING", "any", 1);
  hcomm::Communicator c(hcomm::Communicator::unique_id(), 1, 0);
  unsetenv("HCOMM_P2P_MATCHING");
  std::vector<int32_t> out = message(5, 0, 40), in(45, -1), never(3, -1);
  EXPECT_FALSE(c.iprobe(HCOMM_ANY_SOURCE, HCOMM_ANY_TAG));
  hcomm::Request cancelled = c.irecv(std::span<int32_t>(never), HCOMM_ANY_SOURCE, 77);
  cancelled.cancel();
  EXPECT_EQ(cancelled.wait_status().cancelled, 1);
  hcomm::Request sent = c.issend(out.data(), out.size(), HCOMM_INT32, 0, 5);
  EXPECT_FALSE(sent.test()) << "a synchronous send completes once received";
  const hcomm_status_t probed = c.probe(0, HCOMM_ANY_TAG);
  EXPECT_EQ(probed.bytes, 160u);
  const hcomm_status_t got = c.recv_status(std::span<int32_t>(in), HCOMM_ANY_SOURCE, HCOMM_ANY_TAG);
  EXPECT_EQ(got.tag, 5);
  EXPECT_EQ(got.bytes, 160u);
  sent.wait();
  expect_message(in, 5, 0, 40);
  try {
    c.recv_status(std::span<int32_t>(in), 0, -3);
    FAIL() << "tag -3 must throw";
  } catch (const hcomm::Error& e) {
    EXPECT_EQ(e.code(), HCOMM_ERR_INVALID_ARGUMENT);
  }
}

// Two ranks: a message above 4 KiB moves once its receive is posted; a
// synchronous send is not done while the receiver only probed its message;
// a matched probe hands the message to its receive.
TEST_F(ApiMatching, TwoRanks) {
  const hcomm_config_t config = matching_config();
  on_two_ranks(
      [](hcomm_comm_t comm, int rank) {
        const size_t count = 100003;
        int32_t word = 0;
        hcomm_status_t s;
        if (rank == 0) {
          std::vector<int32_t> out = message(3, 0, count);
          hcomm_request_t send = nullptr;
          ASSERT_EQ(hcomm_issend(out.data(), count, HCOMM_INT32, 1, 3, comm, &send), HCOMM_SUCCESS);
          ASSERT_EQ(hcomm_recv(&word, 1, HCOMM_INT32, 1, 99, comm, nullptr), HCOMM_SUCCESS) << hcomm_get_last_error();
          int done = 1;
          ASSERT_EQ(hcomm_test(send, &done), HCOMM_SUCCESS) << hcomm_get_last_error();
          EXPECT_EQ(done, 0) << "the synchronous send was done while the receiver only probed its message";
          ASSERT_EQ(hcomm_send(&word, 1, HCOMM_INT32, 1, 98, comm, nullptr), HCOMM_SUCCESS);
          if (!done) {
            ASSERT_EQ(hcomm_wait(send), HCOMM_SUCCESS) << hcomm_get_last_error();
          }
          return;
        }
        hcomm_message_t m = nullptr;
        ASSERT_EQ(hcomm_mprobe(HCOMM_ANY_SOURCE, HCOMM_ANY_TAG, comm, &m, &s), HCOMM_SUCCESS) << hcomm_get_last_error();
        EXPECT_EQ(s.source, 0);
        EXPECT_EQ(s.tag, 3);
        EXPECT_EQ(s.bytes, count * 4);
        ASSERT_EQ(hcomm_send(&word, 1, HCOMM_INT32, 0, 99, comm, nullptr), HCOMM_SUCCESS);
        ASSERT_EQ(hcomm_recv(&word, 1, HCOMM_INT32, 0, 98, comm, nullptr), HCOMM_SUCCESS);
        std::vector<int32_t> in(count + 5, -1);
        ASSERT_EQ(hcomm_mrecv(in.data(), in.size(), HCOMM_INT32, &m, &s), HCOMM_SUCCESS) << hcomm_get_last_error();
        EXPECT_EQ(m, nullptr);
        expect_message(in, 3, 0, count);
      },
      &config);
}

}  // namespace
