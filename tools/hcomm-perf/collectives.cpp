#include "collectives.hpp"

#include <array>
#include <stdexcept>
#include <string>

namespace hcomm::perf {
namespace {

size_t payload_bytes(size_t count, size_t elem_size, int) { return count * elem_size; }
size_t no_bytes(size_t, size_t, int) { return 0; }

double allreduce_factor(int n) { return 2.0 * (n - 1) / n; }
double one(int) { return 1.0; }
double zero(int) { return 0.0; }

hcomm_result_t allreduce(const CallArgs& a) {
  return hcomm_allreduce(a.send, a.recv, a.count, a.dtype, a.op, a.comm, nullptr);
}
hcomm_result_t iallreduce(const CallArgs& a, hcomm_request_t* request) {
  return hcomm_iallreduce(a.send, a.recv, a.count, a.dtype, a.op, a.comm, request);
}
hcomm_result_t broadcast(const CallArgs& a) {
  return hcomm_broadcast(a.send, a.recv, a.count, a.dtype, a.root, a.comm, nullptr);
}
hcomm_result_t ibroadcast(const CallArgs& a, hcomm_request_t* request) {
  return hcomm_ibroadcast(a.send, a.recv, a.count, a.dtype, a.root, a.comm, request);
}
hcomm_result_t barrier(const CallArgs& a) { return hcomm_barrier(a.comm, nullptr); }
hcomm_result_t ibarrier(const CallArgs& a, hcomm_request_t* request) { return hcomm_ibarrier(a.comm, request); }

const std::array kCollectives = {
    Collective{.name = "allreduce",
               .call_name = "hcomm_allreduce",
               .start_name = "hcomm_iallreduce",
               .uses_op = true,
               .uses_root = false,
               .bytes_moved = payload_bytes,
               .bus_factor = allreduce_factor,
               .fill = fill_reduction,
               .call = allreduce,
               .start = iallreduce},
    Collective{.name = "broadcast",
               .call_name = "hcomm_broadcast",
               .start_name = "hcomm_ibroadcast",
               .uses_op = false,
               .uses_root = true,
               .bytes_moved = payload_bytes,
               .bus_factor = one,
               .fill = fill_broadcast,
               .call = broadcast,
               .start = ibroadcast},
    Collective{.name = "barrier",
               .call_name = "hcomm_barrier",
               .start_name = "hcomm_ibarrier",
               .uses_op = false,
               .uses_root = false,
               .bytes_moved = no_bytes,
               .bus_factor = zero,
               .fill = nullptr,
               .call = barrier,
               .start = ibarrier},
};

}  // namespace

std::vector<std::string_view> collective_names() {
  std::vector<std::string_view> names;
  for (const Collective& c : kCollectives) names.push_back(c.name);
  return names;
}

const Collective& find_collective(std::string_view name) {
  for (const Collective& c : kCollectives)
    if (c.name == name) return c;
  throw std::invalid_argument("no collective named '" + std::string(name) + "'");
}

}  // namespace hcomm::perf
