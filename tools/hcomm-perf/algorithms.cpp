#include "algorithms.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace hcomm::perf {
namespace {

// hcomm-perf names its collectives as the library does; the public API has
// no lookup by name, so the table is here.
constexpr std::pair<std::string_view, hcomm_coll_t> kColls[] = {
    {"allreduce", HCOMM_COLL_ALLREDUCE},
    {"broadcast", HCOMM_COLL_BROADCAST},
    {"reduce", HCOMM_COLL_REDUCE},
    {"allgather", HCOMM_COLL_ALLGATHER},
    {"reduce_scatter", HCOMM_COLL_REDUCE_SCATTER},
    {"alltoall", HCOMM_COLL_ALLTOALL},
    {"gather", HCOMM_COLL_GATHER},
    {"scatter", HCOMM_COLL_SCATTER},
    {"barrier", HCOMM_COLL_BARRIER},
    {"allgatherv", HCOMM_COLL_ALLGATHERV},
    {"reduce_scatter_v", HCOMM_COLL_REDUCE_SCATTER_V},
    {"alltoallv", HCOMM_COLL_ALLTOALLV},
    {"scan", HCOMM_COLL_SCAN},
    {"exscan", HCOMM_COLL_EXSCAN},
};

}  // namespace

hcomm_coll_t coll_of(std::string_view name) {
  for (const auto& [n, coll] : kColls)
    if (n == name) return coll;
  throw std::invalid_argument("no collective named '" + std::string(name) + "'");
}

std::vector<std::string> provided_algorithms() {
  std::vector<std::string> names;
  const int count = hcomm_plugin_count();
  for (int i = 0; i < count; ++i) {
    hcomm_plugin_desc_t desc{};
    check(hcomm_plugin_get(i, &desc), "hcomm_plugin_get");
    if (desc.status != HCOMM_SUCCESS || std::string_view(desc.kind) != "algorithm" || !desc.provides) continue;
    std::string_view list = desc.provides;
    while (!list.empty()) {
      const size_t comma = list.find(',');
      std::string_view name = list.substr(0, comma);
      while (name.starts_with(' ')) name.remove_prefix(1);
      if (!name.empty() && std::find(names.begin(), names.end(), name) == names.end()) names.emplace_back(name);
      list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    }
  }
  return names;
}

bool try_force(const Communicator& comm, hcomm_coll_t coll, const std::string& algorithm, std::string* why) {
  const hcomm_result_t result =
      hcomm_comm_force_algorithm(comm.get(), coll, algorithm.empty() ? nullptr : algorithm.c_str());
  if (result == HCOMM_ERR_INVALID_ARGUMENT && !algorithm.empty()) {
    *why = hcomm_get_last_error();
    return false;
  }
  check(result, "hcomm_comm_force_algorithm");
  return true;
}

void force(const Communicator& comm, hcomm_coll_t coll, const std::string& algorithm) {
  std::string why;
  if (!try_force(comm, coll, algorithm, &why)) throw CallError("hcomm_comm_force_algorithm failed: " + why);
}

std::string query(const Communicator& comm, hcomm_coll_t coll, size_t count, hcomm_dtype_t dtype) {
  const char* name = nullptr;
  check(hcomm_comm_query_algorithm(comm.get(), coll, count, dtype, &name), "hcomm_comm_query_algorithm");
  return name;
}

}  // namespace hcomm::perf
