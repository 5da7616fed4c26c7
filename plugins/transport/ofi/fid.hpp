// RAII for libfabric objects, and libfabric return codes turned into errors.
#pragma once

#include <rdma/fabric.h>
#include <rdma/fi_errno.h>

#include <utility>

#include "hcomm/plugin/util.hpp"

namespace hcomm::ofi {

// Throws `code` with "ofi: <what>: <libfabric's text> (<rc>)" when rc < 0.
inline void check_fi(int rc, hcomm_result_t code, const char* what) {
  if (rc < 0) HCOMM_PLUGIN_THROW(code, "ofi: %s: %s (%d)", what, fi_strerror(-rc), rc);
}

// Owns one libfabric object (fabric, domain, endpoint, cq, av, mr) and closes it.
template <class T>
class Fid {
 public:
  Fid() = default;
  explicit Fid(T* object) : object_(object) {}
  Fid(Fid&& other) noexcept : object_(std::exchange(other.object_, nullptr)) {}
  Fid& operator=(Fid&& other) noexcept {
    if (this != &other) reset(std::exchange(other.object_, nullptr));
    return *this;
  }
  Fid(const Fid&) = delete;
  Fid& operator=(const Fid&) = delete;
  ~Fid() { reset(); }

  T* get() const { return object_; }
  T** out() {
    reset();
    return &object_;
  }
  void reset(T* object = nullptr) {
    if (object_) fi_close(&object_->fid);
    object_ = object;
  }

 private:
  T* object_ = nullptr;
};

}  // namespace hcomm::ofi
