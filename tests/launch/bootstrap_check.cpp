// Run by a launcher (mpirun, srun) with no HCOMM_* job variables: checks the
// bootstrap that Bootstrap::from_env finds against the launcher's own
// variables, named on the command line:
//
//   hcomm_launch_bootstrap_check COUNT RANK_VAR SIZE_VAR [LOCAL_RANK_VAR LOCAL_SIZE_VAR]
//
// COUNT bootstraps live at once (each communicator made from the environment
// has its own; HCOMM_ROOT serves one at a time), and each all-gathers, twice,
// a blob of an odd length whose every byte depends on the rank, the bootstrap,
// the round and the position; every byte gathered is checked. Exits non-zero
// on the first mismatch.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "core/bootstrap/bootstrap.hpp"

namespace {

using hcomm::bootstrap::Bootstrap;

int variable(const char* name) {
  const char* text = std::getenv(name);
  if (!text) {
    std::fprintf(stderr, "FAIL: the launcher did not set %s\n", name);
    std::exit(2);
  }
  return std::atoi(text);
}

void expect(bool ok, const std::string& what) {
  if (ok) return;
  std::fprintf(stderr, "FAIL: %s\n", what.c_str());
  std::exit(1);
}

uint8_t pattern(int rank, int instance, size_t i) { return static_cast<uint8_t>(rank * 31 + instance * 7 + i); }

// `instance` tells bootstraps and rounds apart.
void check_allgather(Bootstrap& b, int instance) {
  constexpr size_t kLen = 13;
  std::vector<uint8_t> mine(kLen), all(kLen * b.size(), 0xee);
  for (size_t i = 0; i < kLen; ++i) mine[i] = pattern(b.rank(), instance, i);
  b.allgather(mine.data(), kLen, all.data());
  for (int r = 0; r < b.size(); ++r)
    for (size_t i = 0; i < kLen; ++i)
      expect(all[r * kLen + i] == pattern(r, instance, i),
             "bootstrap " + std::to_string(instance) + ": byte " + std::to_string(i) + " of rank " +
                 std::to_string(r) + " is " + std::to_string(all[r * kLen + i]) + ", expected " +
                 std::to_string(pattern(r, instance, i)));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4 && argc != 6) {
    std::fprintf(stderr, "usage: %s COUNT RANK_VAR SIZE_VAR [LOCAL_RANK_VAR LOCAL_SIZE_VAR]\n", argv[0]);
    return 2;
  }
  const int count = std::atoi(argv[1]);
  const int rank = variable(argv[2]), size = variable(argv[3]);
  try {
    std::vector<std::unique_ptr<Bootstrap>> bootstraps;
    for (int i = 0; i < count; ++i) bootstraps.push_back(Bootstrap::from_env());
    for (auto& b : bootstraps) {
      expect(b->rank() == rank && b->size() == size,
             "the bootstrap says rank " + std::to_string(b->rank()) + " of " + std::to_string(b->size()) +
                 ", the launcher rank " + std::to_string(rank) + " of " + std::to_string(size));
      if (argc == 6) {
        const hcomm::bootstrap::Locality local = b->locality();
        const int local_rank = variable(argv[4]), local_size = variable(argv[5]);
        expect(local.rank == local_rank && local.size == local_size,
               "the bootstrap says local rank " + std::to_string(local.rank) + " of " + std::to_string(local.size) +
                   ", the launcher " + std::to_string(local_rank) + " of " + std::to_string(local_size));
      }
    }
    for (int round = 0; round < 2; ++round)
      for (int i = 0; i < count; ++i) check_allgather(*bootstraps[i], round * count + i);
    for (auto& b : bootstraps) {
      b->barrier();
      b->close();
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "FAIL: rank %d: %s\n", rank, e.what());
    return 1;
  }
  std::printf("rank %d of %d: %d bootstraps checked\n", rank, size, count);
  return 0;
}
