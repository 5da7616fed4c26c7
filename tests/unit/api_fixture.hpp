// The C API tests' communicators (one rank, or two ranks on two threads of
// this process, over tcp on the loopback) and their checks of a failed call:
// the code, and a text that names what was wrong.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <string>
#include <thread>

#include "hcomm/hcomm.h"

class ApiFixture : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    setenv("HCOMM_TRANSPORTS", "tcp", 1);
    setenv("HCOMM_BOOTSTRAP_ADDR", "127.0.0.1", 1);
    setenv("HCOMM_TCP_IF_ADDR", "127.0.0.1", 1);
    hcomm_unique_id_t id;
    ASSERT_EQ(hcomm_get_unique_id(&id), HCOMM_SUCCESS) << hcomm_get_last_error();
    ASSERT_EQ(hcomm_comm_init_rank(&comm_, &id, 1, 0), HCOMM_SUCCESS) << hcomm_get_last_error();
  }
  static void TearDownTestSuite() {
    EXPECT_EQ(hcomm_comm_destroy(comm_), HCOMM_SUCCESS);
    comm_ = nullptr;
    unsetenv("HCOMM_TRANSPORTS");
    unsetenv("HCOMM_BOOTSTRAP_ADDR");
    unsetenv("HCOMM_TCP_IF_ADDR");
  }

  static void expect_error(hcomm_result_t rc, hcomm_result_t code, const std::string& part) {
    EXPECT_EQ(rc, code) << hcomm_get_last_error();
    EXPECT_NE(std::string(hcomm_get_last_error()).find(part), std::string::npos)
        << "'" << hcomm_get_last_error() << "' lacks '" << part << "'";
  }

  // A call whose arguments are valid: it runs, or no loaded algorithm serves
  // it (the collective's plugins may be missing from this build).
  static bool accepted(hcomm_result_t rc) {
    if (rc == HCOMM_ERR_UNSUPPORTED) {
      EXPECT_NE(std::string(hcomm_get_last_error()).find("no loaded algorithm serves"), std::string::npos)
          << hcomm_get_last_error();
      return false;
    }
    EXPECT_EQ(rc, HCOMM_SUCCESS) << hcomm_get_last_error();
    return rc == HCOMM_SUCCESS;
  }

  // Runs body(comm, rank) on both ranks of a fresh two-rank communicator
  // (made with `config`, where given), one thread per rank.
  static void on_two_ranks(const std::function<void(hcomm_comm_t, int)>& body, const hcomm_config_t* config = nullptr) {
    hcomm_unique_id_t id;
    ASSERT_EQ(hcomm_get_unique_id(&id), HCOMM_SUCCESS) << hcomm_get_last_error();
    auto rank = [&](int r) {
      hcomm_comm_t comm = nullptr;
      ASSERT_EQ(hcomm_comm_init_rank_config(&comm, &id, 2, r, config), HCOMM_SUCCESS) << hcomm_get_last_error();
      body(comm, r);
      EXPECT_EQ(hcomm_comm_destroy(comm), HCOMM_SUCCESS);
    };
    std::thread other(rank, 1);
    rank(0);
    other.join();
  }

  static inline hcomm_comm_t comm_ = nullptr;
};
