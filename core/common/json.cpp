#include "core/common/json.hpp"

#include <algorithm>
#include <charconv>
#include <clocale>
#include <cmath>
#include <cstdlib>

#include "core/common/error.hpp"

namespace hcomm::json {

namespace {

using Json = nlohmann::ordered_json;

constexpr const char* kNul = "a NUL byte (JSON text holds none)";

[[noreturn]] void fail_at(std::string_view text, size_t offset, const std::string& what) {
  int line = 1, column = 1;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n')
      line += 1, column = 1;
    else
      ++column;
  }
  HCOMM_THROW(HCOMM_ERR_CONFIG, "line %d, column %d: %s", line, column, what.c_str());
}

// nlohmann's message without its prefix ("[json.exception.parse_error.101]
// parse error at line 1, column 6: "): what was wrong.
std::string reason(const Json::exception& e) {
  const std::string_view what = e.what();
  const size_t colon = what.find(": ", what.find("parse error"));
  return std::string(colon == std::string_view::npos ? what : what.substr(colon + 2));
}

// The faults nlohmann reports without a position: a bracket nested deeper
// than kMaxDepth (this file's parse callback) and a number beyond a
// double's range. The text is JSON up to the fault, so a scan of brackets
// and numbers outside strings finds it.
[[noreturn]] void fail_at_fault(std::string_view text, const char* fallback) {
  int open = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') {
      while (++i < text.size() && text[i] != '"')
        if (text[i] == '\\') ++i;
    } else if (c == '[' || c == '{') {
      if (open++ == kMaxDepth) fail_at(text, i, "nesting deeper than 64 levels");
    } else if (c == ']' || c == '}') {
      --open;
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      const size_t end = std::min(text.find_first_not_of("0123456789+-.eE", i), text.size());
      std::string number(text.substr(i, end - i));
      std::replace(number.begin(), number.end(), '.', *std::localeconv()->decimal_point);  // as nlohmann's lexer does
      if (!std::isfinite(std::strtod(number.c_str(), nullptr))) fail_at(text, i, "number out of range");
      i = end - 1;
    }
  }
  fail_at(text, text.size(), fallback);
}

bool scalar(const Json& v) { return !v.is_structured(); }

// A scalar, or an array or object of scalars.
bool shallow(const Json& v) { return scalar(v) || std::all_of(v.begin(), v.end(), scalar); }

void write_scalar(std::string& out, const Json& v) {
  if (!v.is_number_float()) {
    out += v.dump(-1, ' ', false, Json::error_handler_t::replace);
    return;
  }
  const double d = v.get<double>();
  if (!std::isfinite(d)) {
    out += "null";
  } else if (d == 0) {
    out += '0';  // also for -0, which reads back as the integer 0
  } else {
    char buf[32];
    const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, d);
    out.append(buf, ec == std::errc() ? end : buf);
  }
}

void write_value(std::string& out, const Json& v, int indent) {
  if (scalar(v)) return write_scalar(out, v);
  const bool one_line = indent > 0 && std::all_of(v.begin(), v.end(), shallow);
  const std::string pad = one_line ? "" : "\n" + std::string(2 * (indent + 1), ' ');
  const std::string close = one_line || v.empty() ? "" : "\n" + std::string(2 * indent, ' ');
  out += v.is_object() ? '{' : '[';
  for (auto it = v.begin(); it != v.end(); ++it) {
    out += (it == v.begin() ? "" : one_line ? ", " : ",") + pad;
    if (v.is_object()) {
      write_scalar(out, it.key());
      out += ": ";
    }
    write_value(out, *it, indent + 1);
  }
  out += close + (v.is_object() ? '}' : ']');
}

}  // namespace

Json parse(std::string_view text) {
  // nlohmann stops at a NUL byte as at the end of the text.
  const size_t end = std::min(text.find('\0'), text.size());
  Json document;
  try {
    document = Json::parse(text.begin(), text.begin() + end, [text](int depth, Json::parse_event_t event, Json&) {
      if (depth >= kMaxDepth &&
          (event == Json::parse_event_t::object_start || event == Json::parse_event_t::array_start))
        fail_at_fault(text, "nesting deeper than 64 levels");
      return true;
    });
  } catch (const Json::parse_error& e) {
    const size_t at = e.byte > 0 ? e.byte - 1 : 0;  // e.byte counts the characters read, the wrong one last
    fail_at(text, at, at == end && end < text.size() ? kNul : reason(e));
  } catch (const Json::exception& e) {
    fail_at_fault(text, e.what());
  }
  if (end < text.size()) fail_at(text, end, kNul);
  return document;
}

std::string write(const Json& value) {
  std::string out;
  write_value(out, value, 0);
  return out + "\n";
}

}  // namespace hcomm::json
