// The test groups outside the table of collectives (cases.hpp).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "test_job.hpp"

namespace hcomm::test {

// Point to point: every rank to every rank (itself included) at once,
// completed in reverse order; messages of one tag in the order sent;
// blocking calls around a ring; the extreme tags; bad arguments. `large`
// (0: none) adds one all-to-all round of that many float32 elements.
void test_point_to_point(Job& job, const std::vector<size_t>& counts, size_t large);

// Point to point in matching mode any (matching.cpp): wildcard receives in
// MPI's order, probes, matched probes, cancel, truncation, synchronous
// sends, splits inheriting the mode, exact mode's refusals; messages of
// `counts` elements, of either side of the envelope's 4 KiB, and `large`.
void test_matching(Job& job, const std::vector<size_t>& counts, size_t large);

// The C++ API (hcomm.hpp) over a few collectives and point to point, on a
// communicator of its own made from a unique id: results, requests, and
// errors as exceptions.
void test_cxx(Job& job);

// hcomm_comm_split and hcomm_comm_dup: the new communicators' ranks and
// sizes, allreduces of `counts` on them, nesting, bad arguments.
void test_split(Job& job, const std::vector<size_t>& counts);
// Communicators on their parent's connections (split_share.cpp).
void test_split_share(Job& job);
// hcomm_comm_create_group (split_share.cpp).
void test_create_group(Job& job);

// The algorithms the communicator accepts for `coll` (forced in turn); the
// choice goes back to the selector afterwards.
std::vector<std::string> algorithms_serving(Job& job, hcomm_coll_t coll, std::string_view coll_name);

// User ops (hcomm_op_create) in every reducing collective over `counts`
// (and, unless 0, a `large` count), an op destroyed while in flight, and
// bad op arguments.
void test_user_ops(Job& job, const std::vector<size_t>& counts, size_t large);

}  // namespace hcomm::test
