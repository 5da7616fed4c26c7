// Runs under hcomm-run: every collective over every dtype, op, count and
// in-place form, blocking and nonblocking, each result checked element by
// element against the scalar reference. Exits non-zero on the first failing
// combination, after printing what differed.
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "hcomm/hcomm.h"
#include "tools/hcomm-perf/values.hpp"

using hcomm::perf::DataSpec;

namespace {

int g_rank = 0, g_size = 1;
int g_failures = 0;

void check_rc(hcomm_result_t rc, const std::string& what) {
  if (rc == HCOMM_SUCCESS) return;
  std::fprintf(stderr, "rank %d: %s failed: %s: %s\n", g_rank, what.c_str(), hcomm_result_string(rc),
               hcomm_get_last_error());
  std::exit(1);
}

// Reports the first wrong element of one combination.
void expect_elements(const std::string& what, hcomm_dtype_t t, const void* got, const void* expected, size_t count) {
  hcomm::perf::Mismatch m = hcomm::perf::compare_elements(got, expected, count, hcomm_dtype_size(t));
  if (m.wrong == 0) return;
  std::fprintf(stderr, "rank %d: %s: %zu of %zu elements wrong; element %zu is %.17g, expected %.17g\n", g_rank,
               what.c_str(), m.wrong, count, m.first_index, hcomm::perf::element_value(t, got, m.first_index),
               hcomm::perf::element_value(t, expected, m.first_index));
  ++g_failures;
}

// Completes a call blocking or through a request, alternating by `nonblocking`.
template <class Blocking, class Nonblocking>
void run(bool nonblocking, const std::string& what, Blocking b, Nonblocking nb) {
  if (!nonblocking) return check_rc(b(), what);
  hcomm_request_t req = nullptr;
  check_rc(nb(&req), what);
  int done = 0;
  check_rc(hcomm_test(req, &done), what + " (test)");
  if (!done) check_rc(hcomm_wait(req), what + " (wait)");
}

void test_allreduce(hcomm_comm_t comm, const std::vector<size_t>& counts) {
  int call = 0;
  for (size_t count : counts)
    for (int t = 0; t < HCOMM_NUM_DTYPES; ++t)
      for (int o = 0; o < HCOMM_NUM_OPS; ++o)
        for (int in_place = 0; in_place < 2; ++in_place) {
          auto dtype = static_cast<hcomm_dtype_t>(t);
          auto op = static_cast<hcomm_op_t>(o);
          size_t es = hcomm_dtype_size(dtype);
          std::vector<unsigned char> send(count * es + 1), recv(count * es + 1), expected(count * es);
          void* in = in_place ? recv.data() : send.data();
          hcomm::perf::fill_reduction(DataSpec{dtype, op, g_size, g_rank, 0}, in, expected.data(), count);
          if (!in_place) hcomm::perf::write_complement(recv.data(), expected.data(), count * es);
          recv[count * es] = 0xA5;
          std::string what = std::string("allreduce ") + hcomm_dtype_name(dtype) + " " + hcomm_op_name(op) +
                             " count " + std::to_string(count) + (in_place ? " in place" : "");
          bool nonblocking = ++call % 2 == 0;
          run(nonblocking, what,
              [&] { return hcomm_allreduce(in, recv.data(), count, dtype, op, comm, nullptr); },
              [&](hcomm_request_t* r) { return hcomm_iallreduce(in, recv.data(), count, dtype, op, comm, r); });
          expect_elements(what, dtype, recv.data(), expected.data(), count);
          if (recv[count * es] != 0xA5) {
            std::fprintf(stderr, "rank %d: %s wrote past the end of recvbuf\n", g_rank, what.c_str());
            ++g_failures;
          }
        }
}

void test_broadcast(hcomm_comm_t comm, const std::vector<size_t>& counts) {
  const hcomm_dtype_t dtypes[] = {HCOMM_INT8, HCOMM_FLOAT16, HCOMM_INT32, HCOMM_FLOAT64};
  int call = 0;
  for (int root = 0; root < g_size; ++root)
    for (size_t count : counts)
      for (hcomm_dtype_t dtype : dtypes)
        for (int in_place = 0; in_place < 2; ++in_place) {
          size_t es = hcomm_dtype_size(dtype);
          std::vector<unsigned char> send(count * es), recv(count * es), expected(count * es);
          void* src = in_place ? recv.data() : send.data();
          hcomm::perf::fill_broadcast(DataSpec{dtype, HCOMM_SUM, g_size, g_rank, root}, src, expected.data(), count);
          if (!in_place) hcomm::perf::write_complement(recv.data(), expected.data(), count * es);
          std::string what = std::string("broadcast ") + hcomm_dtype_name(dtype) + " count " + std::to_string(count) +
                             " root " + std::to_string(root) + (in_place ? " in place" : "");
          bool nonblocking = ++call % 2 == 0;
          run(nonblocking, what,
              [&] { return hcomm_broadcast(src, recv.data(), count, dtype, root, comm, nullptr); },
              [&](hcomm_request_t* r) { return hcomm_ibroadcast(src, recv.data(), count, dtype, root, comm, r); });
          expect_elements(what, dtype, recv.data(), expected.data(), count);
        }
}

double now_seconds() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);  // one clock for every process of the host
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// No rank may leave a barrier before the last one entered it.
void test_barrier(hcomm_comm_t comm) {
  for (int round = 0; round < 4; ++round) {
    int late = round % g_size;
    if (g_rank == late) {
      timespec nap{0, 20 * 1000 * 1000};
      nanosleep(&nap, nullptr);
    }
    double entered = now_seconds();
    run(round % 2 == 1, "barrier", [&] { return hcomm_barrier(comm, nullptr); },
        [&](hcomm_request_t* r) { return hcomm_ibarrier(comm, r); });
    double left = now_seconds(), last_entry = 0;
    check_rc(hcomm_allreduce(&entered, &last_entry, 1, HCOMM_FLOAT64, HCOMM_MAX, comm, nullptr), "allreduce");
    if (left < last_entry) {
      std::fprintf(stderr, "rank %d: left barrier round %d at %.6f, before rank %d entered at %.6f\n", g_rank, round,
                   left, late, last_entry);
      ++g_failures;
    }
  }
}

// Several nonblocking calls in flight at once complete independently.
void test_overlapping(hcomm_comm_t comm) {
  const size_t count = 4099;
  std::vector<std::vector<int32_t>> bufs(4, std::vector<int32_t>(count));
  std::vector<hcomm_request_t> reqs(bufs.size());
  for (size_t k = 0; k < bufs.size(); ++k) {
    for (size_t i = 0; i < count; ++i) bufs[k][i] = static_cast<int32_t>(g_rank + k * i);
    check_rc(hcomm_iallreduce(bufs[k].data(), bufs[k].data(), count, HCOMM_INT32, HCOMM_SUM, comm, &reqs[k]),
             "iallreduce (overlapping)");
  }
  for (size_t k = bufs.size(); k-- > 0;) check_rc(hcomm_wait(reqs[k]), "wait (overlapping)");
  for (size_t k = 0; k < bufs.size(); ++k)
    for (size_t i = 0; i < count; ++i) {
      int64_t want = static_cast<int64_t>(g_size) * (g_size - 1) / 2 + static_cast<int64_t>(g_size) * k * i;
      if (bufs[k][i] != static_cast<int32_t>(want)) {
        std::fprintf(stderr, "rank %d: overlapping iallreduce %zu element %zu is %d, expected %lld\n", g_rank, k, i,
                     bufs[k][i], static_cast<long long>(want));
        ++g_failures;
        break;
      }
    }
}

std::vector<size_t> parse_counts(const char* text) {
  std::vector<size_t> out;
  for (const char* p = text; *p;) {
    char* end = nullptr;
    out.push_back(std::strtoull(p, &end, 10));
    p = *end == ',' ? end + 1 : end;
    if (*end && *end != ',') break;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<size_t> counts = {0, 1, 7, 1027, 1048581};
  if (argc > 1) counts = parse_counts(argv[1]);
  hcomm_comm_t comm = nullptr;
  check_rc(hcomm_comm_init_env(&comm), "hcomm_comm_init_env");
  check_rc(hcomm_comm_rank(comm, &g_rank), "hcomm_comm_rank");
  check_rc(hcomm_comm_size(comm, &g_size), "hcomm_comm_size");
  test_allreduce(comm, counts);
  test_broadcast(comm, counts);
  test_barrier(comm);
  test_overlapping(comm);
  check_rc(hcomm_comm_destroy(comm), "hcomm_comm_destroy");
  if (g_failures) std::fprintf(stderr, "rank %d: %d checks failed\n", g_rank, g_failures);
  else if (g_rank == 0) std::printf("all collectives correct on %d ranks\n", g_size);
  return g_failures ? 1 : 0;
}
