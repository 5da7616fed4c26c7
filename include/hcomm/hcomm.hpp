// HComm C++ API: thin RAII over the C API; errors become hcomm::Error.
#pragma once

#include <cstdint>
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

// A nonblocking collective in flight. Destroying it waits for completion
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

 private:
  void finish() noexcept {
    if (r_) (void)hcomm_wait(std::exchange(r_, nullptr));
  }
  hcomm_request_t r_ = nullptr;
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
    hcomm_request_t r = nullptr;
    check(hcomm_iallreduce(send, recv, count, dtype, op, c_, &r));
    return Request(r);
  }

  void broadcast(const void* send, void* recv, size_t count, hcomm_dtype_t dtype, int root) {
    check(hcomm_broadcast(send, recv, count, dtype, root, c_, nullptr));
  }
  template <class T>
  void broadcast(std::span<T> buf, int root) {
    broadcast(buf.data(), buf.data(), buf.size(), dtype_of<T>(), root);
  }
  Request ibroadcast(const void* send, void* recv, size_t count, hcomm_dtype_t dtype, int root) {
    hcomm_request_t r = nullptr;
    check(hcomm_ibroadcast(send, recv, count, dtype, root, c_, &r));
    return Request(r);
  }

  void barrier() { check(hcomm_barrier(c_, nullptr)); }
  Request ibarrier() {
    hcomm_request_t r = nullptr;
    check(hcomm_ibarrier(c_, &r));
    return Request(r);
  }

 private:
  explicit Communicator(hcomm_comm_t c) : c_(c) {}
  static void require_same_size(size_t send, size_t recv) {
    if (send != recv)
      throw Error(HCOMM_ERR_INVALID_ARGUMENT, "send and receive spans differ in size (" + std::to_string(send) +
                                                  " vs " + std::to_string(recv) + ")");
  }
  hcomm_comm_t c_ = nullptr;
};

}  // namespace hcomm
