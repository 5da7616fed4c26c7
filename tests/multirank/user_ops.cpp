// User ops (hcomm_op_create) in every reducing collective, blocking and
// nonblocking, in place and not, under every algorithm that serves the
// collective (forced in turn; an op that does not commute goes to the
// algorithms that keep rank order whatever is forced):
//   - affine maps x -> a*x + b mod 2^32 composed in rank order, with a count
//     of the ranks folded in: 12-byte opaque elements (HCOMM_DTYPE_OPAQUE),
//     not commutative, so a result in another order or a cut element shows;
//   - the same elements combined by a commutative op;
//   - a commutative bitwise OR on HCOMM_UINT32, whose function must see the
//     call's dtype.
// Every element of every result is compared with a serial reference in rank
// order; guard elements and the bytes a call must not touch are checked too.
// Then an op destroyed while its calls are in flight, and bad op arguments.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "groups.hpp"
#include "hcomm/hcomm.h"

namespace hcomm::test {
namespace {

struct Affine {
  uint32_t a, b, n;  // x -> a*x + b, and how many ranks' inputs it holds
};
static_assert(sizeof(Affine) == 12);

// The op's function checks what HComm hands it: the call's dtype, and
// whole elements.
struct OpKind {
  const char* name;
  hcomm_dtype_t dtype;
  size_t elem_bytes;
  bool commutative;
  // out = x op y (x the lower ranks' operand); out may be y.
  void (*combine)(const uint8_t* x, const uint8_t* y, uint8_t* out);
  // Rank r's input at global element g.
  void (*input)(int rank, size_t g, uint8_t* out);
};

Affine load_affine(const uint8_t* p) {
  Affine v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

void compose(const uint8_t* x, const uint8_t* y, uint8_t* out) {
  const Affine f = load_affine(x), g = load_affine(y);  // f first, then g
  const Affine h = {f.a * g.a, f.b * g.a + g.b, f.n + g.n};
  std::memcpy(out, &h, sizeof h);
}

void combine_commutative(const uint8_t* x, const uint8_t* y, uint8_t* out) {
  const Affine f = load_affine(x), g = load_affine(y);
  const Affine h = {f.a * g.a, f.b + g.b, f.n + g.n};
  std::memcpy(out, &h, sizeof h);
}

uint32_t mix(uint64_t v) {
  v = (v ^ (v >> 31)) * 0x7FB5D329728EA185ull;
  v = (v ^ (v >> 27)) * 0x81DADEF4BC2DD44Dull;
  return static_cast<uint32_t>(v ^ (v >> 33));
}

void affine_input(int rank, size_t g, uint8_t* out) {
  const uint64_t key = (uint64_t{static_cast<uint32_t>(rank)} << 40) ^ g;
  const Affine v = {mix(key) | 1u, mix(key + 0x9E3779B97F4A7C15ull), 1};
  std::memcpy(out, &v, sizeof v);
}

void bitwise_or(const uint8_t* x, const uint8_t* y, uint8_t* out) {
  uint32_t a, b;
  std::memcpy(&a, x, 4);
  std::memcpy(&b, y, 4);
  a |= b;
  std::memcpy(out, &a, 4);
}

void or_input(int rank, size_t g, uint8_t* out) {
  const uint32_t v = (1u << (rank % 32)) | (mix(g) & 0x80000000u) | static_cast<uint32_t>(g % 3 == 0 && rank == 1);
  std::memcpy(out, &v, 4);
}

const OpKind kOps[] = {
    {"affine maps in rank order (not commutative)", HCOMM_DTYPE_OPAQUE(12), 12, false, compose, affine_input},
    {"affine products and sums (commutative)", HCOMM_DTYPE_OPAQUE(12), 12, true, combine_commutative, affine_input},
    {"bitwise or on uint32 (commutative)", HCOMM_UINT32, 4, true, bitwise_or, or_input},
};

// What the op's function saw that it should not have: counted per process.
int g_bad_calls = 0;
std::string g_bad_call;

void apply(const void* in, void* inout, size_t count, hcomm_dtype_t dtype, void* user_data) {
  const OpKind& k = *static_cast<const OpKind*>(user_data);
  if (dtype != k.dtype || count == 0 || !in || !inout) {
    if (g_bad_calls++ == 0)
      g_bad_call = "the op's function got dtype " + std::to_string(dtype) + " (expected " + std::to_string(k.dtype) +
                   "), count " + std::to_string(count);
    return;
  }
  const auto* x = static_cast<const uint8_t*>(in);
  auto* y = static_cast<uint8_t*>(inout);
  for (size_t i = 0; i < count; ++i) k.combine(x + i * k.elem_bytes, y + i * k.elem_bytes, y + i * k.elem_bytes);
}

// A buffer of elements with one guard element on either side; each element
// ends as expected, as it was, or as anything.
class Buffer {
 public:
  Buffer() = default;
  Buffer(size_t elem_bytes, size_t elements, uint8_t canary)
      : es_(elem_bytes), bytes_((elements + 2) * elem_bytes, canary), want_(bytes_), any_(elements + 2, 0) {}
  uint8_t* at(size_t i) { return bytes_.data() + (i + 1) * es_; }
  void input(const OpKind& k, int rank, size_t i, size_t n, size_t g) {
    for (size_t j = 0; j < n; ++j) {
      k.input(rank, g + j, at(i + j));
      std::memcpy(&want_[(i + j + 1) * es_], at(i + j), es_);
    }
  }
  // Elements [i, i + n) must end as the reduction of every rank's input at
  // global elements g.. in rank order; unless they hold input, they start as
  // its complement.
  void expect(const OpKind& k, int nranks, size_t i, size_t n, size_t g, bool holds_input = false) {
    std::vector<uint8_t> x(es_);
    for (size_t j = 0; j < n; ++j) {
      uint8_t* w = &want_[(i + j + 1) * es_];
      k.input(0, g + j, w);
      for (int r = 1; r < nranks; ++r) {
        k.input(r, g + j, x.data());
        k.combine(w, x.data(), w);
      }
      if (!holds_input)
        for (size_t b = 0; b < es_; ++b) at(i + j)[b] = static_cast<uint8_t>(~w[b]);
    }
  }
  void ignore(size_t i, size_t n) { std::fill(any_.begin() + i + 1, any_.begin() + i + 1 + n, 1); }
  // "" or what is wrong.
  std::string check() const {
    size_t wrong = 0, first = 0;
    for (size_t e = 0; e < any_.size(); ++e)
      if (!any_[e] && std::memcmp(&bytes_[e * es_], &want_[e * es_], es_) != 0 && wrong++ == 0) first = e;
    if (!wrong) return "";
    const std::string where = first == 0                 ? "the guard before the buffer"
                              : first + 1 == any_.size() ? "the guard after the buffer"
                                                         : "element " + std::to_string(first - 1);
    return std::to_string(wrong) + " elements wrong, the first " + where;
  }

 private:
  size_t es_ = 1;
  std::vector<uint8_t> bytes_, want_;
  std::vector<uint8_t> any_;
};

struct Call {
  hcomm_coll_t coll;
  const OpKind* kind;
  hcomm_op_t op;
  size_t count;
  int root;
  bool in_place;
  bool nonblocking;
  std::string algorithm;
};

const char* coll_name(hcomm_coll_t coll) {
  return coll == HCOMM_COLL_ALLREDUCE        ? "allreduce"
         : coll == HCOMM_COLL_REDUCE         ? "reduce"
         : coll == HCOMM_COLL_REDUCE_SCATTER ? "reduce_scatter"
                                             : "reduce_scatter_v";
}

std::string describe(const Call& c) {
  std::string out = std::string(coll_name(c.coll)) + " of " + c.kind->name + ", count " + std::to_string(c.count);
  if (c.coll == HCOMM_COLL_REDUCE) out += ", root " + std::to_string(c.root);
  if (c.in_place) out += ", in place";
  if (c.nonblocking) out += ", nonblocking";
  return out + ", algorithm " + (c.algorithm.empty() ? "(selector's choice)" : c.algorithm);
}

// Rank r's block of a reduce_scatter_v around `count`: some larger, some
// smaller, some empty.
size_t varied(size_t count, int r) { return count == 0 ? 0 : r % 3 == 0 ? count : r % 3 == 1 ? count / 2 : count + 1; }

struct Prepared {
  Buffer send, recv;
  const void* sendbuf = nullptr;
  void* recvbuf = nullptr;
  std::vector<size_t> counts;
};

void prepare(const Call& c, const Ranks& k, Prepared& p) {
  const OpKind& kind = *c.kind;
  const size_t es = kind.elem_bytes;
  const auto canary = [&](int which) { return static_cast<uint8_t>(0x5A + 37 * k.rank + 101 * which); };
  if (c.coll == HCOMM_COLL_ALLREDUCE || c.coll == HCOMM_COLL_REDUCE) {
    const bool result_here = c.coll == HCOMM_COLL_ALLREDUCE || k.rank == c.root;
    const bool in_place = c.in_place && result_here;
    p.recv = Buffer(es, c.count, canary(0));
    if (in_place) {
      p.recv.input(kind, k.rank, 0, c.count, 0);
      p.recv.expect(kind, k.size, 0, c.count, 0, true);
      p.sendbuf = p.recv.at(0);
    } else {
      if (result_here) p.recv.expect(kind, k.size, 0, c.count, 0);
      p.send = Buffer(es, c.count, canary(1));
      p.send.input(kind, k.rank, 0, c.count, 0);
      p.sendbuf = p.send.at(0);
    }
    p.recvbuf = p.recv.at(0);
    return;
  }
  for (int r = 0; r < k.size; ++r)
    p.counts.push_back(c.coll == HCOMM_COLL_REDUCE_SCATTER ? c.count : varied(c.count, r));
  size_t first = 0, total = 0;
  for (int r = 0; r < k.size; ++r) {
    if (r == k.rank) first = total;
    total += p.counts[static_cast<size_t>(r)];
  }
  const size_t mine = p.counts[static_cast<size_t>(k.rank)];
  if (c.in_place) {
    p.recv = Buffer(es, total, canary(0));
    p.recv.input(kind, k.rank, 0, total, 0);
    p.recv.ignore(0, total);
    p.recv.expect(kind, k.size, first, mine, first, true);
    p.sendbuf = p.recv.at(0);
    p.recvbuf = p.recv.at(first);
  } else {
    p.send = Buffer(es, total, canary(1));
    p.send.input(kind, k.rank, 0, total, 0);
    p.recv = Buffer(es, mine, canary(0));
    p.recv.expect(kind, k.size, 0, mine, first);
    p.sendbuf = p.send.at(0);
    p.recvbuf = p.recv.at(0);
  }
}

hcomm_result_t start(const Call& c, Prepared& p, hcomm_comm_t comm, hcomm_request_t* r) {
  const hcomm_dtype_t t = c.kind->dtype;
  switch (c.coll) {
    case HCOMM_COLL_ALLREDUCE:
      return r ? hcomm_iallreduce(p.sendbuf, p.recvbuf, c.count, t, c.op, comm, r)
               : hcomm_allreduce(p.sendbuf, p.recvbuf, c.count, t, c.op, comm, nullptr);
    case HCOMM_COLL_REDUCE:
      return r ? hcomm_ireduce(p.sendbuf, p.recvbuf, c.count, t, c.op, c.root, comm, r)
               : hcomm_reduce(p.sendbuf, p.recvbuf, c.count, t, c.op, c.root, comm, nullptr);
    case HCOMM_COLL_REDUCE_SCATTER:
      return r ? hcomm_ireduce_scatter(p.sendbuf, p.recvbuf, c.count, t, c.op, comm, r)
               : hcomm_reduce_scatter(p.sendbuf, p.recvbuf, c.count, t, c.op, comm, nullptr);
    default:
      return r ? hcomm_ireduce_scatter_v(p.sendbuf, p.recvbuf, p.counts.data(), t, c.op, comm, r)
               : hcomm_reduce_scatter_v(p.sendbuf, p.recvbuf, p.counts.data(), t, c.op, comm, nullptr);
  }
}

void verify(Job& job, const Call& c, const Prepared& p) {
  if (const std::string e = p.recv.check(); !e.empty()) job.fail(describe(c) + ": receive buffer: " + e);
  if (const std::string e = p.send.check(); !e.empty()) job.fail(describe(c) + ": send buffer: " + e);
}

void run(Job& job, const Call& c) {
  Prepared p;
  prepare(c, job.ranks, p);
  if (c.nonblocking) {
    hcomm_request_t request = nullptr;
    job.check(start(c, p, job.comm, &request), describe(c));
    job.complete(request, describe(c));
  } else {
    job.check(start(c, p, job.comm, nullptr), describe(c));
  }
  verify(job, c, p);
}

constexpr hcomm_coll_t kColls[] = {HCOMM_COLL_ALLREDUCE, HCOMM_COLL_REDUCE, HCOMM_COLL_REDUCE_SCATTER,
                                   HCOMM_COLL_REDUCE_SCATTER_V};

void test_collectives(Job& job, const std::vector<size_t>& counts, size_t large, const hcomm_op_t (&ops)[3]) {
  const int n = job.ranks.size;
  for (hcomm_coll_t coll : kColls) {
    std::vector<std::string> algorithms = algorithms_serving(job, coll, coll_name(coll));
    algorithms.insert(algorithms.begin(), "");
    size_t cases = 0;
    int k = 0;
    for (const std::string& algorithm : algorithms) {
      job.check(hcomm_comm_force_algorithm(job.comm, coll, algorithm.empty() ? nullptr : algorithm.c_str()),
                "hcomm_comm_force_algorithm");
      for (size_t o = 0; o < std::size(kOps); ++o)
        for (size_t count : counts)
          for (bool in_place : {false, true}) {
            run(job, Call{.coll = coll,
                          .kind = &kOps[o],
                          .op = ops[o],
                          .count = count,
                          .root = k % n,
                          .in_place = in_place,
                          .nonblocking = (k / n) % 2 == 1,
                          .algorithm = algorithm});
            ++k;
            ++cases;
          }
    }
    // Every root of a reduce, for the op that does not commute.
    if (coll == HCOMM_COLL_REDUCE)
      for (int root = 0; root < n; ++root, ++cases)
        run(job,
            Call{.coll = coll, .kind = &kOps[0], .op = ops[0], .count = 7, .root = root, .in_place = root % 2 == 0});
    if (large && coll != HCOMM_COLL_REDUCE)
      for (size_t o = 0; o < 2; ++o, ++cases)
        run(job, Call{.coll = coll, .kind = &kOps[o], .op = ops[o], .count = large, .root = 0, .in_place = o == 1});
    job.check(hcomm_comm_force_algorithm(job.comm, coll, nullptr), "hcomm_comm_force_algorithm(NULL)");
    job.summary(std::string(coll_name(coll)) + " with user ops, under " + std::to_string(algorithms.size() - 1) +
                " forced algorithm(s) and the "
                "selector's choice: " +
                std::to_string(cases) + " cases");
  }
}

// Calls in flight whose op is destroyed before they complete: they go on
// with it.
void test_destroyed_in_flight(Job& job) {
  const OpKind& kind = kOps[0];
  std::vector<Prepared> prepared(3);
  std::vector<hcomm_request_t> requests(3);
  std::vector<Call> calls;
  hcomm_op_t op;
  job.check(hcomm_op_create(apply, const_cast<OpKind*>(&kind), 0, &op), "hcomm_op_create");
  for (size_t i = 0; i < prepared.size(); ++i) {
    calls.push_back(Call{.coll = i == 1 ? HCOMM_COLL_REDUCE_SCATTER : HCOMM_COLL_ALLREDUCE,
                         .kind = &kind,
                         .op = op,
                         .count = 1027 + i,
                         .root = 0,
                         .in_place = i == 2,
                         .nonblocking = true});
    prepare(calls[i], job.ranks, prepared[i]);
    job.check(start(calls[i], prepared[i], job.comm, &requests[i]), describe(calls[i]));
  }
  job.check(hcomm_op_destroy(op), "hcomm_op_destroy while its calls are in flight");
  for (size_t i = prepared.size(); i-- > 0;) job.complete(requests[i], describe(calls[i]) + " (its op destroyed)");
  for (size_t i = 0; i < prepared.size(); ++i) verify(job, calls[i], prepared[i]);
  job.summary("user op destroyed while three calls that use it were in flight");
}

// Bad op arguments: an error on every rank before anything is sent, and the
// communicator goes on.
void test_bad_ops(Job& job) {
  uint32_t one = 1, out = 0;
  auto expect = [&](hcomm_result_t rc, hcomm_result_t want, const std::string& what, const char* words) {
    const std::string error = hcomm_get_last_error();
    if (rc != want || error.find(words) == std::string::npos)
      job.fail(what + ": expected " + hcomm_result_string(want) + " naming '" + words + "', got " +
               hcomm_result_string(rc) + ": " + error);
  };
  expect(hcomm_allreduce(&one, &out, 1, HCOMM_UINT32, static_cast<hcomm_op_t>(0x12345), job.comm, nullptr),
         HCOMM_ERR_INVALID_ARGUMENT, "allreduce with a made-up op", "op 74565");
  hcomm_op_t op;
  job.check(hcomm_op_create(apply, const_cast<OpKind*>(&kOps[2]), 1, &op), "hcomm_op_create");
  job.check(hcomm_op_destroy(op), "hcomm_op_destroy");
  expect(hcomm_reduce(&one, &out, 1, HCOMM_UINT32, op, 0, job.comm, nullptr), HCOMM_ERR_INVALID_ARGUMENT,
         "reduce with a destroyed op", "nor a live user op");
  expect(hcomm_op_destroy(op), HCOMM_ERR_INVALID_ARGUMENT, "hcomm_op_destroy twice", "no live user op");
  uint8_t opaque[12] = {}, opaque_out[12];
  expect(hcomm_allreduce(opaque, opaque_out, 1, HCOMM_DTYPE_OPAQUE(12), HCOMM_SUM, job.comm, nullptr),
         HCOMM_ERR_INVALID_ARGUMENT, "allreduce of an opaque dtype with HCOMM_SUM", "user op only");
  std::vector<size_t> counts(static_cast<size_t>(job.ranks.size), 1);
  expect(hcomm_reduce_scatter_v(opaque, opaque_out, counts.data(), HCOMM_DTYPE_OPAQUE(0), HCOMM_SUM, job.comm, nullptr),
         HCOMM_ERR_INVALID_ARGUMENT, "reduce_scatter_v of HCOMM_DTYPE_OPAQUE(0)", "dtype");
  expect(hcomm_op_create(nullptr, nullptr, 1, &op), HCOMM_ERR_INVALID_ARGUMENT, "hcomm_op_create without fn",
         "fn is NULL");
  expect(hcomm_op_create(apply, nullptr, 1, nullptr), HCOMM_ERR_INVALID_ARGUMENT, "hcomm_op_create without op",
         "op is NULL");
  expect(hcomm_op_destroy(HCOMM_MAX), HCOMM_ERR_INVALID_ARGUMENT, "hcomm_op_destroy(HCOMM_MAX)", "built in");
  job.check(hcomm_allreduce(&one, &out, 1, HCOMM_UINT32, HCOMM_SUM, job.comm, nullptr), "allreduce after bad ops");
  if (out != static_cast<uint32_t>(job.ranks.size)) job.fail("allreduce after bad ops: got " + std::to_string(out));
  job.summary("bad op arguments are errors naming the argument");
}

}  // namespace

void test_user_ops(Job& job, const std::vector<size_t>& counts, size_t large) {
  hcomm_op_t ops[3];
  for (size_t o = 0; o < std::size(kOps); ++o)
    job.check(hcomm_op_create(apply, const_cast<OpKind*>(&kOps[o]), kOps[o].commutative ? 1 : 0, &ops[o]),
              "hcomm_op_create");
  test_collectives(job, counts, large, ops);
  for (hcomm_op_t op : ops) job.check(hcomm_op_destroy(op), "hcomm_op_destroy");
  test_destroyed_in_flight(job);
  test_bad_ops(job);
  if (g_bad_calls) job.fail(std::to_string(g_bad_calls) + " calls of an op's function were wrong: " + g_bad_call);
  job.summary("user ops' functions saw the call's dtype and whole elements");
}

}  // namespace hcomm::test
