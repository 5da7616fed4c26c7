// Error policy: inside the core, typed exceptions carrying a status code; at
// every C boundary they become codes, with the text kept per thread.
#pragma once

#include <stdexcept>
#include <string>

#include "hcomm/plugin/util.hpp"
#include "hcomm/types.h"

namespace hcomm {

using plugin::format;

// The core's typed error. Its own class, not the plugin helpers' one, and
// not named hcomm::Error, which is the C++ API's (hcomm.hpp): the core's
// code calls it Error through the alias below.
class CoreError : public std::runtime_error {
 public:
  CoreError(hcomm_result_t code, const std::string& what) : std::runtime_error(what), code_(code) {}
  hcomm_result_t code() const { return code_; }

 private:
  hcomm_result_t code_;
};
using Error = CoreError;

void set_last_error(const std::string& text);
const char* last_error();

// Runs `body` at a C boundary of the core: exceptions become status codes.
template <class F>
hcomm_result_t c_boundary(F&& body) noexcept {
  try {
    return body();
  } catch (const Error& e) {
    set_last_error(e.what());
    return e.code();
  } catch (const std::bad_alloc&) {
    set_last_error("out of memory");
    return HCOMM_ERR_SYSTEM;
  } catch (const std::exception& e) {
    set_last_error(std::string("internal error: ") + e.what());
    return HCOMM_ERR_INTERNAL;
  }
}

}  // namespace hcomm

#define HCOMM_THROW(code, ...) throw ::hcomm::Error((code), ::hcomm::format(__VA_ARGS__))
// Invariant checks that print both values.
#define HCOMM_ENFORCE_EQ(a, b)                                                                           \
  do {                                                                                                   \
    auto hcomm_a_ = (a);                                                                                 \
    auto hcomm_b_ = (b);                                                                                 \
    if (!(hcomm_a_ == hcomm_b_))                                                                         \
      HCOMM_THROW(HCOMM_ERR_INTERNAL, "%s:%d: expected %s == %s, got %lld vs %lld", __FILE__, __LINE__, #a, \
                  #b, static_cast<long long>(hcomm_a_), static_cast<long long>(hcomm_b_));               \
  } while (0)
#define HCOMM_ENFORCE(cond, ...)                                     \
  do {                                                               \
    if (!(cond)) HCOMM_THROW(HCOMM_ERR_INTERNAL, __VA_ARGS__);       \
  } while (0)
