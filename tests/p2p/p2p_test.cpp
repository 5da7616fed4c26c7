// Runs under hcomm-run: point to point between every pair of ranks and from
// each rank to itself. Many messages with several tags are in flight at
// once, receives are posted before and after their sends, blocking and
// nonblocking calls mix, sizes are 0, 1, 7, 1027 and 1M+5 elements, and
// every element is checked: a message's contents name its sender, receiver,
// tag and place in its tag's order, so a message delivered out of order is
// wrong too. Collectives run between and during the point-to-point traffic,
// with ranks that made different numbers of point-to-point calls.
//
// With --mismatch, a receive whose count differs from its send's must fail
// with an error that says so (rank 1 receives too few elements from rank 0,
// or rank 0 from itself on one rank).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <string>
#include <vector>

#include "hcomm/hcomm.h"

namespace {

int g_rank = 0, g_size = 1;
int g_failures = 0;

void check_rc(hcomm_result_t rc, const std::string& what) {
  if (rc == HCOMM_SUCCESS) return;
  std::fprintf(stderr, "rank %d: %s failed: %s: %s\n", g_rank, what.c_str(), hcomm_result_string(rc),
               hcomm_get_last_error());
  std::exit(1);
}

// One message: who sends it to whom, with which tag, as the how-many-th of
// that tag between the two, and its elements.
struct Message {
  int from, to, tag, number;
  hcomm_dtype_t dtype;
  size_t count;

  // Element i's bits (its low dtype-size bytes are used): a mix of
  // everything above, so that no two messages, and no two elements of one,
  // look alike.
  uint64_t bits(size_t i) const {
    uint64_t x = (uint64_t(from) << 48) ^ (uint64_t(to) << 40) ^ (uint64_t(tag) << 8) ^ uint64_t(number) ^
                 (uint64_t(i) * 0x9E3779B97F4A7C15ull);
    x ^= x >> 31;
    x *= 0x94D049BB133111EBull;
    return x ^ (x >> 29);
  }
  std::string name() const {
    return "message " + std::to_string(number) + " with tag " + std::to_string(tag) + " from rank " +
           std::to_string(from) + " to rank " + std::to_string(to) + " (" + std::to_string(count) + " elements of " +
           hcomm_dtype_name(dtype) + ")";
  }
};

// A message's buffer: the sender's holds its contents, the receiver's starts
// as their complement, with one guard element past the end.
struct Buffer {
  Message m;
  std::vector<uint8_t> bytes;

  Buffer(const Message& message, bool sender) : m(message), bytes((message.count + 1) * es()) {
    for (size_t i = 0; i <= m.count; ++i) set(i, sender && i < m.count ? m.bits(i) : ~m.bits(i));
  }
  size_t es() const { return hcomm_dtype_size(m.dtype); }
  void set(size_t i, uint64_t v) { std::memcpy(&bytes[i * es()], &v, es()); }  // little endian: the low bytes
  uint64_t get(size_t i) const {
    uint64_t v = 0;
    std::memcpy(&v, &bytes[i * es()], es());
    return v;
  }

  void check() const {
    const uint64_t mask = es() == 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * es())) - 1;
    for (size_t i = 0; i <= m.count; ++i) {
      const uint64_t want = (i < m.count ? m.bits(i) : ~m.bits(i)) & mask;
      if (get(i) == want) continue;
      if (i == m.count)
        std::fprintf(stderr, "rank %d: %s: written past its end\n", g_rank, m.name().c_str());
      else
        std::fprintf(stderr, "rank %d: %s: element %zu is 0x%llx, expected 0x%llx\n", g_rank, m.name().c_str(), i,
                     static_cast<unsigned long long>(get(i)), static_cast<unsigned long long>(want));
      ++g_failures;
      return;
    }
  }
};

constexpr size_t kLarge = (1u << 20) + 5;

// Per tag: its dtype and the sizes of its messages, in order.
struct TagPlan {
  int tag;
  hcomm_dtype_t dtype;
  std::vector<size_t> sizes;
};

const std::vector<TagPlan>& tag_plans() {
  static const std::vector<TagPlan> plans = {
      {0, HCOMM_INT8, {0, 1, 7, 1027, 0, 1}},
      {1, HCOMM_FLOAT16, {7, 1027, 1, 0}},
      {77, HCOMM_INT32, {kLarge, 7}},
      {HCOMM_TAG_MAX, HCOMM_FLOAT64, {1027, 1, 1027, 7}},
      // Many small messages of one tag in flight at once.
      {12345, HCOMM_UINT8, std::vector<size_t>(64, 3)},
  };
  return plans;
}

// Every rank exchanges every tag's messages with every rank, itself
// included: receives for the first half of each tag's messages are posted
// before any send, those of the second half after all sends. Requests
// complete in reverse order of posting.
void test_exchange(hcomm_comm_t comm) {
  std::deque<Buffer> sends, recvs;  // buffers stay where the requests point
  std::vector<hcomm_request_t> requests;
  auto post_receives = [&](bool first_half) {
    for (int d = 0; d < g_size; ++d) {
      const int from = (g_rank - d + g_size) % g_size;
      for (const TagPlan& p : tag_plans())
        for (size_t k = 0; k < p.sizes.size(); ++k) {
          if ((k < p.sizes.size() / 2) != first_half) continue;
          Buffer& b = recvs.emplace_back(Message{from, g_rank, p.tag, int(k), p.dtype, p.sizes[k]}, false);
          check_rc(hcomm_irecv(b.bytes.data(), b.m.count, b.m.dtype, from, p.tag, comm, &requests.emplace_back()),
                   "irecv of " + b.m.name());
        }
    }
  };
  post_receives(true);
  for (int d = 0; d < g_size; ++d) {
    const int to = (g_rank + d) % g_size;
    for (const TagPlan& p : tag_plans())
      for (size_t k = 0; k < p.sizes.size(); ++k) {
        Buffer& b = sends.emplace_back(Message{g_rank, to, p.tag, int(k), p.dtype, p.sizes[k]}, true);
        check_rc(hcomm_isend(b.bytes.data(), b.m.count, b.m.dtype, to, p.tag, comm, &requests.emplace_back()),
                 "isend of " + b.m.name());
      }
  }
  post_receives(false);
  for (size_t i = requests.size(); i-- > 0;) check_rc(hcomm_wait(requests[i]), "wait (exchange)");
  for (const Buffer& b : recvs) b.check();
  for (const Buffer& b : sends) {
    Buffer unchanged(b.m, true);
    if (unchanged.bytes != b.bytes) {
      std::fprintf(stderr, "rank %d: the send buffer of %s changed\n", g_rank, b.m.name().c_str());
      ++g_failures;
    }
  }
}

// Blocking calls around a ring: even ranks send first, odd ranks receive
// first, so that every send meets its receive. On one rank the ring is the
// rank itself: a blocking send to itself returns before its receive.
void test_blocking_ring(hcomm_comm_t comm) {
  const int right = (g_rank + 1) % g_size, left = (g_rank - 1 + g_size) % g_size;
  int number = 0;
  for (size_t count : {size_t{0}, size_t{1}, size_t{7}, size_t{1027}, kLarge}) {
    Buffer out(Message{g_rank, right, 5, number, HCOMM_INT32, count}, true);
    Buffer in(Message{left, g_rank, 5, number, HCOMM_INT32, count}, false);
    ++number;
    auto send = [&] {
      check_rc(hcomm_send(out.bytes.data(), count, HCOMM_INT32, right, 5, comm, nullptr), "send of " + out.m.name());
    };
    auto recv = [&] {
      check_rc(hcomm_recv(in.bytes.data(), count, HCOMM_INT32, left, 5, comm, nullptr), "recv of " + in.m.name());
    };
    if (g_rank % 2 == 0) {
      send();
      recv();
    } else {
      recv();
      send();
    }
    in.check();
  }
}

// Blocking sends to itself return before the matching receive is posted.
void test_blocking_self(hcomm_comm_t comm) {
  for (size_t count : {size_t{1027}, kLarge}) {
    Buffer out(Message{g_rank, g_rank, 6, 0, HCOMM_FLOAT64, count}, true);
    Buffer in(out.m, false);
    check_rc(hcomm_send(out.bytes.data(), count, HCOMM_FLOAT64, g_rank, 6, comm, nullptr), "send to self");
    check_rc(hcomm_recv(in.bytes.data(), count, HCOMM_FLOAT64, g_rank, 6, comm, nullptr), "recv from self");
    in.check();
  }
}

int64_t triangle(int n) { return int64_t(n) * (n - 1) / 2; }

// Point-to-point calls do not move the collectives' call numbers: rank 0
// makes more of them than the others, then every rank runs an allreduce; a
// receive stays posted across a collective, whose messages it must not take.
void test_with_collectives(hcomm_comm_t comm) {
  if (g_rank == 0)
    for (int i = 0; i < 3; ++i) test_blocking_self(comm);
  const int right = (g_rank + 1) % g_size, left = (g_rank - 1 + g_size) % g_size;
  Buffer out(Message{g_rank, right, 9, 0, HCOMM_INT64, 1027}, true);
  Buffer in(Message{left, g_rank, 9, 0, HCOMM_INT64, 1027}, false);
  hcomm_request_t recv = nullptr, send = nullptr;
  check_rc(hcomm_irecv(in.bytes.data(), 1027, HCOMM_INT64, left, 9, comm, &recv), "irecv around allreduce");
  std::vector<int64_t> values(1027, g_rank), sums(1027, -1);
  check_rc(hcomm_allreduce(values.data(), sums.data(), values.size(), HCOMM_INT64, HCOMM_SUM, comm, nullptr),
           "allreduce after point to point");
  for (size_t i = 0; i < sums.size(); ++i)
    if (sums[i] != triangle(g_size)) {
      std::fprintf(stderr, "rank %d: allreduce element %zu is %lld, expected %lld\n", g_rank, i,
                   static_cast<long long>(sums[i]), static_cast<long long>(triangle(g_size)));
      ++g_failures;
      break;
    }
  check_rc(hcomm_isend(out.bytes.data(), 1027, HCOMM_INT64, right, 9, comm, &send), "isend around allreduce");
  check_rc(hcomm_barrier(comm, nullptr), "barrier with point to point in flight");
  check_rc(hcomm_wait(recv), "wait (irecv around allreduce)");
  check_rc(hcomm_wait(send), "wait (isend around allreduce)");
  in.check();
}

// Every rank posts a receive from every rank, then sends to every rank: a
// rank leaves only once each peer has posted all its receives, so no message
// to a peer is still unreceived when this rank closes its endpoints (tcp
// drops a message that arrived unreceived once its sender has closed).
void leave_together(hcomm_comm_t comm) {
  std::vector<hcomm_request_t> requests(2 * g_size);
  for (int r = 0; r < g_size; ++r) check_rc(hcomm_irecv(nullptr, 0, HCOMM_INT8, r, 99, comm, &requests[r]), "irecv");
  for (int r = 0; r < g_size; ++r)
    check_rc(hcomm_isend(nullptr, 0, HCOMM_INT8, r, 99, comm, &requests[g_size + r]), "isend");
  for (hcomm_request_t req : requests) check_rc(hcomm_wait(req), "wait (leave together)");
}

bool contains(const char* text, const char* part) { return std::strstr(text, part) != nullptr; }

// The receiver of 7 elements where 8 were sent fails, naming the receive and
// the rule; on two ranks the sender then sees the receiver leave.
int test_mismatch(hcomm_comm_t comm) {
  int32_t out[8] = {1, 2, 3, 4, 5, 6, 7, 8}, in[8] = {};
  const int receiver = g_size - 1;
  if (g_rank == 0) {
    hcomm_request_t send = nullptr;
    check_rc(hcomm_isend(out, 8, HCOMM_INT32, receiver, 3, comm, &send), "isend of 8 elements");
    if (receiver != 0) {
      hcomm_result_t rc = hcomm_recv(in, 1, HCOMM_INT32, receiver, 4, comm, nullptr);
      if (rc != HCOMM_ERR_REMOTE) {
        std::fprintf(stderr, "rank 0: once rank %d left, a receive from it gave %s (%s), expected a remote failure\n",
                     receiver, hcomm_result_string(rc), hcomm_get_last_error());
        return 1;
      }
      return 0;
    }
  }
  hcomm_result_t rc = hcomm_recv(in, 7, HCOMM_INT32, 0, 3, comm, nullptr);
  const char* text = hcomm_get_last_error();
  if (rc != HCOMM_ERR_INVALID_ARGUMENT || !contains(text, "receive of 7 elements from rank 0 with tag 3") ||
      !contains(text, "a receive's count must equal the count of the send it matches")) {
    std::fprintf(stderr, "rank %d: a receive of 7 elements for a send of 8 gave %s: '%s'\n", g_rank,
                 hcomm_result_string(rc), text);
    return 1;
  }
  std::printf("rank %d: count mismatch reported: %s\n", g_rank, text);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const bool mismatch = argc > 1 && std::strcmp(argv[1], "--mismatch") == 0;
  hcomm_comm_t comm = nullptr;
  check_rc(hcomm_comm_init_env(&comm), "hcomm_comm_init_env");
  check_rc(hcomm_comm_rank(comm, &g_rank), "hcomm_comm_rank");
  check_rc(hcomm_comm_size(comm, &g_size), "hcomm_comm_size");
  if (mismatch) {
    int rc = test_mismatch(comm);
    hcomm_comm_destroy(comm);
    return rc;
  }
  for (int round = 0; round < 2; ++round) test_exchange(comm);
  test_blocking_ring(comm);
  test_blocking_self(comm);
  test_with_collectives(comm);
  leave_together(comm);
  check_rc(hcomm_comm_destroy(comm), "hcomm_comm_destroy");
  if (g_failures)
    std::fprintf(stderr, "rank %d: %d checks failed\n", g_rank, g_failures);
  else if (g_rank == 0)
    std::printf("point to point correct on %d ranks\n", g_size);
  return g_failures ? 1 : 0;
}
