// Communicators: rank, size, dup, split, split by host, made from a group,
// compare, free, attributes.
#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>

#include "mpi_compat/src/groups.hpp"
#include "mpi_compat/src/requests.hpp"

using namespace hcomm::mpi;

namespace {

// A new communicator from HComm's h (null: this rank is in none), with
// parent's error handler, as MPI has new communicators inherit it.
MPI_Comm adopt(hcomm_comm_t h, const Comm& parent) {
  if (!h) return MPI_COMM_NULL;
  Comm c;
  c.h = h;
  check(hcomm_comm_rank(h, &c.rank), "hcomm_comm_rank");
  check(hcomm_comm_size(h, &c.size), "hcomm_comm_size");
  c.world_ranks = world_ranks_of(h, c.size);
  c.errhandler = parent.errhandler;
  return add_comm(std::move(c));
}

// MPI is called by one thread at a time (MPI_THREAD_SERIALIZED at most), so
// a new communicator shares its parent's connections over every transport.
MPI_Comm split(const Comm& parent, int color, int key) {
  if (color < 0 && color != MPI_UNDEFINED)
    fail(MPI_ERR_ARG, "color is %d: a color is 0 or above, or MPI_UNDEFINED", color);
  hcomm_config_t config = HCOMM_CONFIG_INITIALIZER;
  config.split_share = HCOMM_SPLIT_SHARE_ON;
  hcomm_comm_t h = nullptr;
  check(hcomm_comm_split(parent.h, color == MPI_UNDEFINED ? HCOMM_SPLIT_NOCOLOR : color, key, &config, &h),
        "hcomm_comm_split");
  return adopt(h, parent);
}

// The index of this rank's host among the communicator's hosts, from
// HComm's topology (the same host as HComm's shared-memory transport sees).
int host_index(const Comm& c) {
  const char* json = nullptr;
  check(hcomm_comm_topology(c.h, &json), "hcomm_comm_topology");
  const auto topology = nlohmann::json::parse(json, nullptr, false);
  if (topology.is_discarded()) fail(MPI_ERR_INTERN, "hcomm_comm_topology gave JSON that does not parse");
  return topology.at("ranks").at(c.rank).at("host").get<int>();
}

// The ranks in c of a group's members; MPI_ERR_GROUP for one not in c.
std::vector<int> ranks_in(const Comm& c, const std::vector<int>& members) {
  std::vector<int> ranks;
  for (int p : members) {
    auto it = std::find(c.world_ranks.begin(), c.world_ranks.end(), p);
    if (it == c.world_ranks.end())
      fail(MPI_ERR_GROUP, "the group holds MPI_COMM_WORLD rank %d, which is not in the communicator", p);
    ranks.push_back(static_cast<int>(it - c.world_ranks.begin()));
  }
  return ranks;
}

// This rank's place in ranks (a group's ranks in a communicator), or -1.
int place_of(const Comm& c, const std::vector<int>& ranks) {
  auto it = std::find(ranks.begin(), ranks.end(), c.rank);
  return it == ranks.end() ? -1 : static_cast<int>(it - ranks.begin());
}

// The new communicator of a group's members, made by them alone; it shares
// the parent's connections as a split's does.
hcomm_comm_t create_group(const Comm& parent, const std::vector<int>& ranks, int tag) {
  hcomm_config_t config = HCOMM_CONFIG_INITIALIZER;
  config.split_share = HCOMM_SPLIT_SHARE_ON;
  hcomm_comm_t h = nullptr;
  check(hcomm_comm_create_group(parent.h, static_cast<int>(ranks.size()), ranks.data(), tag, &config, &h),
        "hcomm_comm_create_group");
  return h;
}

}  // namespace

HCOMM_MPI_API int PMPI_Comm_rank(MPI_Comm comm, int* rank) {
  return call("MPI_Comm_rank", comm, [&] {
    const Comm& c = comm_of(comm);
    check_out(rank, "rank");
    *rank = c.rank;
  });
}
HCOMM_MPI_ALIAS(Comm_rank)

HCOMM_MPI_API int PMPI_Comm_size(MPI_Comm comm, int* size) {
  return call("MPI_Comm_size", comm, [&] {
    const Comm& c = comm_of(comm);
    check_out(size, "size");
    *size = c.size;
  });
}
HCOMM_MPI_ALIAS(Comm_size)

HCOMM_MPI_API int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm* newcomm) {
  return call("MPI_Comm_dup", comm, [&] {
    const Comm& c = comm_of(comm);
    check_out(newcomm, "newcomm");
    *newcomm = split(c, 0, c.rank);
  });
}
HCOMM_MPI_ALIAS(Comm_dup)

HCOMM_MPI_API int PMPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm) {
  return call("MPI_Comm_split", comm, [&] {
    const Comm& c = comm_of(comm);
    check_out(newcomm, "newcomm");
    *newcomm = split(c, color, key);
  });
}
HCOMM_MPI_ALIAS(Comm_split)

HCOMM_MPI_API int PMPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info, MPI_Comm* newcomm) {
  return call("MPI_Comm_split_type", comm, [&] {
    const Comm& c = comm_of(comm);
    check_out(newcomm, "newcomm");
    if (split_type != MPI_COMM_TYPE_SHARED && split_type != MPI_UNDEFINED)
      fail(MPI_ERR_ARG, "split_type is %d: MPI_COMM_TYPE_SHARED or MPI_UNDEFINED", split_type);
    // Every rank takes part in the topology call, even one that leaves.
    const int host = host_index(c);
    *newcomm = split(c, split_type == MPI_UNDEFINED ? MPI_UNDEFINED : host, key);
  });
}
HCOMM_MPI_ALIAS(Comm_split_type)

// Collective over comm. Each rank may pass its own group, as long as the
// groups are disjoint: a group's colour is the rank in comm of its first member.
HCOMM_MPI_API int PMPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm) {
  return call("MPI_Comm_create", comm, [&] {
    const Comm& c = comm_of(comm);
    const std::vector<int> ranks = ranks_in(c, group_of(group));
    check_out(newcomm, "newcomm");
    const int me = place_of(c, ranks);
    *newcomm = split(c, me < 0 ? MPI_UNDEFINED : ranks[0], me);
  });
}
HCOMM_MPI_ALIAS(Comm_create)

// Collective over the group's members only.
HCOMM_MPI_API int PMPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm* newcomm) {
  return call("MPI_Comm_create_group", comm, [&] {
    const Comm& c = comm_of(comm);
    const std::vector<int> ranks = ranks_in(c, group_of(group));
    check_out(newcomm, "newcomm");
    if (tag < 0 || tag > kTagUb) fail(MPI_ERR_TAG, "tag %d is outside 0..MPI_TAG_UB (%d)", tag, kTagUb);
    if (place_of(c, ranks) < 0)
      fail(MPI_ERR_GROUP, "rank %d of the communicator is not in the group: only members call", c.rank);
    *newcomm = adopt(create_group(c, ranks, tag), c);
  });
}
HCOMM_MPI_ALIAS(Comm_create_group)

HCOMM_MPI_API int PMPI_Comm_free(MPI_Comm* comm) {
  return call("MPI_Comm_free", comm ? *comm : MPI_COMM_WORLD, [&] {
    check_out(comm, "comm");
    const Comm& c = comm_of(*comm);
    if (*comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF)
      fail(MPI_ERR_COMM, "%s is predefined and cannot be freed", c.name.c_str());
    check(hcomm_comm_destroy(c.h), "hcomm_comm_destroy");
    state().comms.erase(*comm);
    *comm = MPI_COMM_NULL;
  });
}
HCOMM_MPI_ALIAS(Comm_free)

HCOMM_MPI_API int PMPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int* result) {
  return call("MPI_Comm_compare", comm1, [&] {
    const Comm& a = comm_of(comm1);
    const Comm& b = comm_of(comm2);
    check_out(result, "result");
    if (comm1 == comm2) {
      *result = MPI_IDENT;
    } else if (a.world_ranks == b.world_ranks) {
      *result = MPI_CONGRUENT;
    } else {
      auto x = a.world_ranks, y = b.world_ranks;
      std::sort(x.begin(), x.end());
      std::sort(y.begin(), y.end());
      *result = x == y ? MPI_SIMILAR : MPI_UNEQUAL;
    }
  });
}
HCOMM_MPI_ALIAS(Comm_compare)

HCOMM_MPI_API int PMPI_Comm_set_name(MPI_Comm comm, const char* comm_name) {
  return call("MPI_Comm_set_name", comm, [&] {
    Comm& c = comm_of(comm);
    check_out(comm_name, "comm_name");
    c.name.assign(comm_name, strnlen(comm_name, MPI_MAX_OBJECT_NAME - 1));
  });
}
HCOMM_MPI_ALIAS(Comm_set_name)

HCOMM_MPI_API int PMPI_Comm_get_name(MPI_Comm comm, char* comm_name, int* resultlen) {
  return call("MPI_Comm_get_name", comm, [&] {
    const Comm& c = comm_of(comm);
    check_out(comm_name, "comm_name");
    check_out(resultlen, "resultlen");
    std::snprintf(comm_name, MPI_MAX_OBJECT_NAME, "%s", c.name.c_str());
    *resultlen = static_cast<int>(std::strlen(comm_name));
  });
}
HCOMM_MPI_ALIAS(Comm_get_name)

HCOMM_MPI_API int PMPI_Comm_get_attr(MPI_Comm comm, int comm_keyval, void* attribute_val, int* flag) {
  return call("MPI_Comm_get_attr", comm, [&] {
    comm_of(comm);
    check_out(flag, "flag");
    check_out(attribute_val, "attribute_val");
    // The predefined attributes' values, as MPI hands them out: pointers to ints.
    static int tag_ub = kTagUb, host = MPI_PROC_NULL, io = MPI_ANY_SOURCE, wtime_is_global = 0, universe_size = 0;
    universe_size = comm_of(MPI_COMM_WORLD).size;
    int* value = nullptr;
    switch (comm_keyval) {
      case MPI_TAG_UB:
        value = &tag_ub;
        break;
      case MPI_HOST:
        value = &host;
        break;
      case MPI_IO:
        value = &io;
        break;
      case MPI_WTIME_IS_GLOBAL:
        value = &wtime_is_global;
        break;
      case MPI_UNIVERSE_SIZE:
        value = &universe_size;
        break;
      case MPI_APPNUM:
      case MPI_LASTUSEDCODE:
        break;
      default:
        fail(MPI_ERR_KEYVAL, "comm_keyval 0x%x is no predefined attribute (user attributes are not implemented yet)",
             static_cast<unsigned>(comm_keyval));
    }
    *flag = value != nullptr;
    if (value) *static_cast<int**>(attribute_val) = value;
  });
}
HCOMM_MPI_ALIAS(Comm_get_attr)

HCOMM_MPI_API int PMPI_Attr_get(MPI_Comm comm, int keyval, void* attribute_val, int* flag) {
  return PMPI_Comm_get_attr(comm, keyval, attribute_val, flag);
}
HCOMM_MPI_ALIAS(Attr_get)
