// What the tools' command lines share on top of CLI11: validators whose
// errors say what was wrong and what is accepted, switches that take no
// value, and one way to end on a command line that did not parse.
#pragma once

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace hcomm::tools {

// The exit status of a command line that cannot run, in every tool.
inline constexpr int kExitUsage = 2;

// A validator's message: "expected <what>, got '<text>'".
inline std::string expected(const std::string& what, const std::string& text) {
  return "expected " + what + ", got '" + text + "'";
}

// "a, b, c".
inline std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

// An integer from `min` to `max` in decimal digits (a '-' only before a
// negative one). A transform: it writes the value back plainly, for CLI11
// reads integers as C does ("010" is octal there).
inline CLI::Validator integer_in(long long min, long long max) {
  return CLI::Validator(
      [min, max](std::string& text) -> std::string {
        long long value = 0;
        const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (error != std::errc() || end != text.data() + text.size() || value < min || value > max)
          return expected("an integer from " + std::to_string(min) + " to " + std::to_string(max), text);
        text = std::to_string(value);
        return {};
      },
      "");
}

// A finite number, the whole text ("2.5", "1e3"); nothing where it is none.
inline std::optional<double> parse_number(const std::string& text) {
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || errno != 0 || !std::isfinite(value)) return std::nullopt;
  return value;
}

// A number (parse_number) above `low` (or from it, where `low_included`) and
// at most `high`; `what` says so in the error ("seconds from 1 to 3600").
inline CLI::Validator number_in(double low, bool low_included, double high, std::string what) {
  return CLI::Validator(
      [low, low_included, high, what = std::move(what)](std::string& text) -> std::string {
        const std::optional<double> value = parse_number(text);
        const bool above_low = value && (low_included ? *value >= low : *value > low);
        return above_low && *value <= high ? "" : expected(what, text);
      },
      "");
}

// An option of integers from `min` to `max` (integer_in), shown as `type`.
template <class T>
CLI::Option* add_integer(CLI::App& app, const std::string& names, T& target, long long min, long long max,
                         const std::string& type, const std::string& doc) {
  return app.add_option(names, target, doc)->type_name(type)->transform(integer_in(min, max));
}

// One of `names`, as written.
inline CLI::Validator one_of(std::vector<std::string> names) {
  return CLI::Validator(
      [names = std::move(names)](std::string& text) -> std::string {
        for (const std::string& name : names)
          if (name == text) return {};
        return expected("one of " + join(names), text);
      },
      "");
}

// Any text but the empty one; `what` says what the option names.
inline CLI::Validator non_empty(std::string what) {
  return CLI::Validator(
      [what = std::move(what)](std::string& text) -> std::string { return text.empty() ? expected(what, text) : ""; },
      "");
}

// "a,b,c" into its items, empty ones included.
inline std::vector<std::string> split_list(std::string_view text) {
  std::vector<std::string> items;
  for (size_t start = 0; start <= text.size();) {
    const size_t end = std::min(text.find(',', start), text.size());
    items.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  return items;
}

// Some of `names` separated by commas, or `whole` alone where it is given
// (as "all").
inline CLI::Validator list_of(std::vector<std::string> names, std::string whole = "") {
  return CLI::Validator(
      [names = std::move(names), whole = std::move(whole)](std::string& text) -> std::string {
        if (!whole.empty() && text == whole) return {};
        for (const std::string& item : split_list(text)) {
          if (std::find(names.begin(), names.end(), item) != names.end()) continue;
          const std::string accepted =
              (whole.empty() ? "" : whole + ", or ") + "some of " + join(names) + " separated by commas";
          return expected(accepted, text) + (item.empty() ? ": an empty name" : ": '" + item + "' is none of them");
        }
        return {};
      },
      "");
}

// A flag that takes no value: CLI11's flags take one by default
// ("--inplace=false"); these refuse it, as the tools always have.
// `names` may pair a flag with its opposite: "--check,!--no-check".
inline CLI::Option* add_switch(CLI::App& app, const std::string& names, bool& target, const std::string& doc) {
  return app.add_flag(names, target, doc)->disable_flag_override();
}

// A parse error's text: CLI11's own, but for a switch given a value, which
// CLI11 reports by its bare name as "NAME was given a disallowed flag override".
inline std::string parse_error_text(const CLI::Error& e) {
  const std::string text = e.what();
  constexpr std::string_view kOverride = " was given a disallowed flag override";
  if (!text.ends_with(kOverride)) return text;
  const std::string name = text.substr(0, text.size() - kOverride.size());
  return (name.size() == 1 ? "-" : "--") + name + " takes no value";
}

// `text` with its lines longer than `width` broken at spaces (a longer word
// stands alone), the lines a break makes indented by `indent` spaces;
// shorter lines, tables among them, stay as they are.
inline std::string wrap(const std::string& text, size_t width, size_t indent = 0) {
  std::string out;
  for (size_t start = 0; start <= text.size();) {
    const size_t end = std::min(text.find('\n', start), text.size());
    std::string_view line(text.data() + start, end - start);
    for (size_t room = width; line.size() > room; room = width - indent) {
      size_t cut = line.rfind(' ', room);
      if (cut == std::string_view::npos || cut == 0) cut = line.find(' ', room);
      if (cut == std::string_view::npos) break;
      out.append(line.substr(0, cut)).append("\n").append(indent, ' ');
      line.remove_prefix(cut + 1);
    }
    out.append(line);
    if (end < text.size()) out += '\n';
    start = end + 1;
  }
  return out;
}

// CLI11's help with its texts wrapped to 80 columns, which CLI11 2.1 leaves
// to the author; the options' descriptions start at its column width.
class Formatter : public CLI::Formatter {
 public:
  static constexpr size_t kWidth = 80;

  std::string make_description(const CLI::App* app) const override {
    return wrap(CLI::Formatter::make_description(app), kWidth);
  }
  std::string make_footer(const CLI::App* app) const override { return wrap(CLI::Formatter::make_footer(app), kWidth); }
  std::string make_option_desc(const CLI::Option* opt) const override {
    return wrap(CLI::Formatter::make_option_desc(opt), kWidth - get_column_width());
  }
};

// A tool's name and the texts its --help prints before and after the options.
inline void describe(CLI::App& app, const std::string& name, const std::string& description,
                     const std::string& footer = "") {
  app.name(name);
  app.description(description);
  app.footer(footer);
  app.formatter(std::make_shared<Formatter>());
}

// "<tool>: <message>" and where to find the options, on stderr; returns kExitUsage.
inline int usage_error(const CLI::App& app, const std::string& message) {
  const std::string& tool = app.get_name();
  std::fprintf(stderr, "%s: %s\nRun %s --help for the options.\n", tool.c_str(), message.c_str(), tool.c_str());
  return kExitUsage;
}

// Ends a command line that did not parse: --help and --version print on
// stdout and give 0; an error gives usage_error's line and kExitUsage.
inline int parse_error_exit(const CLI::App& app, const CLI::ParseError& e) {
  if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);
  return usage_error(app, parse_error_text(e));
}

}  // namespace hcomm::tools
