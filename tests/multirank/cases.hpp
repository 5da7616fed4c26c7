// The collectives under test, one table row each: how a case's buffers are
// laid out and filled on this rank, what every element must hold afterwards
// (a serial reference each rank computes alone from the inputs of all ranks),
// and the call itself.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "checked_buffer.hpp"
#include "hcomm/hcomm.h"

namespace hcomm::test {

struct Case {
  hcomm_coll_t coll;
  std::string algorithm;  // forced on the communicator; empty: the selector's choice
  hcomm_dtype_t dtype;
  hcomm_op_t op;  // reductions only
  size_t count;   // as the API takes it; the v-variants vary it per rank around this
  int root;       // rooted collectives only
  bool in_place;
  bool nonblocking;
};

// One case's buffers on this rank and the arguments of its call.
struct Setup {
  CheckedBuffer send;
  CheckedBuffer recv;
  const void* sendbuf = nullptr;
  void* recvbuf = nullptr;
  std::vector<size_t> send_counts, send_displs, recv_counts, recv_displs;  // the v-variants
  void* stream = nullptr;  // a blocking call's stream (NULL: host-ordered)
};

struct Ranks {
  int rank;
  int size;
};

struct CollectiveTest {
  std::string_view name;
  hcomm_coll_t coll;
  bool reduces;
  bool rooted;
  void (*prepare)(const Case& c, const Ranks& ranks, Setup& setup);
  // Blocking when request is null.
  hcomm_result_t (*call)(const Case& c, Setup& setup, hcomm_comm_t comm, hcomm_request_t* request);
  bool rank_order = false;  // reduces in rank order (scan, exscan), which takes no HCOMM_AVG
};

// Every collective with data (barrier and point to point are tested apart).
std::span<const CollectiveTest> collective_tests();
const CollectiveTest* find_collective_test(std::string_view name);

// "allgatherv algorithm ring, float16, count 1027, in place, nonblocking"
std::string describe(const Case& c, const CollectiveTest& test);

}  // namespace hcomm::test
