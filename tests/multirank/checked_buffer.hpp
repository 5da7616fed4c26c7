// A buffer that knows what each of its elements must hold after a call: an
// expected result, its value from before the call (input the call only
// reads, and places the call must not touch), or anything (parts an in-place
// call may use freely). One guard element on either side catches writes past
// the ends. A result element starts as the complement of its expected bits
// and every untouched one as a canary byte that differs between buffers and
// ranks (so that a copy of another buffer's canary is caught too), so that
// nothing passes by accident.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "tools/hcomm-perf/values.hpp"

namespace hcomm::test {

class CheckedBuffer {
 public:
  CheckedBuffer() = default;
  CheckedBuffer(hcomm_dtype_t dtype, size_t elements)
      : dtype_(dtype),
        elem_size_(perf::element_size(dtype)),
        elements_(elements),
        bytes_((elements + 2) * elem_size_, next_canary()),
        expected_(bytes_),
        kinds_(elements + 2, Kind::Unchanged) {}

  // Canaries differ between the ranks that set theirs.
  static void set_rank(int rank) { rank_ = rank; }

  size_t elements() const { return elements_; }
  // The whole buffer with its guards, for copies to and from device memory.
  unsigned char* raw() { return bytes_.data(); }
  size_t raw_bytes() const { return bytes_.size(); }
  void* data(size_t offset = 0) { return bytes_.data() + (offset + 1) * elem_size_; }

  // Elements [offset, offset + n) must end as value(i), i counted from offset.
  template <class F>
  void expect(size_t offset, size_t n, F&& value) {
    perf::write_values(dtype_, expected_.data() + (offset + 1) * elem_size_, n, value);
    perf::write_complement(data(offset), expected_.data() + (offset + 1) * elem_size_, n * elem_size_);
    mark(offset, n, Kind::Result);
  }
  // Elements the call may leave as it likes.
  void ignore(size_t offset, size_t n) { mark(offset, n, Kind::Any); }
  // Input at [offset, offset + n); where no result is expected there, the call
  // must leave it as it is.
  template <class F>
  void write(size_t offset, size_t n, F&& value) {
    perf::write_values(dtype_, data(offset), n, value);
    for (size_t i = offset + 1; i < offset + 1 + n; ++i)
      if (kinds_[i] == Kind::Unchanged)
        std::memcpy(expected_.data() + i * elem_size_, bytes_.data() + i * elem_size_, elem_size_);
  }

  // "" when every element holds what it must, else what is wrong: how many
  // elements, and the first one with its value and the expected value.
  std::string check() const {
    if (std::memcmp(bytes_.data(), expected_.data(), bytes_.size()) == 0) return "";
    size_t wrong = 0, first = 0;
    for (size_t i = 0; i < kinds_.size(); ++i) {
      if (kinds_[i] == Kind::Any ||
          std::memcmp(bytes_.data() + i * elem_size_, expected_.data() + i * elem_size_, elem_size_) == 0)
        continue;
      if (wrong++ == 0) first = i;
    }
    if (wrong == 0) return "";
    return std::to_string(wrong) + " of " + std::to_string(elements_) + " elements wrong; " + describe(first) + " is " +
           value_text(bytes_, first) + ", expected " + value_text(expected_, first);
  }

 private:
  enum class Kind : uint8_t { Unchanged, Result, Any };

  static unsigned char next_canary() {
    static unsigned serial = 0;
    return static_cast<unsigned char>(0x5A + 37 * rank_ + 101 * serial++);
  }
  static inline int rank_ = 0;

  void mark(size_t offset, size_t n, Kind kind) {
    for (size_t i = offset + 1; i < offset + 1 + n; ++i) kinds_[i] = kind;
  }
  std::string describe(size_t i) const {
    if (i == 0) return "the guard element before the buffer";
    if (i == elements_ + 1) return "the guard element after the buffer";
    return std::string(kinds_[i] == Kind::Result ? "result" : "untouchable") + " element " + std::to_string(i - 1);
  }
  std::string value_text(const std::vector<unsigned char>& bytes, size_t i) const {
    char text[64];
    std::snprintf(text, sizeof text, "%.17g", perf::element_value(dtype_, bytes.data(), i));
    return text;
  }

  hcomm_dtype_t dtype_ = HCOMM_UINT8;
  size_t elem_size_ = 1;
  size_t elements_ = 0;
  std::vector<unsigned char> bytes_ = std::vector<unsigned char>(2, 0x5A);
  std::vector<unsigned char> expected_ = bytes_;
  std::vector<Kind> kinds_ = std::vector<Kind>(2, Kind::Unchanged);
};

}  // namespace hcomm::test
