#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "groups.hpp"
#include "hcomm/hcomm.hpp"

namespace hcomm::test {
namespace {

// Reports the first element of `got` that is not want(i).
template <class T, class F>
void expect_elements(Job& job, const std::string& what, const std::vector<T>& got, F&& want) {
  for (size_t i = 0; i < got.size(); ++i) {
    const T expected = static_cast<T>(want(i));
    if (got[i] == expected) continue;
    job.fail("C++ " + what + ": element " + std::to_string(i) + " is " + std::to_string(got[i]) + ", expected " +
             std::to_string(expected));
    return;
  }
}

// A user op that does not commute: x op y = x, so a reduction in rank
// order gives rank 0's input.
void keep_left(const void* in, void* inout, size_t count, hcomm_dtype_t, void*) {
  const auto* x = static_cast<const int64_t*>(in);
  auto* y = static_cast<int64_t*>(inout);
  for (size_t i = 0; i < count; ++i) y[i] = x[i];
}

// `call` must throw an invalid-argument hcomm::Error whose text holds `names`.
template <class F>
void expect_refused(Job& job, const std::string& what, const char* names, F&& call) {
  try {
    call();
    job.fail("C++ " + what + " threw nothing");
  } catch (const hcomm::Error& e) {
    if (e.code() != HCOMM_ERR_INVALID_ARGUMENT || std::string(e.what()).find(names) == std::string::npos)
      job.fail("C++ " + what + ": " + hcomm_result_string(e.code()) + ", '" + e.what() +
               "' (expected an invalid argument naming " + names + ")");
  }
}

}  // namespace

void test_cxx(Job& job) {
  const int n = job.ranks.size, me = job.ranks.rank;
  hcomm_unique_id_t id{};
  if (me == 0) id = hcomm::Communicator::unique_id();
  job.check(hcomm_broadcast(&id, &id, sizeof id, HCOMM_UINT8, 0, job.comm, nullptr), "hcomm_broadcast (of the id)");
  hcomm::Communicator comm(id, n, me);
  if (comm.rank() != me || comm.size() != n)
    job.fail("C++ communicator from a unique id: rank " + std::to_string(comm.rank()) + " of " +
             std::to_string(comm.size()));
  const int64_t n64 = n, me64 = me;
  const int64_t ranks_sum = n64 * (n64 + 1) / 2;  // 1 + 2 + ... + n

  std::vector<int64_t> grad(1029), sum(grad.size());
  for (size_t i = 0; i < grad.size(); ++i) grad[i] = static_cast<int64_t>(i) * (me64 + 1);
  comm.allreduce(std::span<const int64_t>(grad), std::span<int64_t>(sum), HCOMM_SUM);
  comm.allreduce(std::span<int64_t>(grad), HCOMM_MAX);
  expect_elements(job, "allreduce sum", sum, [&](size_t i) { return static_cast<int64_t>(i) * ranks_sum; });
  expect_elements(job, "allreduce max in place", grad, [&](size_t i) { return static_cast<int64_t>(i) * n64; });

  const int root = n - 1;
  std::vector<float> data(1029, me == root ? 0.0f : -1.0f);
  for (size_t i = 0; me == root && i < data.size(); ++i) data[i] = static_cast<float>(i);
  comm.ibroadcast(data.data(), data.data(), data.size(), HCOMM_FLOAT32, root).wait();
  comm.broadcast(std::span<float>(data), root);
  expect_elements(job, "broadcast", data, [](size_t i) { return static_cast<float>(i); });

  const size_t block = 5;
  std::vector<int32_t> mine(block), all(block * static_cast<size_t>(n));
  for (size_t j = 0; j < block; ++j) mine[j] = me * 10 + static_cast<int32_t>(j);
  comm.allgather(std::span<const int32_t>(mine), std::span<int32_t>(all));
  expect_elements(job, "allgather", all, [&](size_t i) { return (i / block) * 10 + i % block; });

  std::vector<int32_t> contributions(block * static_cast<size_t>(n)), reduced(block);
  for (size_t k = 0; k < contributions.size(); ++k) contributions[k] = (me + 1) * static_cast<int32_t>(k);
  comm.reduce_scatter(std::span<const int32_t>(contributions), std::span<int32_t>(reduced), HCOMM_SUM);
  expect_elements(job, "reduce_scatter", reduced,
                  [&](size_t j) { return static_cast<int64_t>(static_cast<size_t>(me) * block + j) * ranks_sum; });

  {
    hcomm::UserOp first(keep_left, nullptr, false);
    hcomm::UserOp moved = std::move(first);
    std::vector<int64_t> values(7);
    for (size_t i = 0; i < values.size(); ++i) values[i] = me64 * 1000 + static_cast<int64_t>(i);
    comm.allreduce(std::span<int64_t>(values), moved);
    expect_elements(job, "allreduce of a user op in rank order", values, [](size_t i) { return i; });
  }

  std::vector<int32_t> outgoing(3 * static_cast<size_t>(n)), incoming(outgoing.size());
  for (size_t k = 0; k < outgoing.size(); ++k) outgoing[k] = me * 100 + static_cast<int32_t>(k / 3 * 10 + k % 3);
  comm.alltoall(std::span<const int32_t>(outgoing), std::span<int32_t>(incoming));
  expect_elements(job, "alltoall", incoming, [&](size_t k) { return k / 3 * 100 + me64 * 10 + k % 3; });

  const int next = (me + 1) % n, prev = (me + n - 1) % n;
  std::vector<int64_t> to_self(7, me64), from_self(7), to_next(300, me64 * 3), from_prev(300);
  {
    auto r1 = comm.irecv(std::span<int64_t>(from_prev), prev, 9);
    auto r2 = comm.irecv(std::span<int64_t>(from_self), me, 10);
    auto s1 = comm.isend(std::span<const int64_t>(to_self), me, 10);
    auto s2 = comm.isend(std::span<const int64_t>(to_next), next, 9);
    s2.wait();
    s1.wait();
  }  // the receives complete as their requests are destroyed
  expect_elements(job, "irecv from itself", from_self, [&](size_t) { return me64; });
  expect_elements(job, "irecv from the previous rank", from_prev, [&](size_t) { return prev * 3; });

  {
    auto barrier = comm.ibarrier();  // destroyed unwaited: the destructor completes it
  }
  comm.barrier();

  // Sub-communicators: the even ranks in reverse order, the odd ones out; a dup.
  {
    std::optional<hcomm::Communicator> evens = comm.split(me % 2 ? HCOMM_SPLIT_NOCOLOR : 0, -me);
    if (evens.has_value() != (me % 2 == 0)) job.fail("split: an odd rank got a communicator, or an even one none");
    if (evens) {
      const int nevens = (n + 1) / 2;
      if (evens->rank() != nevens - 1 - me / 2 || evens->size() != nevens)
        job.fail("split: rank " + std::to_string(evens->rank()) + " of " + std::to_string(evens->size()));
      std::vector<int64_t> one{me64}, total(1);
      evens->allreduce(std::span<const int64_t>(one), std::span<int64_t>(total), HCOMM_SUM);
      expect_elements(job, "allreduce on the even ranks", total,
                      [&](size_t) { return static_cast<int64_t>(nevens) * (nevens - 1); });
    }
    hcomm::Communicator twin = comm.dup();
    std::vector<int64_t> one{me64 + 1}, total(1);
    twin.allreduce(std::span<const int64_t>(one), std::span<int64_t>(total), HCOMM_SUM);
    expect_elements(job, "allreduce on a dup", total, [&](size_t) { return ranks_sum; });
  }

  expect_refused(job, "broadcast to root n", "root", [&] { comm.broadcast(std::span<float>(data), n); });
  expect_refused(job, "allgather into a receive span of the wrong size", "receive span", [&] {
    comm.allgather(std::span<const int32_t>(mine), std::span<int32_t>(all).first(all.size() - 1));
  });
  job.summary("C++ API");
}

}  // namespace hcomm::test
