// HComm C++ API: thin RAII over the C API; errors become hcomm::Error.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "hcomm/hcomm.h"

namespace hcomm {

class Error : public std::runtime_error {
 public:
  Error(hcomm_result_t code, const std::string& what) : std::runtime_error(what), code_(code) {}
  hcomm_result_t code() const noexcept { return code_; }

 private:
  hcomm_result_t code_;
};

inline void check(hcomm_result_t rc) {
  if (rc != HCOMM_SUCCESS) throw Error(rc, hcomm_get_last_error());
}

// The version of the library the program runs with (hcomm_get_version):
// major * 10000 + minor * 100 + patch, as HCOMM_VERSION_CODE.
inline int version() {
  int v = 0;
  check(hcomm_get_version(&v));
  return v;
}

// The dtype of a C++ element type (float16/bfloat16 have none: use the
// pointer + count + dtype overloads for them).
template <class T>
constexpr hcomm_dtype_t dtype_of() {
  using U = std::remove_cv_t<T>;
  if constexpr (std::is_same_v<U, int8_t>) return HCOMM_INT8;
  else if constexpr (std::is_same_v<U, uint8_t>) return HCOMM_UINT8;
  else if constexpr (std::is_same_v<U, int32_t>) return HCOMM_INT32;
  else if constexpr (std::is_same_v<U, uint32_t>) return HCOMM_UINT32;
  else if constexpr (std::is_same_v<U, int64_t>) return HCOMM_INT64;
  else if constexpr (std::is_same_v<U, uint64_t>) return HCOMM_UINT64;
  else if constexpr (std::is_same_v<U, float>) return HCOMM_FLOAT32;
  else if constexpr (std::is_same_v<U, double>) return HCOMM_FLOAT64;
  else static_assert(sizeof(T) == 0, "no hcomm dtype for this element type");
}

// A nonblocking call in flight. Destroying it waits for completion
// (errors are then dropped: call wait() to see them).
class Request {
 public:
  Request() = default;
  explicit Request(hcomm_request_t r) : r_(r) {}
  Request(Request&& o) noexcept : r_(std::exchange(o.r_, nullptr)) {}
  Request& operator=(Request&& o) noexcept {
    if (this != &o) {
      finish();
      r_ = std::exchange(o.r_, nullptr);
    }
    return *this;
  }
  ~Request() { finish(); }

  bool test() {
    if (!r_) return true;
    int done = 0;
    hcomm_result_t rc = hcomm_test(r_, &done);
    if (rc != HCOMM_SUCCESS || done) r_ = nullptr;
    check(rc);
    return done != 0;
  }
  void wait() {
    if (r_) check(hcomm_wait(std::exchange(r_, nullptr)));
  }
  // What a receive got (hcomm_wait_status); an empty request's status is
  // hcomm_status_t's for a send.
  hcomm_status_t wait_status() {
    hcomm_status_t status{HCOMM_ANY_SOURCE, HCOMM_ANY_TAG, 0, 0};
    if (r_) check(hcomm_wait_status(std::exchange(r_, nullptr), &status));
    return status;
  }
  // Withdraws a receive no message matched yet (hcomm_cancel); wait as usual.
  void cancel() {
    if (r_) check(hcomm_cancel(r_));
  }

 private:
  void finish() noexcept {
    if (r_) (void)hcomm_wait(std::exchange(r_, nullptr));
  }
  hcomm_request_t r_ = nullptr;
};

// A user reduction op (hcomm_op_create), destroyed with the object; it
// converts to the hcomm_op_t that the reducing calls take.
class UserOp {
 public:
  UserOp(hcomm_user_op_fn fn, void* user_data, bool commutative) {
    check(hcomm_op_create(fn, user_data, commutative ? 1 : 0, &op_));
  }
  UserOp(UserOp&& o) noexcept : op_(o.op_), owned_(std::exchange(o.owned_, false)) {}
  UserOp& operator=(UserOp&& o) noexcept {
    if (this != &o) {
      release();
      op_ = o.op_;
      owned_ = std::exchange(o.owned_, false);
    }
    return *this;
  }
  ~UserOp() { release(); }
  operator hcomm_op_t() const noexcept { return op_; }

 private:
  void release() noexcept {
    if (std::exchange(owned_, false)) (void)hcomm_op_destroy(op_);
  }
  hcomm_op_t op_ = HCOMM_SUM;
  bool owned_ = true;
};

class Communicator {
 public:
  // Rank, size and rendezvous from the environment (hcomm-run sets them).
  static Communicator from_env() {
    hcomm_comm_t c = nullptr;
    check(hcomm_comm_init_env(&c));
    return Communicator(c);
  }
  static hcomm_unique_id_t unique_id() {
    hcomm_unique_id_t id;
    check(hcomm_get_unique_id(&id));
    return id;
  }
  Communicator(const hcomm_unique_id_t& id, int nranks, int rank) { check(hcomm_comm_init_rank(&c_, &id, nranks, rank)); }
  Communicator(Communicator&& o) noexcept : c_(std::exchange(o.c_, nullptr)) {}
  Communicator& operator=(Communicator&& o) noexcept {
    if (this != &o) {
      if (c_) hcomm_comm_destroy(c_);
      c_ = std::exchange(o.c_, nullptr);
    }
    return *this;
  }
  ~Communicator() {
    if (c_) hcomm_comm_destroy(c_);
  }

  // The communicator of the ranks that pass `color`, ranked by `key`
  // (hcomm_comm_split); empty for HCOMM_SPLIT_NOCOLOR. Collective.
  std::optional<Communicator> split(int color, int key) const {
    hcomm_comm_t c = nullptr;
    check(hcomm_comm_split(c_, color, key, nullptr, &c));
    if (!c) return std::nullopt;
    return Communicator(c);
  }
  Communicator dup() const {
    hcomm_comm_t c = nullptr;
    check(hcomm_comm_dup(c_, &c));
    return Communicator(c);
  }

  int rank() const {
    int r = 0;
    check(hcomm_comm_rank(c_, &r));
    return r;
  }
  int size() const {
    int s = 0;
    check(hcomm_comm_size(c_, &s));
    return s;
  }
  hcomm_comm_t handle() const { return c_; }

  void allreduce(const void* send, void* recv, size_t count, hcomm_dtype_t dtype, hcomm_op_t op) {
    check(hcomm_allreduce(send, recv, count, dtype, op, c_, nullptr));
  }
  template <class T>
  void allreduce(std::span<const T> send, std::span<T> recv, hcomm_op_t op) {
    require_same_size(send.size(), recv.size());
    allreduce(send.data(), recv.data(), send.size(), dtype_of<T>(), op);
  }
  template <class T>
  void allreduce(std::span<T> inout, hcomm_op_t op) {
    allreduce(inout.data(), inout.data(), inout.size(), dtype_of<T>(), op);
  }
  Request iallreduce(const void* send, void* recv, size_t count, hcomm_dtype_t dtype, hcomm_op_t op) {
    return start(hcomm_iallreduce, send, recv, count, dtype, op, c_);
  }

  void broadcast(const void* send, void* recv, size_t count, hcomm_dtype_t dtype, int root) {
    check(hcomm_broadcast(send, recv, count, dtype, root, c_, nullptr));
  }
  template <class T>
  void broadcast(std::span<T> buf, int root) {
    broadcast(buf.data(), buf.data(), buf.size(), dtype_of<T>(), root);
  }
  Request ibroadcast(const void* send, void* recv, size_t count, hcomm_dtype_t dtype, int root) {
    return start(hcomm_ibroadcast, send, recv, count, dtype, root, c_);
  }

  void barrier() { check(hcomm_barrier(c_, nullptr)); }
  Request ibarrier() { return start(hcomm_ibarrier, c_); }

  // recv is written on the root only (elsewhere it may be null).
  void reduce(const void* send, void* recv, size_t count, hcomm_dtype_t dtype, hcomm_op_t op, int root) {
    check(hcomm_reduce(send, recv, count, dtype, op, root, c_, nullptr));
  }
  Request ireduce(const void* send, void* recv, size_t count, hcomm_dtype_t dtype, hcomm_op_t op, int root) {
    return start(hcomm_ireduce, send, recv, count, dtype, op, root, c_);
  }

  void allgather(const void* send, void* recv, size_t count, hcomm_dtype_t dtype) {
    check(hcomm_allgather(send, recv, count, dtype, c_, nullptr));
  }
  template <class T>
  void allgather(std::span<const T> send, std::span<T> recv) {
    require_blocks("receive", recv.size(), send.size());
    allgather(send.data(), recv.data(), send.size(), dtype_of<T>());
  }
  Request iallgather(const void* send, void* recv, size_t count, hcomm_dtype_t dtype) {
    return start(hcomm_iallgather, send, recv, count, dtype, c_);
  }

  void allgatherv(const void* send, void* recv, const size_t* recvcounts, const size_t* displs, hcomm_dtype_t dtype) {
    check(hcomm_allgatherv(send, recv, recvcounts, displs, dtype, c_, nullptr));
  }
  Request iallgatherv(const void* send, void* recv, const size_t* recvcounts, const size_t* displs,
                      hcomm_dtype_t dtype) {
    return start(hcomm_iallgatherv, send, recv, recvcounts, displs, dtype, c_);
  }

  void reduce_scatter(const void* send, void* recv, size_t recvcount, hcomm_dtype_t dtype, hcomm_op_t op) {
    check(hcomm_reduce_scatter(send, recv, recvcount, dtype, op, c_, nullptr));
  }
  template <class T>
  void reduce_scatter(std::span<const T> send, std::span<T> recv, hcomm_op_t op) {
    require_blocks("send", send.size(), recv.size());
    reduce_scatter(send.data(), recv.data(), recv.size(), dtype_of<T>(), op);
  }
  Request ireduce_scatter(const void* send, void* recv, size_t recvcount, hcomm_dtype_t dtype, hcomm_op_t op) {
    return start(hcomm_ireduce_scatter, send, recv, recvcount, dtype, op, c_);
  }

  void reduce_scatter_v(const void* send, void* recv, const size_t* recvcounts, hcomm_dtype_t dtype, hcomm_op_t op) {
    check(hcomm_reduce_scatter_v(send, recv, recvcounts, dtype, op, c_, nullptr));
  }
  Request ireduce_scatter_v(const void* send, void* recv, const size_t* recvcounts, hcomm_dtype_t dtype,
                            hcomm_op_t op) {
    return start(hcomm_ireduce_scatter_v, send, recv, recvcounts, dtype, op, c_);
  }

  void alltoall(const void* send, void* recv, size_t count, hcomm_dtype_t dtype) {
    check(hcomm_alltoall(send, recv, count, dtype, c_, nullptr));
  }
  // Both spans hold one block per rank.
  template <class T>
  void alltoall(std::span<const T> send, std::span<T> recv) {
    require_same_size(send.size(), recv.size());
    require_blocks("send", send.size(), send.size() / size());
    alltoall(send.data(), recv.data(), send.size() / size(), dtype_of<T>());
  }
  Request ialltoall(const void* send, void* recv, size_t count, hcomm_dtype_t dtype) {
    return start(hcomm_ialltoall, send, recv, count, dtype, c_);
  }

  void alltoallv(const void* send, const size_t* sendcounts, const size_t* sdispls, void* recv,
                 const size_t* recvcounts, const size_t* rdispls, hcomm_dtype_t dtype) {
    check(hcomm_alltoallv(send, sendcounts, sdispls, recv, recvcounts, rdispls, dtype, c_, nullptr));
  }
  Request ialltoallv(const void* send, const size_t* sendcounts, const size_t* sdispls, void* recv,
                     const size_t* recvcounts, const size_t* rdispls, hcomm_dtype_t dtype) {
    return start(hcomm_ialltoallv, send, sendcounts, sdispls, recv, recvcounts, rdispls, dtype, c_);
  }

  // recv (one block per rank) is written on the root only.
  void gather(const void* send, void* recv, size_t count, hcomm_dtype_t dtype, int root) {
    check(hcomm_gather(send, recv, count, dtype, root, c_, nullptr));
  }
  Request igather(const void* send, void* recv, size_t count, hcomm_dtype_t dtype, int root) {
    return start(hcomm_igather, send, recv, count, dtype, root, c_);
  }

  // send (one block per rank) is read on the root only.
  void scatter(const void* send, void* recv, size_t count, hcomm_dtype_t dtype, int root) {
    check(hcomm_scatter(send, recv, count, dtype, root, c_, nullptr));
  }
  Request iscatter(const void* send, void* recv, size_t count, hcomm_dtype_t dtype, int root) {
    return start(hcomm_iscatter, send, recv, count, dtype, root, c_);
  }

  // Prefix reductions in rank order (hcomm_scan, hcomm_exscan); exscan leaves
  // rank 0's recv untouched (there it may be null).
  void scan(const void* send, void* recv, size_t count, hcomm_dtype_t dtype, hcomm_op_t op) {
    check(hcomm_scan(send, recv, count, dtype, op, c_, nullptr));
  }
  template <class T>
  void scan(std::span<T> inout, hcomm_op_t op) {
    scan(inout.data(), inout.data(), inout.size(), dtype_of<T>(), op);
  }
  Request iscan(const void* send, void* recv, size_t count, hcomm_dtype_t dtype, hcomm_op_t op) {
    return start(hcomm_iscan, send, recv, count, dtype, op, c_);
  }
  void exscan(const void* send, void* recv, size_t count, hcomm_dtype_t dtype, hcomm_op_t op) {
    check(hcomm_exscan(send, recv, count, dtype, op, c_, nullptr));
  }
  Request iexscan(const void* send, void* recv, size_t count, hcomm_dtype_t dtype, hcomm_op_t op) {
    return start(hcomm_iexscan, send, recv, count, dtype, op, c_);
  }

  // Point to point; peer may be this rank.
  void send(const void* buf, size_t count, hcomm_dtype_t dtype, int peer, int tag) {
    check(hcomm_send(buf, count, dtype, peer, tag, c_, nullptr));
  }
  template <class T>
  void send(std::span<const T> buf, int peer, int tag) {
    send(buf.data(), buf.size(), dtype_of<T>(), peer, tag);
  }
  Request isend(const void* buf, size_t count, hcomm_dtype_t dtype, int peer, int tag) {
    return start(hcomm_isend, buf, count, dtype, peer, tag, c_);
  }
  template <class T>
  Request isend(std::span<const T> buf, int peer, int tag) {
    return isend(buf.data(), buf.size(), dtype_of<T>(), peer, tag);
  }
  void recv(void* buf, size_t count, hcomm_dtype_t dtype, int peer, int tag) {
    check(hcomm_recv(buf, count, dtype, peer, tag, c_, nullptr));
  }
  template <class T>
  void recv(std::span<T> buf, int peer, int tag) {
    recv(buf.data(), buf.size(), dtype_of<T>(), peer, tag);
  }
  Request irecv(void* buf, size_t count, hcomm_dtype_t dtype, int peer, int tag) {
    return start(hcomm_irecv, buf, count, dtype, peer, tag, c_);
  }
  template <class T>
  Request irecv(std::span<T> buf, int peer, int tag) {
    return irecv(buf.data(), buf.size(), dtype_of<T>(), peer, tag);
  }
  // Matching mode any (hcomm_config_t.p2p_matching): peer and tag of
  // receives and probes may be HCOMM_ANY_SOURCE and HCOMM_ANY_TAG, a
  // receive's count is room.
  hcomm_status_t recv_status(void* buf, size_t count, hcomm_dtype_t dtype, int peer, int tag) {
    hcomm_status_t status{};
    check(hcomm_recv_status(buf, count, dtype, peer, tag, c_, nullptr, &status));
    return status;
  }
  template <class T>
  hcomm_status_t recv_status(std::span<T> buf, int peer, int tag) {
    return recv_status(buf.data(), buf.size(), dtype_of<T>(), peer, tag);
  }
  void ssend(const void* buf, size_t count, hcomm_dtype_t dtype, int peer, int tag) {
    check(hcomm_ssend(buf, count, dtype, peer, tag, c_, nullptr));
  }
  Request issend(const void* buf, size_t count, hcomm_dtype_t dtype, int peer, int tag) {
    return start(hcomm_issend, buf, count, dtype, peer, tag, c_);
  }
  hcomm_status_t probe(int peer, int tag) {
    hcomm_status_t status{};
    check(hcomm_probe(peer, tag, c_, &status));
    return status;
  }
  // Empty when no such message has arrived.
  std::optional<hcomm_status_t> iprobe(int peer, int tag) {
    hcomm_status_t status{};
    int flag = 0;
    check(hcomm_iprobe(peer, tag, c_, &flag, &status));
    return flag ? std::optional<hcomm_status_t>(status) : std::nullopt;
  }

  // Names the algorithm of every later call of `coll` (nullptr: back to the
  // selector's choice); query tells which algorithm a call would use.
  void force_algorithm(hcomm_coll_t coll, const char* algorithm) {
    check(hcomm_comm_force_algorithm(c_, coll, algorithm));
  }
  std::string query_algorithm(hcomm_coll_t coll, size_t count, hcomm_dtype_t dtype) const {
    const char* name = nullptr;
    check(hcomm_comm_query_algorithm(c_, coll, count, dtype, &name));
    return name;
  }

 private:
  explicit Communicator(hcomm_comm_t c) : c_(c) {}
  // Starts a nonblocking C call, whose last argument is the request.
  template <class... Params, class... Args>
  static Request start(hcomm_result_t (*call)(Params...), Args... args) {
    hcomm_request_t r = nullptr;
    check(call(args..., &r));
    return Request(r);
  }
  static void require_same_size(size_t send, size_t recv) {
    if (send != recv)
      throw Error(HCOMM_ERR_INVALID_ARGUMENT, "send and receive spans differ in size (" + std::to_string(send) +
                                                  " vs " + std::to_string(recv) + ")");
  }
  // `which` span must hold one block of `block` elements per rank.
  void require_blocks(const char* which, size_t elements, size_t block) const {
    if (elements != block * static_cast<size_t>(size()))
      throw Error(HCOMM_ERR_INVALID_ARGUMENT, std::string(which) + " span holds " + std::to_string(elements) +
                                                  " elements, not one block of " + std::to_string(block) +
                                                  " per rank (" + std::to_string(size()) + " ranks)");
  }
  hcomm_comm_t c_ = nullptr;
};

}  // namespace hcomm
