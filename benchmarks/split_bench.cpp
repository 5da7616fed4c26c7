// What a split costs, on the parent's connections and on connections of its
// own, in one run: hcomm_comm_dup followed by one 8-byte allreduce on the new
// communicator and its destruction (medians of ITERS), and the 8 B and 1 MiB
// allreduce on such a child against the same call on the parent. Run under
// hcomm-run; rank 0 prints one line per measure.
//
//   hcomm-run -n 4 hcomm_split_bench [ITERS]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "hcomm/hcomm.h"

namespace {

using Clock = std::chrono::steady_clock;

void check(hcomm_result_t r, const char* what) {
  if (r == HCOMM_SUCCESS) return;
  std::fprintf(stderr, "%s: %s\n", what, hcomm_get_last_error());
  std::exit(1);
}

double since_us(Clock::time_point start) {
  return std::chrono::duration<double, std::micro>(Clock::now() - start).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

hcomm_comm_t dup(hcomm_comm_t comm, int share) {
  hcomm_config_t config = HCOMM_CONFIG_INITIALIZER;
  config.split_share = share ? HCOMM_SPLIT_SHARE_ON : HCOMM_SPLIT_SHARE_OFF;
  hcomm_comm_t out = nullptr;
  check(hcomm_comm_split(comm, 0, 0, &config, &out), "hcomm_comm_split");
  return out;
}

// The median of `iters` back-to-back allreduces of `count` floats, each after a barrier.
double allreduce_us(hcomm_comm_t comm, size_t count, int iters) {
  std::vector<float> send(count, 1.0f), recv(count);
  std::vector<double> us;
  for (int i = -3; i < iters; ++i) {
    check(hcomm_barrier(comm, nullptr), "hcomm_barrier");
    const auto start = Clock::now();
    check(hcomm_allreduce(send.data(), recv.data(), count, HCOMM_FLOAT32, HCOMM_SUM, comm, nullptr),
          "hcomm_allreduce");
    if (i >= 0) us.push_back(since_us(start));
  }
  return median(us);
}

}  // namespace

int main(int argc, char** argv) {
  const int iters = argc > 1 ? std::atoi(argv[1]) : 30;
  hcomm_comm_t world = nullptr;
  check(hcomm_comm_init_env(&world), "hcomm_comm_init_env");
  int rank = 0, size = 0;
  check(hcomm_comm_rank(world, &rank), "hcomm_comm_rank");
  check(hcomm_comm_size(world, &size), "hcomm_comm_size");
  if (rank == 0) std::printf("# %d ranks, HCOMM_TRANSPORTS=%s\n", size, std::getenv("HCOMM_TRANSPORTS") ?: "");
  // Creation, first call and destruction, shared and own interleaved.
  std::vector<double> created[2];
  float one = 1.0f, sum = 0.0f;
  for (int i = 0; i < iters; ++i)
    for (int share : {1, 0}) {
      check(hcomm_barrier(world, nullptr), "hcomm_barrier");
      const auto start = Clock::now();
      hcomm_comm_t c = dup(world, share);
      check(hcomm_allreduce(&one, &sum, 1, HCOMM_FLOAT32, HCOMM_SUM, c, nullptr), "hcomm_allreduce");
      check(hcomm_comm_destroy(c), "hcomm_comm_destroy");
      created[share].push_back(since_us(start));
    }
  if (rank == 0)
    std::printf("dup + allreduce + destroy (us): shared %.0f, own %.0f, own/shared %.1f\n", median(created[1]),
                median(created[0]), median(created[0]) / median(created[1]));
  // Calls on a child against calls on the parent.
  hcomm_comm_t shared = dup(world, 1), own = dup(world, 0);
  for (size_t count : {size_t{2}, size_t{1} << 18}) {
    const double p = allreduce_us(world, count, iters * 10), s = allreduce_us(shared, count, iters * 10),
                 o = allreduce_us(own, count, iters * 10);
    if (rank == 0)
      std::printf("allreduce %zu B (us): parent %.2f, shared child %.2f (%.2f), own child %.2f (%.2f)\n", count * 4, p,
                  s, s / p, o, o / p);
  }
  check(hcomm_comm_destroy(shared), "hcomm_comm_destroy");
  check(hcomm_comm_destroy(own), "hcomm_comm_destroy");
  check(hcomm_comm_destroy(world), "hcomm_comm_destroy");
  return 0;
}
