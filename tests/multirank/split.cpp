// hcomm_comm_split and hcomm_comm_dup: members, ranks and sizes of the new
// communicators, collectives on them checked element by element, nesting,
// the parent still working beside and after them, and bad arguments.
#include <algorithm>
#include <string>
#include <vector>

#include "hcomm/hcomm.h"
#include "split_checks.hpp"

namespace hcomm::test {


void test_split(Job& job, const std::vector<size_t>& counts) {
  const int me = job.ranks.rank, n = job.ranks.size;
  // Two colours by parity, ranked in reverse; with 3 ranks or more the last
  // rank takes no part.
  const bool out = n >= 3 && me == n - 1;
  const int color = out ? HCOMM_SPLIT_NOCOLOR : me % 2;
  std::vector<int> members;  // parent ranks of my colour, in their new order
  for (int r = n - 1; r >= 0; --r)
    if (!(n >= 3 && r == n - 1) && r % 2 == color) members.push_back(r);
  hcomm_comm_t half = nullptr;
  job.check(hcomm_comm_split(job.comm, color, n - me, nullptr, &half), "hcomm_comm_split by parity");
  if (out) {
    if (half) job.fail("hcomm_comm_split with HCOMM_SPLIT_NOCOLOR returned a communicator");
  } else if (!half) {
    job.fail("hcomm_comm_split returned no communicator for colour " + std::to_string(color));
  } else {
    const int want_rank = static_cast<int>(std::find(members.begin(), members.end(), me) - members.begin());
    check_shape(job, half, want_rank, static_cast<int>(members.size()), "split by parity");
    for (size_t count : counts) check_allreduce(job, half, members, count, "split by parity");
    // A split of the split, one colour: the same members and order.
    hcomm_comm_t nested = nullptr;
    job.check(hcomm_comm_split(half, 7, 0, nullptr, &nested), "hcomm_comm_split of a split");
    check_shape(job, nested, want_rank, static_cast<int>(members.size()), "split of a split");
    check_allreduce(job, nested, members, 1027, "split of a split");
    job.check(hcomm_comm_destroy(nested), "hcomm_comm_destroy of the split of a split");
    check_allreduce(job, half, members, 7, "split by parity after its child went");
  }
  const std::vector<int> everyone = first_ranks(n);
  check_allreduce(job, job.comm, everyone, 1027, "the parent beside its split");
  if (half) job.check(hcomm_comm_destroy(half), "hcomm_comm_destroy of a split");
  job.summary("hcomm_comm_split: two colours in reverse key order" + std::string(n >= 3 ? " and one rank out" : "") +
              ", a nested split, collectives on each");

  hcomm_comm_t dup = nullptr;
  job.check(hcomm_comm_dup(job.comm, &dup), "hcomm_comm_dup");
  check_shape(job, dup, me, n, "dup");
  for (size_t count : counts) check_allreduce(job, dup, everyone, count, "dup");
  job.check(hcomm_comm_destroy(dup), "hcomm_comm_destroy of a dup");
  check_allreduce(job, job.comm, everyone, 7, "the parent after its dup went");
  job.summary("hcomm_comm_dup: same ranks, collectives on it, the parent after it");

  // Bad arguments: an error on every rank, nothing created, nothing hangs.
  hcomm_comm_t none = nullptr;
  const hcomm_result_t rc = hcomm_comm_split(job.comm, -5, 0, nullptr, &none);
  const std::string error = hcomm_get_last_error();
  if (rc != HCOMM_ERR_INVALID_ARGUMENT || none || error.find("color is -5") == std::string::npos)
    job.fail("hcomm_comm_split with color -5 returned " + std::string(hcomm_result_string(rc)) + ": " + error);
  if (hcomm_comm_split(job.comm, 0, 0, nullptr, nullptr) != HCOMM_ERR_INVALID_ARGUMENT)
    job.fail("hcomm_comm_split with newcomm NULL did not fail with HCOMM_ERR_INVALID_ARGUMENT");
  if (hcomm_comm_dup(nullptr, &none) != HCOMM_ERR_INVALID_ARGUMENT)
    job.fail("hcomm_comm_dup of a NULL communicator did not fail with HCOMM_ERR_INVALID_ARGUMENT");
  check_allreduce(job, job.comm, everyone, 7, "the parent after bad splits");
  job.summary("hcomm_comm_split and hcomm_comm_dup: bad arguments are errors");
}

}  // namespace hcomm::test
