#include <string>

#include "groups.hpp"

namespace hcomm::test {
namespace {

// One message: its values depend on sender, receiver, tag and sequence number.
struct Message {
  int from;
  int to;
  int tag;
  int seq;
  hcomm_dtype_t dtype;
  size_t count;

  std::string describe(const char* part) const {
    return std::string(part) + " of the message " + std::to_string(from) + " -> " + std::to_string(to) + ", tag " +
           std::to_string(tag) + ", #" + std::to_string(seq) + ", " + std::to_string(count) + " " +
           hcomm_dtype_name(dtype);
  }
  auto values(int nranks) const {
    const uint64_t n = static_cast<uint64_t>(nranks);
    const uint64_t key = perf::block_key(from, to, nranks) + n * n * (static_cast<uint64_t>(tag) * 3 + seq);
    return [values = perf::BlockValues(dtype), key](size_t i) { return values.value(key, i); };
  }
};

// A message's two ends on this rank: what it sends, or where it receives.
struct End {
  Message message;
  bool sending;
  CheckedBuffer buffer;
  hcomm_request_t request = nullptr;
};

End send_end(const Message& m, int nranks) {
  End e{m, true, CheckedBuffer(m.dtype, m.count)};
  e.buffer.write(0, m.count, m.values(nranks));
  return e;
}

End recv_end(const Message& m, int nranks) {
  End e{m, false, CheckedBuffer(m.dtype, m.count)};
  e.buffer.expect(0, m.count, m.values(nranks));
  return e;
}

void start(Job& job, End& e) {
  const Message& m = e.message;
  const hcomm_result_t rc = e.sending
                                ? hcomm_isend(e.buffer.data(), m.count, m.dtype, m.to, m.tag, job.comm, &e.request)
                                : hcomm_irecv(e.buffer.data(), m.count, m.dtype, m.from, m.tag, job.comm, &e.request);
  if (rc != HCOMM_SUCCESS) job.fatal(m.describe(e.sending ? "hcomm_isend" : "hcomm_irecv"), rc);
}

void check(Job& job, const End& e) {
  const std::string problem = e.buffer.check();
  if (!problem.empty()) job.fail(e.message.describe(e.sending ? "send buffer" : "receive buffer") + ": " + problem);
}

// Starts every end in order, completes them in reverse order, checks them.
void run(Job& job, std::vector<End>& ends) {
  for (End& e : ends) start(job, e);
  for (size_t i = ends.size(); i-- > 0;)
    job.complete(ends[i].request, ends[i].message.describe(ends[i].sending ? "the send" : "the receive"));
  for (const End& e : ends) check(job, e);
}

// Every rank sends to every rank, itself included, tag 100 + sender; the
// receives and sends of each peer interleave.
void all_pairs(Job& job, hcomm_dtype_t dtype, size_t count) {
  const int n = job.ranks.size, me = job.ranks.rank;
  std::vector<End> ends;
  for (int p = 0; p < n; ++p) {
    ends.push_back(recv_end({p, me, 100 + p, 0, dtype, count}, n));
    ends.push_back(send_end({me, p, 100 + me, 0, dtype, count}, n));
  }
  run(job, ends);
}

// Two messages with one tag to the next rank arrive in the order sent.
void in_order(Job& job) {
  const int n = job.ranks.size, me = job.ranks.rank;
  const int next = (me + 1) % n, prev = (me + n - 1) % n;
  std::vector<End> ends;
  for (int seq = 0; seq < 2; ++seq) ends.push_back(recv_end({prev, me, 7, seq, HCOMM_INT32, 513}, n));
  for (int seq = 0; seq < 2; ++seq) ends.push_back(send_end({me, next, 7, seq, HCOMM_INT32, 513}, n));
  run(job, ends);
}

// Tags 0 and HCOMM_TAG_MAX, received in the opposite order of their sending.
void extreme_tags(Job& job) {
  const int n = job.ranks.size, me = job.ranks.rank;
  const int next = (me + 1) % n, prev = (me + n - 1) % n;
  std::vector<End> ends;
  ends.push_back(recv_end({prev, me, HCOMM_TAG_MAX, 0, HCOMM_UINT8, 33}, n));
  ends.push_back(recv_end({prev, me, 0, 0, HCOMM_UINT8, 33}, n));
  ends.push_back(send_end({me, next, 0, 0, HCOMM_UINT8, 33}, n));
  ends.push_back(send_end({me, next, HCOMM_TAG_MAX, 0, HCOMM_UINT8, 33}, n));
  run(job, ends);
}

// Blocking calls around the ring: even ranks send first, odd ones receive
// first, so that every send finds its receive.
void blocking_ring(Job& job, hcomm_dtype_t dtype, size_t count) {
  const int n = job.ranks.size, me = job.ranks.rank;
  if (n == 1) return;  // a blocking send to itself would wait for a receive that never comes
  const int next = (me + 1) % n, prev = (me + n - 1) % n;
  End out = send_end({me, next, 5, 0, dtype, count}, n);
  End in = recv_end({prev, me, 5, 0, dtype, count}, n);
  auto send = [&] {
    job.check(hcomm_send(out.buffer.data(), count, dtype, next, 5, job.comm, nullptr),
              out.message.describe("hcomm_send"));
  };
  auto recv = [&] {
    job.check(hcomm_recv(in.buffer.data(), count, dtype, prev, 5, job.comm, nullptr),
              in.message.describe("hcomm_recv"));
  };
  if (me % 2 == 0) {
    send();
    recv();
  } else {
    recv();
    send();
  }
  check(job, out);
  check(job, in);
}

// Arguments that must be refused, naming the argument, before anything is sent.
void bad_arguments(Job& job) {
  const int n = job.ranks.size;
  int32_t x = 0;
  auto refused = [&](const char* what, hcomm_result_t rc, const char* argument) {
    const std::string text = hcomm_get_last_error();
    if (rc != HCOMM_ERR_INVALID_ARGUMENT || text.find(argument) == std::string::npos)
      job.fail(std::string(what) + " returned " + hcomm_result_string(rc) + " (" + text +
               "), expected an invalid argument naming " + argument);
  };
  refused("hcomm_send to peer n", hcomm_send(&x, 1, HCOMM_INT32, n, 0, job.comm, nullptr), "peer");
  refused("hcomm_send with tag -1", hcomm_send(&x, 1, HCOMM_INT32, 0, -1, job.comm, nullptr), "tag");
  refused("hcomm_recv into NULL", hcomm_recv(nullptr, 1, HCOMM_INT32, 0, 0, job.comm, nullptr), "buf");
}

}  // namespace

void test_point_to_point(Job& job, const std::vector<size_t>& counts, size_t large) {
  int k = 0;  // four dtypes per count, shifted at every round so that all appear
  for (size_t count : counts)
    for (hcomm_dtype_t dtype : {HCOMM_INT8, HCOMM_FLOAT16, HCOMM_UINT32, HCOMM_FLOAT64})
      all_pairs(job, static_cast<hcomm_dtype_t>((dtype + k++) % HCOMM_NUM_DTYPES), count);
  if (large) all_pairs(job, HCOMM_FLOAT32, large);
  in_order(job);
  extreme_tags(job);
  for (size_t count : counts) blocking_ring(job, HCOMM_FLOAT64, count);
  bad_arguments(job);
  job.summary("point to point");
}

}  // namespace hcomm::test
