#include "core/topology/json.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>

#include "core/common/error.hpp"

namespace hcomm::topology::json {

namespace {

constexpr int kMaxDepth = 64;

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  Value document() {
    Value v = value(0);
    skip_space();
    if (pos_ < text_.size()) fail("unexpected text after the end of the document");
    return v;
  }

 private:
  [[noreturn]] void fail(const char* what) const {
    int line = 1, column = 1;
    for (size_t i = 0; i < pos_ && i < text_.size(); ++i) {
      if (text_[i] == '\n')
        ++line, column = 1;
      else
        ++column;
    }
    HCOMM_THROW(HCOMM_ERR_CONFIG, "line %d, column %d: %s", line, column, what);
  }

  void skip_space() {
    while (pos_ < text_.size() &&
           (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\r' || text_[pos_] == '\n'))
      ++pos_;
  }

  bool eat(char c) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == c) return ++pos_, true;
    return false;
  }

  bool eat_word(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }

  Value value(int depth) {
    if (depth > kMaxDepth) fail("nesting deeper than 64 levels");
    skip_space();
    if (pos_ >= text_.size()) fail("expected a value, found the end of the text");
    const char c = text_[pos_];
    if (c == '{') return object(depth);
    if (c == '[') return array(depth);
    if (c == '"') return string();
    if (eat_word("true")) return true;
    if (eat_word("false")) return false;
    if (eat_word("null")) return nullptr;
    if (c == '-' || (c >= '0' && c <= '9')) return number();
    fail("expected a value (object, array, string, number, true, false or null)");
  }

  Value object(int depth) {
    ++pos_;
    Object members;
    if (eat('}')) return members;
    do {
      skip_space();
      if (pos_ >= text_.size() || text_[pos_] != '"') fail("expected a member name in double quotes");
      std::string key = string();
      if (!eat(':')) fail("expected ':' after the member name");
      members.emplace_back(std::move(key), value(depth + 1));
    } while (eat(','));
    if (!eat('}')) fail("expected ',' or '}' after an object member");
    return members;
  }

  Value array(int depth) {
    ++pos_;
    Array items;
    if (eat(']')) return items;
    do items.push_back(value(depth + 1));
    while (eat(','));
    if (!eat(']')) fail("expected ',' or ']' after an array element");
    return items;
  }

  std::string string() {
    ++pos_;
    std::string out;
    for (;;) {
      if (pos_ >= text_.size()) fail("unterminated string");
      const char c = text_[pos_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) --pos_, fail("control character in a string (escape it)");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= text_.size()) fail("unterminated string");
      const char e = text_[pos_++];
      switch (e) {
        case '"':
        case '\\':
        case '/':
          out += e;
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u':
          out += unicode_escape();
          break;
        default:
          --pos_, fail("unknown escape in a string");
      }
    }
  }

  // \uXXXX as UTF-8; topology files hold names, so surrogate pairs are not combined.
  std::string unicode_escape() {
    unsigned code = 0;
    auto [end, ec] = std::from_chars(text_.data() + pos_, text_.data() + std::min(pos_ + 4, text_.size()), code, 16);
    if (ec != std::errc() || end != text_.data() + pos_ + 4) fail("expected four hex digits after \\u");
    pos_ += 4;
    std::string out;
    if (code < 0x80) {
      out += static_cast<char>(code);
    } else if (code < 0x800) {
      out += static_cast<char>(0xC0 | (code >> 6));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else {
      out += static_cast<char>(0xE0 | (code >> 12));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    }
    return out;
  }

  Value number() {
    const size_t start = pos_;
    if (text_[pos_] == '-') ++pos_;
    auto digits = [&] {
      const size_t from = pos_;
      while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') ++pos_;
      return pos_ > from;
    };
    if (!digits()) fail("expected digits in a number");
    if (pos_ < text_.size() && text_[pos_] == '.' && (++pos_, !digits())) fail("expected digits after '.'");
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      ++pos_;
      if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
      if (!digits()) fail("expected digits in the exponent");
    }
    double v = 0;
    auto [end, ec] = std::from_chars(text_.data() + start, text_.data() + pos_, v);
    if (ec != std::errc() || end != text_.data() + pos_ || !std::isfinite(v)) pos_ = start, fail("number out of range");
    return v;
  }

  std::string_view text_;
  size_t pos_ = 0;
};

void write_string(std::string& out, const std::string& s) {
  out += '"';
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

bool scalar(const Value& v) { return !v.is<Array>() && !v.is<Object>(); }

// Scalars, or a container of scalars and containers of scalars: one line.
bool flat(const Value& v) {
  auto shallow = [](const Value& c) {
    if (const Array* a = c.as<Array>()) return std::all_of(a->begin(), a->end(), scalar);
    if (const Object* o = c.as<Object>())
      return std::all_of(o->begin(), o->end(), [](const auto& m) { return scalar(m.second); });
    return true;
  };
  if (const Array* a = v.as<Array>()) return std::all_of(a->begin(), a->end(), shallow);
  if (const Object* o = v.as<Object>())
    return std::all_of(o->begin(), o->end(), [&](const auto& m) { return shallow(m.second); });
  return true;
}

void write_value(std::string& out, const Value& v, int indent) {
  const bool one_line = flat(v);
  const std::string pad = one_line ? "" : "\n" + std::string(2 * (indent + 1), ' ');
  const std::string close = one_line ? "" : "\n" + std::string(2 * indent, ' ');
  const char* sep = one_line ? ", " : ",";
  if (v.is<std::nullptr_t>()) {
    out += "null";
  } else if (const bool* b = v.as<bool>()) {
    out += *b ? "true" : "false";
  } else if (const double* d = v.as<double>()) {
    char buf[32];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, *d);
    out.append(buf, ec == std::errc() ? end : buf);
  } else if (const std::string* s = v.as<std::string>()) {
    write_string(out, *s);
  } else if (const Array* a = v.as<Array>()) {
    out += '[';
    for (size_t i = 0; i < a->size(); ++i) {
      out += (i ? sep : "") + pad;
      write_value(out, (*a)[i], indent + 1);
    }
    out += (a->empty() ? "" : close) + "]";
  } else if (const Object* o = v.as<Object>()) {
    out += '{';
    for (size_t i = 0; i < o->size(); ++i) {
      out += (i ? sep : "") + pad;
      write_string(out, (*o)[i].first);
      out += ": ";
      write_value(out, (*o)[i].second, indent + 1);
    }
    out += (o->empty() ? "" : close) + "}";
  }
}

}  // namespace

const Value* Value::find(std::string_view key) const {
  if (const Object* o = as<Object>())
    for (const auto& [k, v] : *o)
      if (k == key) return &v;
  return nullptr;
}

Value parse(std::string_view text) { return Parser(text).document(); }

std::string write(const Value& value) {
  std::string out;
  write_value(out, value, 0);
  return out + "\n";
}

}  // namespace hcomm::topology::json
