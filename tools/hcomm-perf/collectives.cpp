#include "collectives.hpp"

#include <array>
#include <stdexcept>
#include <string>

namespace hcomm::perf {
namespace {

size_t payload_bytes(size_t count, size_t elem_size, int) { return count * elem_size; }
size_t all_blocks_bytes(size_t count, size_t elem_size, int nranks) {
  return count * elem_size * static_cast<size_t>(nranks);
}
size_t no_bytes(size_t, size_t, int) { return 0; }

double allreduce_factor(int n) { return 2.0 * (n - 1) / n; }
double blocks_factor(int n) { return static_cast<double>(n - 1) / n; }
double one(int) { return 1.0; }
double zero(int) { return 0.0; }

size_t blocks(size_t count, const DataSpec& s) { return count * static_cast<size_t>(s.nranks); }
size_t block_of(size_t count, int rank) { return count * static_cast<size_t>(rank); }

// Input and result of count elements in one buffer (allreduce, broadcast).
Layout same_buffer(const DataSpec&, size_t count, bool in_place) {
  return {.input = count, .buffer = count, .in_place = in_place, .result = count};
}
// Rank 0 receives nothing: its receive buffer holds the input when in place.
Layout exscan_layout(const DataSpec& s, size_t count, bool in_place) {
  return {.input = count, .buffer = count, .in_place = in_place, .result = s.rank == 0 ? 0 : count};
}
// Only the root receives, and only the root's call can be in place.
Layout reduce_layout(const DataSpec& s, size_t count, bool in_place) {
  if (s.rank != s.root) return {.input = count};
  return same_buffer(s, count, in_place);
}
Layout allgather_layout(const DataSpec& s, size_t count, bool in_place) {
  return {.input = count,
          .buffer = blocks(count, s),
          .in_place = in_place,
          .send_offset = block_of(count, s.rank),
          .result = blocks(count, s)};
}
// In place, the input (n blocks) is the receive buffer and recvbuf its block.
Layout reduce_scatter_layout(const DataSpec& s, size_t count, bool in_place) {
  return {.input = blocks(count, s),
          .buffer = in_place ? blocks(count, s) : count,
          .in_place = in_place,
          .recv_offset = in_place ? block_of(count, s.rank) : 0,
          .result = count};
}
Layout alltoall_layout(const DataSpec& s, size_t count, bool in_place) {
  return {.input = blocks(count, s), .buffer = blocks(count, s), .in_place = in_place, .result = blocks(count, s)};
}
// The root gathers as allgather does, and scatters from n blocks as
// reduce_scatter does; the others only send or only receive.
Layout gather_layout(const DataSpec& s, size_t count, bool in_place) {
  if (s.rank != s.root) return {.input = count};
  return allgather_layout(s, count, in_place);
}
Layout scatter_layout(const DataSpec& s, size_t count, bool in_place) {
  if (s.rank != s.root) return {.buffer = count, .result = count};
  return reduce_scatter_layout(s, count, in_place);
}
Layout no_data(const DataSpec&, size_t, bool) { return {}; }

// The v-variants run with equal counts: block r of count elements at r*count.
// Kept between calls, so that a timed call allocates nothing.
struct EqualBlocks {
  std::vector<size_t> counts;
  std::vector<size_t> displs;
};

const EqualBlocks& equal_blocks(size_t count, hcomm_comm_t comm) {
  static EqualBlocks cached;
  int nranks = 0;
  if (hcomm_comm_size(comm, &nranks) != HCOMM_SUCCESS) nranks = 0;  // the call itself then reports the bad comm
  const size_t n = static_cast<size_t>(nranks);
  if (cached.counts.size() != n || (n > 0 && cached.counts[0] != count)) {
    cached.counts.assign(n, count);
    cached.displs.resize(n);
    for (size_t r = 0; r < n; ++r) cached.displs[r] = r * count;
  }
  return cached;
}

hcomm_result_t allreduce(const CallArgs& a) {
  return hcomm_allreduce(a.send, a.recv, a.count, a.dtype, a.op, a.comm, a.stream);
}
hcomm_result_t iallreduce(const CallArgs& a, hcomm_request_t* request) {
  return hcomm_iallreduce(a.send, a.recv, a.count, a.dtype, a.op, a.comm, request);
}
hcomm_result_t broadcast(const CallArgs& a) {
  return hcomm_broadcast(a.send, a.recv, a.count, a.dtype, a.root, a.comm, a.stream);
}
hcomm_result_t ibroadcast(const CallArgs& a, hcomm_request_t* request) {
  return hcomm_ibroadcast(a.send, a.recv, a.count, a.dtype, a.root, a.comm, request);
}
hcomm_result_t reduce(const CallArgs& a) {
  return hcomm_reduce(a.send, a.recv, a.count, a.dtype, a.op, a.root, a.comm, a.stream);
}
hcomm_result_t ireduce(const CallArgs& a, hcomm_request_t* request) {
  return hcomm_ireduce(a.send, a.recv, a.count, a.dtype, a.op, a.root, a.comm, request);
}
hcomm_result_t allgather(const CallArgs& a) {
  return hcomm_allgather(a.send, a.recv, a.count, a.dtype, a.comm, a.stream);
}
hcomm_result_t iallgather(const CallArgs& a, hcomm_request_t* request) {
  return hcomm_iallgather(a.send, a.recv, a.count, a.dtype, a.comm, request);
}
hcomm_result_t allgatherv(const CallArgs& a) {
  const EqualBlocks& b = equal_blocks(a.count, a.comm);
  return hcomm_allgatherv(a.send, a.recv, b.counts.data(), b.displs.data(), a.dtype, a.comm, a.stream);
}
hcomm_result_t iallgatherv(const CallArgs& a, hcomm_request_t* request) {
  const EqualBlocks& b = equal_blocks(a.count, a.comm);
  return hcomm_iallgatherv(a.send, a.recv, b.counts.data(), b.displs.data(), a.dtype, a.comm, request);
}
hcomm_result_t reduce_scatter(const CallArgs& a) {
  return hcomm_reduce_scatter(a.send, a.recv, a.count, a.dtype, a.op, a.comm, a.stream);
}
hcomm_result_t ireduce_scatter(const CallArgs& a, hcomm_request_t* request) {
  return hcomm_ireduce_scatter(a.send, a.recv, a.count, a.dtype, a.op, a.comm, request);
}
hcomm_result_t reduce_scatter_v(const CallArgs& a) {
  const EqualBlocks& b = equal_blocks(a.count, a.comm);
  return hcomm_reduce_scatter_v(a.send, a.recv, b.counts.data(), a.dtype, a.op, a.comm, a.stream);
}
hcomm_result_t ireduce_scatter_v(const CallArgs& a, hcomm_request_t* request) {
  const EqualBlocks& b = equal_blocks(a.count, a.comm);
  return hcomm_ireduce_scatter_v(a.send, a.recv, b.counts.data(), a.dtype, a.op, a.comm, request);
}
hcomm_result_t alltoall(const CallArgs& a) { return hcomm_alltoall(a.send, a.recv, a.count, a.dtype, a.comm, a.stream); }
hcomm_result_t ialltoall(const CallArgs& a, hcomm_request_t* request) {
  return hcomm_ialltoall(a.send, a.recv, a.count, a.dtype, a.comm, request);
}
hcomm_result_t alltoallv(const CallArgs& a) {
  const EqualBlocks& b = equal_blocks(a.count, a.comm);
  return hcomm_alltoallv(a.send, b.counts.data(), b.displs.data(), a.recv, b.counts.data(), b.displs.data(), a.dtype,
                         a.comm, a.stream);
}
hcomm_result_t ialltoallv(const CallArgs& a, hcomm_request_t* request) {
  const EqualBlocks& b = equal_blocks(a.count, a.comm);
  return hcomm_ialltoallv(a.send, b.counts.data(), b.displs.data(), a.recv, b.counts.data(), b.displs.data(), a.dtype,
                          a.comm, request);
}
hcomm_result_t gather(const CallArgs& a) {
  return hcomm_gather(a.send, a.recv, a.count, a.dtype, a.root, a.comm, a.stream);
}
hcomm_result_t igather(const CallArgs& a, hcomm_request_t* request) {
  return hcomm_igather(a.send, a.recv, a.count, a.dtype, a.root, a.comm, request);
}
hcomm_result_t scatter(const CallArgs& a) {
  return hcomm_scatter(a.send, a.recv, a.count, a.dtype, a.root, a.comm, a.stream);
}
hcomm_result_t iscatter(const CallArgs& a, hcomm_request_t* request) {
  return hcomm_iscatter(a.send, a.recv, a.count, a.dtype, a.root, a.comm, request);
}
hcomm_result_t scan(const CallArgs& a) { return hcomm_scan(a.send, a.recv, a.count, a.dtype, a.op, a.comm, a.stream); }
hcomm_result_t iscan(const CallArgs& a, hcomm_request_t* request) {
  return hcomm_iscan(a.send, a.recv, a.count, a.dtype, a.op, a.comm, request);
}
hcomm_result_t exscan(const CallArgs& a) {
  return hcomm_exscan(a.send, a.recv, a.count, a.dtype, a.op, a.comm, a.stream);
}
hcomm_result_t iexscan(const CallArgs& a, hcomm_request_t* request) {
  return hcomm_iexscan(a.send, a.recv, a.count, a.dtype, a.op, a.comm, request);
}
hcomm_result_t barrier(const CallArgs& a) { return hcomm_barrier(a.comm, a.stream); }
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
               .layout = same_buffer,
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
               .layout = same_buffer,
               .call = broadcast,
               .start = ibroadcast},
    Collective{.name = "reduce",
               .call_name = "hcomm_reduce",
               .start_name = "hcomm_ireduce",
               .uses_op = true,
               .uses_root = true,
               .bytes_moved = payload_bytes,
               .bus_factor = one,
               .fill = fill_reduce,
               .layout = reduce_layout,
               .call = reduce,
               .start = ireduce},
    Collective{.name = "allgather",
               .call_name = "hcomm_allgather",
               .start_name = "hcomm_iallgather",
               .uses_op = false,
               .uses_root = false,
               .bytes_moved = all_blocks_bytes,
               .bus_factor = blocks_factor,
               .fill = fill_allgather,
               .layout = allgather_layout,
               .call = allgather,
               .start = iallgather},
    Collective{.name = "allgatherv",
               .call_name = "hcomm_allgatherv",
               .start_name = "hcomm_iallgatherv",
               .uses_op = false,
               .uses_root = false,
               .bytes_moved = all_blocks_bytes,
               .bus_factor = blocks_factor,
               .fill = fill_allgather,
               .layout = allgather_layout,
               .call = allgatherv,
               .start = iallgatherv},
    Collective{.name = "reduce_scatter",
               .call_name = "hcomm_reduce_scatter",
               .start_name = "hcomm_ireduce_scatter",
               .uses_op = true,
               .uses_root = false,
               .bytes_moved = all_blocks_bytes,
               .bus_factor = blocks_factor,
               .fill = fill_reduce_scatter,
               .layout = reduce_scatter_layout,
               .call = reduce_scatter,
               .start = ireduce_scatter},
    Collective{.name = "reduce_scatter_v",
               .call_name = "hcomm_reduce_scatter_v",
               .start_name = "hcomm_ireduce_scatter_v",
               .uses_op = true,
               .uses_root = false,
               .bytes_moved = all_blocks_bytes,
               .bus_factor = blocks_factor,
               .fill = fill_reduce_scatter,
               .layout = reduce_scatter_layout,
               .call = reduce_scatter_v,
               .start = ireduce_scatter_v},
    Collective{.name = "alltoall",
               .call_name = "hcomm_alltoall",
               .start_name = "hcomm_ialltoall",
               .uses_op = false,
               .uses_root = false,
               .bytes_moved = all_blocks_bytes,
               .bus_factor = blocks_factor,
               .fill = fill_alltoall,
               .layout = alltoall_layout,
               .call = alltoall,
               .start = ialltoall},
    Collective{.name = "alltoallv",
               .call_name = "hcomm_alltoallv",
               .start_name = "hcomm_ialltoallv",
               .uses_op = false,
               .uses_root = false,
               .bytes_moved = all_blocks_bytes,
               .bus_factor = blocks_factor,
               .fill = fill_alltoall,
               .layout = alltoall_layout,
               .call = alltoallv,
               .start = ialltoallv},
    Collective{.name = "gather",
               .call_name = "hcomm_gather",
               .start_name = "hcomm_igather",
               .uses_op = false,
               .uses_root = true,
               .bytes_moved = all_blocks_bytes,
               .bus_factor = blocks_factor,
               .fill = fill_gather,
               .layout = gather_layout,
               .call = gather,
               .start = igather},
    Collective{.name = "scatter",
               .call_name = "hcomm_scatter",
               .start_name = "hcomm_iscatter",
               .uses_op = false,
               .uses_root = true,
               .bytes_moved = all_blocks_bytes,
               .bus_factor = blocks_factor,
               .fill = fill_scatter,
               .layout = scatter_layout,
               .call = scatter,
               .start = iscatter},
    Collective{.name = "scan",
               .call_name = "hcomm_scan",
               .start_name = "hcomm_iscan",
               .uses_op = true,
               .uses_root = false,
               .bytes_moved = payload_bytes,
               .bus_factor = one,
               .fill = fill_scan,
               .layout = same_buffer,
               .call = scan,
               .start = iscan,
               .rank_order = true},
    Collective{.name = "exscan",
               .call_name = "hcomm_exscan",
               .start_name = "hcomm_iexscan",
               .uses_op = true,
               .uses_root = false,
               .bytes_moved = payload_bytes,
               .bus_factor = one,
               .fill = fill_exscan,
               .layout = exscan_layout,
               .call = exscan,
               .start = iexscan,
               .rank_order = true},
    Collective{.name = "barrier",
               .call_name = "hcomm_barrier",
               .start_name = "hcomm_ibarrier",
               .uses_op = false,
               .uses_root = false,
               .bytes_moved = no_bytes,
               .bus_factor = zero,
               .fill = nullptr,
               .layout = no_data,
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
