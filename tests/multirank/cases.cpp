#include "cases.hpp"

#include <algorithm>
#include <array>

namespace hcomm::test {
namespace {

using perf::block_key;
using perf::BlockValues;
using perf::ReductionValues;

// The reduction's inputs (values.hpp) and its result, which every rank
// computes serially from the inputs of all ranks (or of ranks 0..last, for
// the prefix reductions), in int64 (exact for these values, whose partial
// results are too; AVG truncates as integer dtypes do, and is exact for the
// others).
class Reduction {
 public:
  Reduction(const Case& c, const Ranks& ranks) : values_(c.dtype, c.op, ranks.size), op_(c.op), ranks_(ranks) {}

  auto input() const {
    return [this](size_t i) { return values_.input(ranks_.rank, i); };
  }
  auto result(size_t first) const {
    return [this, first](size_t i) { return reduce(first + i, ranks_.size - 1); };
  }
  auto prefix(int last) const {
    return [this, last](size_t i) { return reduce(i, last); };
  }

 private:
  int64_t reduce(size_t g, int last) const {
    const int64_t acc = values_.prefix(last, g);
    return op_ == HCOMM_AVG ? acc / ranks_.size : acc;
  }

  ReductionValues values_;
  hcomm_op_t op_;
  Ranks ranks_;
};

// The blocks that data-movement collectives carry, from origin to target.
class Blocks {
 public:
  Blocks(const Case& c, const Ranks& ranks) : values_(c.dtype), nranks_(ranks.size) {}
  auto of(int origin, int target) const {
    return [this, key = block_key(origin, target, nranks_)](size_t i) { return values_.value(key, i); };
  }

 private:
  BlockValues values_;
  int nranks_;
};

// Blocks of counts[r] elements at displs[r], and the elements they span.
struct BlockLayout {
  std::vector<size_t> counts;
  std::vector<size_t> displs;
  size_t extent = 0;
};

BlockLayout packed(std::vector<size_t> counts) {
  BlockLayout l{.counts = std::move(counts)};
  for (size_t c : l.counts) {
    l.displs.push_back(l.extent);
    l.extent += c;
  }
  return l;
}

// A gap of one element before every block and after the last, the blocks in
// rank order or reversed: the call must follow the displacements and leave
// the gaps alone.
BlockLayout spread(std::vector<size_t> counts, bool reversed) {
  BlockLayout l{.counts = std::move(counts)};
  const size_t n = l.counts.size();
  l.displs.resize(n);
  for (size_t k = 0; k < n; ++k) {
    const size_t r = reversed ? n - 1 - k : k;
    l.displs[r] = l.extent + 1;
    l.extent += 1 + l.counts[r];
  }
  l.extent += 1;
  return l;
}

// Rank r's share of a v-collective of about `count`: count, count/2 or
// count+1, so that blocks differ in size and some are empty.
size_t varied(size_t count, int r) {
  if (count == 0) return 0;
  switch (r % 3) {
    case 0:
      return count;
    case 1:
      return count / 2;
    default:
      return count + 1;
  }
}

std::vector<size_t> per_rank(const Ranks& ranks, size_t count, bool vary) {
  std::vector<size_t> counts(static_cast<size_t>(ranks.size));
  for (int r = 0; r < ranks.size; ++r) counts[static_cast<size_t>(r)] = vary ? varied(count, r) : count;
  return counts;
}

size_t at(size_t count, int block) { return count * static_cast<size_t>(block); }
size_t idx(int rank) { return static_cast<size_t>(rank); }

// Where this rank's input goes: into the receive buffer at `offset` when in
// place, else into a send buffer of `elements` (which the call must leave
// as it is).
struct Input {
  CheckedBuffer* buffer;
  size_t base;
};

Input input_buffer(Setup& s, hcomm_dtype_t dtype, bool in_place, size_t offset, size_t elements) {
  if (in_place) {
    s.sendbuf = s.recv.data(offset);
    return {&s.recv, offset};
  }
  s.send = CheckedBuffer(dtype, elements);
  s.sendbuf = s.send.data();
  return {&s.send, 0};
}

void prepare_allreduce(const Case& c, const Ranks& k, Setup& s) {
  const Reduction reduction(c, k);
  s.recv = CheckedBuffer(c.dtype, c.count);
  s.recv.expect(0, c.count, reduction.result(0));
  const Input in = input_buffer(s, c.dtype, c.in_place, 0, c.count);
  in.buffer->write(in.base, c.count, reduction.input());
  s.recvbuf = s.recv.data();
}

// A non-root's send buffer, or none in place: the call must not read it (a
// null one would crash) nor write it (a canary one stays as it is).
void unread_send(const Case& c, Setup& s, size_t elements) {
  if (c.in_place) return;
  s.send = CheckedBuffer(c.dtype, elements);
  s.sendbuf = s.send.data();
}

// A non-root's receive buffer where nothing arrives: none in place, else one
// that must stay as it is.
void untouched_recv(const Case& c, Setup& s, size_t elements) {
  if (c.in_place) return;
  s.recv = CheckedBuffer(c.dtype, elements);
  s.recvbuf = s.recv.data();
}

void prepare_broadcast(const Case& c, const Ranks& k, Setup& s) {
  const Blocks blocks(c, k);
  s.recv = CheckedBuffer(c.dtype, c.count);
  s.recv.expect(0, c.count, blocks.of(c.root, 0));
  s.recvbuf = s.recv.data();
  if (k.rank != c.root) return unread_send(c, s, c.count);
  const Input in = input_buffer(s, c.dtype, c.in_place, 0, c.count);
  in.buffer->write(in.base, c.count, blocks.of(c.root, 0));
}

void prepare_reduce(const Case& c, const Ranks& k, Setup& s) {
  if (k.rank == c.root) return prepare_allreduce(c, k, s);
  const Reduction reduction(c, k);
  const Input in = input_buffer(s, c.dtype, false, 0, c.count);
  in.buffer->write(in.base, c.count, reduction.input());
  untouched_recv(c, s, c.count);
}

// allgather(v): block r of recv.counts[r] elements at recv.displs[r].
void prepare_gathered(const Case& c, const Ranks& k, Setup& s, const BlockLayout& recv) {
  const Blocks blocks(c, k);
  s.recv = CheckedBuffer(c.dtype, recv.extent);
  for (int r = 0; r < k.size; ++r) s.recv.expect(recv.displs[idx(r)], recv.counts[idx(r)], blocks.of(r, 0));
  const size_t mine = recv.counts[idx(k.rank)];
  const Input in = input_buffer(s, c.dtype, c.in_place, recv.displs[idx(k.rank)], mine);
  in.buffer->write(in.base, mine, blocks.of(k.rank, 0));
  s.recvbuf = s.recv.data();
  s.recv_counts = recv.counts;
  s.recv_displs = recv.displs;
}

// scan and exscan: rank r's result reduces the inputs of ranks 0..last (r,
// or r - 1). Exscan's rank 0 has none: its receive buffer stays as it was
// (in place: its input), and its nonblocking calls pass none.
void prepare_prefix(const Case& c, const Ranks& k, Setup& s, int last) {
  const Reduction reduction(c, k);
  const bool no_recv = last < 0 && !c.in_place && c.nonblocking;
  if (!no_recv) {
    s.recv = CheckedBuffer(c.dtype, c.count);
    if (last >= 0) s.recv.expect(0, c.count, reduction.prefix(last));
    s.recvbuf = s.recv.data();
  }
  const Input in = input_buffer(s, c.dtype, c.in_place, 0, c.count);
  in.buffer->write(in.base, c.count, reduction.input());
}

void prepare_scan(const Case& c, const Ranks& k, Setup& s) { prepare_prefix(c, k, s, k.rank); }
void prepare_exscan(const Case& c, const Ranks& k, Setup& s) { prepare_prefix(c, k, s, k.rank - 1); }

void prepare_allgather(const Case& c, const Ranks& k, Setup& s) {
  prepare_gathered(c, k, s, packed(per_rank(k, c.count, false)));
}
void prepare_allgatherv(const Case& c, const Ranks& k, Setup& s) {
  prepare_gathered(c, k, s, spread(per_rank(k, c.count, true), true));
}

// reduce_scatter(_v): the input packs block r of counts[r] elements in rank
// order; in place, the receive buffer is the whole input and the blocks of
// other ranks are the call's to use.
void prepare_scattered_reduction(const Case& c, const Ranks& k, Setup& s, std::vector<size_t> counts) {
  const Reduction reduction(c, k);
  const BlockLayout input = packed(std::move(counts));
  const size_t first = input.displs[idx(k.rank)], mine = input.counts[idx(k.rank)];
  if (c.in_place) {
    s.recv = CheckedBuffer(c.dtype, input.extent);
    s.recv.ignore(0, input.extent);
    s.recv.expect(first, mine, reduction.result(first));
    s.recv.write(0, input.extent, reduction.input());
    s.sendbuf = s.recv.data();
    s.recvbuf = s.recv.data(first);
  } else {
    s.recv = CheckedBuffer(c.dtype, mine);
    s.recv.expect(0, mine, reduction.result(first));
    const Input in = input_buffer(s, c.dtype, false, 0, input.extent);
    in.buffer->write(0, input.extent, reduction.input());
    s.recvbuf = s.recv.data();
  }
  s.recv_counts = input.counts;
}

void prepare_reduce_scatter(const Case& c, const Ranks& k, Setup& s) {
  prepare_scattered_reduction(c, k, s, per_rank(k, c.count, false));
}
void prepare_reduce_scatter_v(const Case& c, const Ranks& k, Setup& s) {
  prepare_scattered_reduction(c, k, s, per_rank(k, c.count, true));
}

// alltoall(v): block t of `send` goes to rank t, block r of `recv` comes from
// rank r. In place the send layout is the receive layout.
void prepare_exchange(const Case& c, const Ranks& k, Setup& s, const BlockLayout& send, const BlockLayout& recv) {
  const Blocks blocks(c, k);
  s.recv = CheckedBuffer(c.dtype, recv.extent);
  for (int r = 0; r < k.size; ++r) s.recv.expect(recv.displs[idx(r)], recv.counts[idx(r)], blocks.of(r, k.rank));
  const BlockLayout& out = c.in_place ? recv : send;
  const Input in = input_buffer(s, c.dtype, c.in_place, 0, out.extent);
  for (int t = 0; t < k.size; ++t)
    in.buffer->write(in.base + out.displs[idx(t)], out.counts[idx(t)], blocks.of(k.rank, t));
  s.recvbuf = s.recv.data();
  if (!c.in_place) {
    s.send_counts = send.counts;
    s.send_displs = send.displs;
  }
  s.recv_counts = recv.counts;
  s.recv_displs = recv.displs;
}

void prepare_alltoall(const Case& c, const Ranks& k, Setup& s) {
  const BlockLayout blocks = packed(per_rank(k, c.count, false));
  prepare_exchange(c, k, s, blocks, blocks);
}

// The count from rank a to rank b: asymmetric out of place; symmetric in
// place, where what a rank sends to r must fit the block it receives from r.
void prepare_alltoallv(const Case& c, const Ranks& k, Setup& s) {
  std::vector<size_t> send_counts, recv_counts;
  for (int r = 0; r < k.size; ++r) {
    send_counts.push_back(varied(c.count, c.in_place ? k.rank + r : 2 * k.rank + r));
    recv_counts.push_back(varied(c.count, c.in_place ? r + k.rank : 2 * r + k.rank));
  }
  prepare_exchange(c, k, s, spread(send_counts, false), spread(recv_counts, true));
}

void prepare_gather(const Case& c, const Ranks& k, Setup& s) {
  const Blocks blocks(c, k);
  const size_t all = at(c.count, k.size);
  if (k.rank != c.root) {
    const Input in = input_buffer(s, c.dtype, false, 0, c.count);
    in.buffer->write(0, c.count, blocks.of(k.rank, c.root));
    return untouched_recv(c, s, all);
  }
  s.recv = CheckedBuffer(c.dtype, all);
  for (int r = 0; r < k.size; ++r) s.recv.expect(at(c.count, r), c.count, blocks.of(r, c.root));
  const Input in = input_buffer(s, c.dtype, c.in_place, at(c.count, c.root), c.count);
  in.buffer->write(in.base, c.count, blocks.of(c.root, c.root));
  s.recvbuf = s.recv.data();
}

void prepare_scatter(const Case& c, const Ranks& k, Setup& s) {
  const Blocks blocks(c, k);
  const size_t all = at(c.count, k.size), mine = at(c.count, k.rank);
  if (k.rank != c.root || !c.in_place) {
    s.recv = CheckedBuffer(c.dtype, c.count);
    s.recv.expect(0, c.count, blocks.of(c.root, k.rank));
    s.recvbuf = s.recv.data();
  }
  if (k.rank != c.root) return unread_send(c, s, all);
  if (c.in_place) {  // the root's block of the input is its receive buffer; the rest is only read
    s.recv = CheckedBuffer(c.dtype, all);
    s.recv.expect(mine, c.count, blocks.of(c.root, c.root));
    s.recvbuf = s.recv.data(mine);
  }
  const Input in = input_buffer(s, c.dtype, c.in_place, 0, all);
  for (int t = 0; t < k.size; ++t) in.buffer->write(in.base + at(c.count, t), c.count, blocks.of(c.root, t));
}

// A vector's elements for the API: null when it has none.
const size_t* elements(const std::vector<size_t>& v) { return v.empty() ? nullptr : v.data(); }

hcomm_result_t call_allreduce(const Case& c, Setup& s, hcomm_comm_t comm, hcomm_request_t* r) {
  return r ? hcomm_iallreduce(s.sendbuf, s.recvbuf, c.count, c.dtype, c.op, comm, r)
           : hcomm_allreduce(s.sendbuf, s.recvbuf, c.count, c.dtype, c.op, comm, s.stream);
}
hcomm_result_t call_broadcast(const Case& c, Setup& s, hcomm_comm_t comm, hcomm_request_t* r) {
  return r ? hcomm_ibroadcast(s.sendbuf, s.recvbuf, c.count, c.dtype, c.root, comm, r)
           : hcomm_broadcast(s.sendbuf, s.recvbuf, c.count, c.dtype, c.root, comm, s.stream);
}
hcomm_result_t call_reduce(const Case& c, Setup& s, hcomm_comm_t comm, hcomm_request_t* r) {
  return r ? hcomm_ireduce(s.sendbuf, s.recvbuf, c.count, c.dtype, c.op, c.root, comm, r)
           : hcomm_reduce(s.sendbuf, s.recvbuf, c.count, c.dtype, c.op, c.root, comm, s.stream);
}
hcomm_result_t call_allgather(const Case& c, Setup& s, hcomm_comm_t comm, hcomm_request_t* r) {
  return r ? hcomm_iallgather(s.sendbuf, s.recvbuf, c.count, c.dtype, comm, r)
           : hcomm_allgather(s.sendbuf, s.recvbuf, c.count, c.dtype, comm, s.stream);
}
hcomm_result_t call_allgatherv(const Case& c, Setup& s, hcomm_comm_t comm, hcomm_request_t* r) {
  const size_t *counts = elements(s.recv_counts), *displs = elements(s.recv_displs);
  return r ? hcomm_iallgatherv(s.sendbuf, s.recvbuf, counts, displs, c.dtype, comm, r)
           : hcomm_allgatherv(s.sendbuf, s.recvbuf, counts, displs, c.dtype, comm, s.stream);
}
hcomm_result_t call_reduce_scatter(const Case& c, Setup& s, hcomm_comm_t comm, hcomm_request_t* r) {
  return r ? hcomm_ireduce_scatter(s.sendbuf, s.recvbuf, c.count, c.dtype, c.op, comm, r)
           : hcomm_reduce_scatter(s.sendbuf, s.recvbuf, c.count, c.dtype, c.op, comm, s.stream);
}
hcomm_result_t call_reduce_scatter_v(const Case& c, Setup& s, hcomm_comm_t comm, hcomm_request_t* r) {
  const size_t* counts = elements(s.recv_counts);
  return r ? hcomm_ireduce_scatter_v(s.sendbuf, s.recvbuf, counts, c.dtype, c.op, comm, r)
           : hcomm_reduce_scatter_v(s.sendbuf, s.recvbuf, counts, c.dtype, c.op, comm, s.stream);
}
hcomm_result_t call_alltoall(const Case& c, Setup& s, hcomm_comm_t comm, hcomm_request_t* r) {
  return r ? hcomm_ialltoall(s.sendbuf, s.recvbuf, c.count, c.dtype, comm, r)
           : hcomm_alltoall(s.sendbuf, s.recvbuf, c.count, c.dtype, comm, s.stream);
}
hcomm_result_t call_alltoallv(const Case& c, Setup& s, hcomm_comm_t comm, hcomm_request_t* r) {
  const size_t *sc = elements(s.send_counts), *sd = elements(s.send_displs);
  const size_t *rc = elements(s.recv_counts), *rd = elements(s.recv_displs);
  return r ? hcomm_ialltoallv(s.sendbuf, sc, sd, s.recvbuf, rc, rd, c.dtype, comm, r)
           : hcomm_alltoallv(s.sendbuf, sc, sd, s.recvbuf, rc, rd, c.dtype, comm, s.stream);
}
hcomm_result_t call_gather(const Case& c, Setup& s, hcomm_comm_t comm, hcomm_request_t* r) {
  return r ? hcomm_igather(s.sendbuf, s.recvbuf, c.count, c.dtype, c.root, comm, r)
           : hcomm_gather(s.sendbuf, s.recvbuf, c.count, c.dtype, c.root, comm, s.stream);
}
hcomm_result_t call_scatter(const Case& c, Setup& s, hcomm_comm_t comm, hcomm_request_t* r) {
  return r ? hcomm_iscatter(s.sendbuf, s.recvbuf, c.count, c.dtype, c.root, comm, r)
           : hcomm_scatter(s.sendbuf, s.recvbuf, c.count, c.dtype, c.root, comm, s.stream);
}
hcomm_result_t call_scan(const Case& c, Setup& s, hcomm_comm_t comm, hcomm_request_t* r) {
  return r ? hcomm_iscan(s.sendbuf, s.recvbuf, c.count, c.dtype, c.op, comm, r)
           : hcomm_scan(s.sendbuf, s.recvbuf, c.count, c.dtype, c.op, comm, s.stream);
}
hcomm_result_t call_exscan(const Case& c, Setup& s, hcomm_comm_t comm, hcomm_request_t* r) {
  return r ? hcomm_iexscan(s.sendbuf, s.recvbuf, c.count, c.dtype, c.op, comm, r)
           : hcomm_exscan(s.sendbuf, s.recvbuf, c.count, c.dtype, c.op, comm, s.stream);
}

const std::array kTests = {
    CollectiveTest{"allreduce", HCOMM_COLL_ALLREDUCE, true, false, prepare_allreduce, call_allreduce},
    CollectiveTest{"broadcast", HCOMM_COLL_BROADCAST, false, true, prepare_broadcast, call_broadcast},
    CollectiveTest{"reduce", HCOMM_COLL_REDUCE, true, true, prepare_reduce, call_reduce},
    CollectiveTest{"allgather", HCOMM_COLL_ALLGATHER, false, false, prepare_allgather, call_allgather},
    CollectiveTest{"allgatherv", HCOMM_COLL_ALLGATHERV, false, false, prepare_allgatherv, call_allgatherv},
    CollectiveTest{"reduce_scatter", HCOMM_COLL_REDUCE_SCATTER, true, false, prepare_reduce_scatter,
                   call_reduce_scatter},
    CollectiveTest{"reduce_scatter_v", HCOMM_COLL_REDUCE_SCATTER_V, true, false, prepare_reduce_scatter_v,
                   call_reduce_scatter_v},
    CollectiveTest{"alltoall", HCOMM_COLL_ALLTOALL, false, false, prepare_alltoall, call_alltoall},
    CollectiveTest{"alltoallv", HCOMM_COLL_ALLTOALLV, false, false, prepare_alltoallv, call_alltoallv},
    CollectiveTest{"gather", HCOMM_COLL_GATHER, false, true, prepare_gather, call_gather},
    CollectiveTest{"scatter", HCOMM_COLL_SCATTER, false, true, prepare_scatter, call_scatter},
    CollectiveTest{"scan", HCOMM_COLL_SCAN, true, false, prepare_scan, call_scan, true},
    CollectiveTest{"exscan", HCOMM_COLL_EXSCAN, true, false, prepare_exscan, call_exscan, true},
};

}  // namespace

std::span<const CollectiveTest> collective_tests() { return kTests; }

const CollectiveTest* find_collective_test(std::string_view name) {
  for (const CollectiveTest& t : kTests)
    if (t.name == name) return &t;
  return nullptr;
}

std::string describe(const Case& c, const CollectiveTest& test) {
  std::string out(test.name);
  out += " algorithm " + (c.algorithm.empty() ? std::string("(selector's choice)") : c.algorithm);
  out += std::string(", ") + hcomm_dtype_name(c.dtype);
  if (test.reduces) out += std::string(" ") + hcomm_op_name(c.op);
  out += ", count " + std::to_string(c.count);
  if (test.name.ends_with('v')) out += " (varied per rank)";
  if (test.rooted) out += ", root " + std::to_string(c.root);
  if (c.in_place) out += ", in place";
  if (c.nonblocking) out += ", nonblocking";
  return out;
}

}  // namespace hcomm::test
