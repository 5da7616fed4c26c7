// An allreduce with the C++ API (hcomm.hpp: RAII, errors thrown as
// hcomm::Error), launched by hcomm-run:
//   hcomm-run -n 4 ./hcomm_example_allreduce_cxx
// Every rank averages a gradient in place and checks the mean.
#include <cmath>
#include <cstdio>
#include <hcomm/hcomm.hpp>
#include <vector>

int main() try {
  auto comm = hcomm::Communicator::from_env();  // rank, size and rendezvous from hcomm-run
  std::vector<double> grad(1000, comm.rank() + 1.0);
  comm.allreduce(std::span<double>(grad), HCOMM_AVG);  // in place: the mean over the ranks

  const double expected = (comm.size() + 1) / 2.0;
  for (double g : grad)
    if (std::abs(g - expected) > 1e-12) {
      std::fprintf(stderr, "rank %d: got %g, expected %g\n", comm.rank(), g, expected);
      return 1;
    }
  auto barrier = comm.ibarrier();  // nonblocking: test() or wait() on the request
  barrier.wait();
  if (comm.rank() == 0) std::printf("allreduce (avg) over %d ranks: every element is %g\n", comm.size(), expected);
  return 0;
} catch (const hcomm::Error& e) {
  std::fprintf(stderr, "%s (%s)\n", e.what(), hcomm_result_string(e.code()));
  return 1;
}
