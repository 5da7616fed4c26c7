// Every HCOMM_* setting is declared once (name, type, default, doc, accepted
// range). Values come from the environment and are checked in one place,
// check(), at start: a value that does not parse or lies outside its range is
// an error naming the variable, the value and what is accepted; unknown
// HCOMM_* names draw a warning that suggests the nearest declared name.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "hcomm/plugin/plugin.h"

namespace hcomm::settings {

struct Decl {
  std::string name;
  hcomm_setting_type_t type;
  std::string default_value;
  std::string doc;
  std::string owner;  // "core" or the plugin's name
  // The accepted range, checked with the type by check(): for INT, SIZE and
  // DOUBLE the smallest and largest value in the setting's own syntax (empty:
  // unbounded); for any type, the accepted values (compared without case;
  // empty: any value of the type).
  std::string min = "";
  std::string max = "";
  std::vector<std::string> values = {};
  // For STRING settings with a grammar: true if the text is acceptable, and
  // the accepted forms for the error message.
  std::function<bool(const std::string&)> check = nullptr;
  std::string accepted = "";
};

// The core's own settings and those the loaded plugins declared.
const std::vector<Decl>& all();
void declare(const Decl& decl);  // plugins' settings, at load
// A plugin that was found but not loaded (HCOMM_TRANSPORTS leaves it out):
// the settings under its prefix (HCOMM_<NAME>_) are neither checked nor
// called unknown until it declares them.
void declare_dormant(const std::string& plugin_name);

// Declared, or under the prefix of a plugin found but not loaded: a name
// communicators do not call unknown.
bool known(const std::string& name);

// The raw value (environment, else default); the name must be declared.
std::string raw(const char* name);
// Each reads the value and checks it as check() does.
int64_t get_int(const char* name);
uint64_t get_size(const char* name);
bool get_bool(const char* name);
double get_double(const char* name);
std::string get_string(const char* name);

// What the setting accepts, in words: "an integer from 1 to 16", "one of
// auto, on, off"; hcomm-info prints it and errors quote it.
std::string accepted(const Decl& decl);
// Throws HCOMM_ERR_CONFIG unless `value` parses as the setting's type and
// lies in its range; the text names `label` (the variable, or the field that
// stands for it), the value and what is accepted.
void check(const Decl& decl, const std::string& value, const std::string& label);
void check(const char* name, const std::string& value, const std::string& label);

// Checks every declared setting that is set, and warns about unknown HCOMM_*
// names (suggesting the nearest declared one); with an owner, only the
// settings under that plugin's prefix. Throws HCOMM_ERR_CONFIG on the first
// bad value.
void validate();
void validate(const std::string& owner);

// The declared name nearest to `name` (edit distance), or "" if none is
// near enough to be a likely misspelling.
std::string nearest(const std::string& name);

// Parsers, exposed for tests and for the parts that check strings themselves.
bool parse_int(const std::string& text, int64_t* out);
bool parse_size(const std::string& text, uint64_t* out);  // 64, 4K, 1M, 2G (powers of 1024)
bool parse_bool(const std::string& text, bool* out);
bool parse_double(const std::string& text, double* out);

}  // namespace hcomm::settings
