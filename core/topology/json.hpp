// A small JSON reader and writer for topology files and hcomm-topo: values
// are kept in document order, numbers as doubles, and a parse error says on
// which line and column the text stops being JSON.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace hcomm::topology::json {

struct Value;
using Array = std::vector<Value>;
using Object = std::vector<std::pair<std::string, Value>>;

struct Value {
  std::variant<std::nullptr_t, bool, double, std::string, Array, Object> data = nullptr;

  Value() = default;
  Value(std::nullptr_t) {}
  Value(bool b) : data(b) {}
  Value(double d) : data(d) {}
  Value(int i) : data(static_cast<double>(i)) {}
  Value(uint64_t u) : data(static_cast<double>(u)) {}
  Value(const char* s) : data(std::string(s)) {}
  Value(std::string s) : data(std::move(s)) {}
  Value(Array a) : data(std::move(a)) {}
  Value(Object o) : data(std::move(o)) {}

  template <class T>
  bool is() const {
    return std::holds_alternative<T>(data);
  }
  template <class T>
  const T* as() const {
    return std::get_if<T>(&data);
  }
  // The member `key` of an object, or nullptr (also when this is no object).
  const Value* find(std::string_view key) const;
};

// Throws Error(HCOMM_ERR_CONFIG, "line L, column C: ...") where the text
// stops being one JSON value.
Value parse(std::string_view text);
// Indented by two spaces; an array or object of scalars (or of arrays of
// scalars) stays on one line, so that a matrix reads as rows.
std::string write(const Value& value);

}  // namespace hcomm::topology::json
