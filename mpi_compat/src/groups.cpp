// Groups: made from a communicator, from other groups by rank lists,
// ranges and set operations; compared, translated, freed.
#include "mpi_compat/src/groups.hpp"

#include <algorithm>

namespace hcomm::mpi {
namespace {

std::map<MPI_Group, std::vector<int>> groups;
unsigned next_group = 0;

// A process's rank in a group, or MPI_UNDEFINED.
int rank_in(const std::vector<int>& members, int world_rank) {
  auto it = std::find(members.begin(), members.end(), world_rank);
  return it == members.end() ? MPI_UNDEFINED : static_cast<int>(it - members.begin());
}

bool contains(const std::vector<int>& members, int world_rank) { return rank_in(members, world_rank) != MPI_UNDEFINED; }

void check_rank(const std::vector<int>& members, int rank, const char* argument) {
  if (rank < 0 || rank >= static_cast<int>(members.size()))
    fail(MPI_ERR_RANK, "%s %d is not a rank of the group (ranks 0..%d)", argument, rank,
         static_cast<int>(members.size()) - 1);
}

// Which ranks of a group a list names: each a rank of it, none twice.
std::vector<bool> chosen(const std::vector<int>& members, const std::vector<int>& ranks, const char* argument) {
  std::vector<bool> taken(members.size());
  for (int r : ranks) {
    check_rank(members, r, argument);
    if (taken[r]) fail(MPI_ERR_RANK, "%s names rank %d twice", argument, r);
    taken[r] = true;
  }
  return taken;
}

std::vector<int> rank_list(const std::vector<int>& members, int n, const int ranks[]) {
  if (n < 0 || n > static_cast<int>(members.size()))
    fail(MPI_ERR_ARG, "n is %d, outside 0..%d (the group's size)", n, static_cast<int>(members.size()));
  if (n && !ranks) fail(MPI_ERR_ARG, "ranks is NULL");
  return std::vector<int>(ranks, ranks + n);
}

// The ranks of n (first, last, stride) triplets, in order. A bad range is
// MPI_ERR_ARG, as in MPICH: an end outside the group, stride 0, a stride
// that leads away from last, a rank twice.
std::vector<int> range_list(const std::vector<int>& members, int n, const int ranges[][3]) {
  if (n < 0) fail(MPI_ERR_ARG, "n is %d, below 0", n);
  if (n && !ranges) fail(MPI_ERR_ARG, "ranges is NULL");
  const int group_size = static_cast<int>(members.size());
  std::vector<int> ranks;
  std::vector<bool> taken(members.size());
  for (int i = 0; i < n; ++i) {
    const int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
    if (first < 0 || first >= group_size || last < 0 || last >= group_size)
      fail(MPI_ERR_ARG, "ranges[%d] = {%d, %d, %d} reaches outside the group (ranks 0..%d)", i, first, last, stride,
           group_size - 1);
    if (stride == 0 || (stride > 0 ? first > last : first < last))
      fail(MPI_ERR_ARG, "ranges[%d] = {%d, %d, %d}: the stride does not lead from first to last", i, first, last,
           stride);
    for (int r = first; stride > 0 ? r <= last : r >= last; r += stride) {
      if (taken[r]) fail(MPI_ERR_ARG, "ranges name rank %d twice", r);
      taken[r] = true;
      ranks.push_back(r);
    }
  }
  return ranks;
}

// The members of `members` in order, with (keep) or without (!keep) those taken.
std::vector<int> select(const std::vector<int>& members, const std::vector<bool>& taken, bool keep) {
  std::vector<int> out;
  for (size_t i = 0; i < members.size(); ++i)
    if (taken[i] == keep) out.push_back(members[i]);
  return out;
}

std::vector<int> include(const std::vector<int>& members, const std::vector<int>& ranks, const char* argument) {
  chosen(members, ranks, argument);
  std::vector<int> out;
  for (int r : ranks) out.push_back(members[r]);
  return out;
}

template <class Body>
int group_call(const char* fn, Body&& body) {
  return call(fn, MPI_COMM_WORLD, [&] {
    require_initialized(fn);
    body();
  });
}

// The members of `a` that are (in_b) or are not in `b`, in a's order.
std::vector<int> filter(const std::vector<int>& a, const std::vector<int>& b, bool in_b) {
  std::vector<int> out;
  for (int p : a)
    if (contains(b, p) == in_b) out.push_back(p);
  return out;
}

// MPI_Group_union, _intersection and _difference: *newgroup is made of
// group1's and group2's members by `combine`.
template <class Combine>
int combine_groups(const char* fn, MPI_Group group1, MPI_Group group2, MPI_Group* newgroup, Combine&& combine) {
  return group_call(fn, [&] {
    const auto& a = group_of(group1, "group1");
    const auto& b = group_of(group2, "group2");
    check_out(newgroup, "newgroup");
    *newgroup = add_group(combine(a, b));
  });
}

}  // namespace

const std::vector<int>& group_of(MPI_Group group, const char* argument) {
  static const std::vector<int> empty;
  if (group == MPI_GROUP_EMPTY) return empty;
  auto it = groups.find(group);
  if (it != groups.end()) return it->second;
  if (group == MPI_GROUP_NULL) fail(MPI_ERR_GROUP, "%s is MPI_GROUP_NULL", argument);
  fail(MPI_ERR_GROUP, "%s 0x%x is no group (never made, or freed)", argument, static_cast<unsigned>(group));
}

MPI_Group add_group(std::vector<int> members) {
  if (members.empty()) return MPI_GROUP_EMPTY;
  const MPI_Group handle = static_cast<MPI_Group>(0x88000000u + (next_group++ & 0x3ffffffu));
  groups[handle] = std::move(members);
  return handle;
}

}  // namespace hcomm::mpi

using namespace hcomm::mpi;

HCOMM_MPI_API int PMPI_Comm_group(MPI_Comm comm, MPI_Group* group) {
  return call("MPI_Comm_group", comm, [&] {
    const Comm& c = comm_of(comm);
    check_out(group, "group");
    *group = add_group(c.world_ranks);
  });
}
HCOMM_MPI_ALIAS(Comm_group)

HCOMM_MPI_API int PMPI_Group_size(MPI_Group group, int* size) {
  return group_call("MPI_Group_size", [&] {
    const auto& members = group_of(group);
    check_out(size, "size");
    *size = static_cast<int>(members.size());
  });
}
HCOMM_MPI_ALIAS(Group_size)

HCOMM_MPI_API int PMPI_Group_rank(MPI_Group group, int* rank) {
  return group_call("MPI_Group_rank", [&] {
    const auto& members = group_of(group);
    check_out(rank, "rank");
    *rank = rank_in(members, comm_of(MPI_COMM_WORLD).rank);
  });
}
HCOMM_MPI_ALIAS(Group_rank)

HCOMM_MPI_API int PMPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group* newgroup) {
  return group_call("MPI_Group_incl", [&] {
    const auto& members = group_of(group);
    check_out(newgroup, "newgroup");
    *newgroup = add_group(include(members, rank_list(members, n, ranks), "ranks"));
  });
}
HCOMM_MPI_ALIAS(Group_incl)

HCOMM_MPI_API int PMPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group* newgroup) {
  return group_call("MPI_Group_excl", [&] {
    const auto& members = group_of(group);
    check_out(newgroup, "newgroup");
    *newgroup = add_group(select(members, chosen(members, rank_list(members, n, ranks), "ranks"), false));
  });
}
HCOMM_MPI_ALIAS(Group_excl)

HCOMM_MPI_API int PMPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group* newgroup) {
  return group_call("MPI_Group_range_incl", [&] {
    const auto& members = group_of(group);
    check_out(newgroup, "newgroup");
    std::vector<int> out;
    for (int r : range_list(members, n, ranges)) out.push_back(members[r]);
    *newgroup = add_group(std::move(out));
  });
}
HCOMM_MPI_ALIAS(Group_range_incl)

HCOMM_MPI_API int PMPI_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group* newgroup) {
  return group_call("MPI_Group_range_excl", [&] {
    const auto& members = group_of(group);
    check_out(newgroup, "newgroup");
    *newgroup = add_group(select(members, chosen(members, range_list(members, n, ranges), "ranges"), false));
  });
}
HCOMM_MPI_ALIAS(Group_range_excl)

HCOMM_MPI_API int PMPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2,
                                             int ranks2[]) {
  return group_call("MPI_Group_translate_ranks", [&] {
    const auto& from = group_of(group1, "group1");
    const auto& to = group_of(group2, "group2");
    if (n < 0) fail(MPI_ERR_ARG, "n is %d, below 0", n);
    if (n && (!ranks1 || !ranks2)) fail(MPI_ERR_ARG, "ranks1 or ranks2 is NULL");
    for (int i = 0; i < n; ++i)
      if (ranks1[i] != MPI_PROC_NULL) check_rank(from, ranks1[i], "ranks1[i]");
    for (int i = 0; i < n; ++i) ranks2[i] = ranks1[i] == MPI_PROC_NULL ? MPI_PROC_NULL : rank_in(to, from[ranks1[i]]);
  });
}
HCOMM_MPI_ALIAS(Group_translate_ranks)

HCOMM_MPI_API int PMPI_Group_compare(MPI_Group group1, MPI_Group group2, int* result) {
  return group_call("MPI_Group_compare", [&] {
    const auto& a = group_of(group1, "group1");
    const auto& b = group_of(group2, "group2");
    check_out(result, "result");
    auto x = a, y = b;
    std::sort(x.begin(), x.end());
    std::sort(y.begin(), y.end());
    *result = a == b ? MPI_IDENT : x == y ? MPI_SIMILAR : MPI_UNEQUAL;
  });
}
HCOMM_MPI_ALIAS(Group_compare)

HCOMM_MPI_API int PMPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup) {
  return combine_groups("MPI_Group_union", group1, group2, newgroup, [](const auto& a, const auto& b) {
    std::vector<int> out = a;
    for (int p : filter(b, a, false)) out.push_back(p);
    return out;
  });
}
HCOMM_MPI_ALIAS(Group_union)

HCOMM_MPI_API int PMPI_Group_intersection(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup) {
  return combine_groups("MPI_Group_intersection", group1, group2, newgroup,
                        [](const auto& a, const auto& b) { return filter(a, b, true); });
}
HCOMM_MPI_ALIAS(Group_intersection)

HCOMM_MPI_API int PMPI_Group_difference(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup) {
  return combine_groups("MPI_Group_difference", group1, group2, newgroup,
                        [](const auto& a, const auto& b) { return filter(a, b, false); });
}
HCOMM_MPI_ALIAS(Group_difference)

HCOMM_MPI_API int PMPI_Group_free(MPI_Group* group) {
  return group_call("MPI_Group_free", [&] {
    check_out(group, "group");
    group_of(*group);
    groups.erase(*group);  // MPI_GROUP_EMPTY is in no table and lives on
    *group = MPI_GROUP_NULL;
  });
}
HCOMM_MPI_ALIAS(Group_free)
