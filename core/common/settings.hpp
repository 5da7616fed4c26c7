// Every HCOMM_* setting is declared once (name, type, default, doc). Values
// come from the environment, are validated at start (a value that does not
// parse is an error naming the variable and the accepted values) and unknown
// HCOMM_* names draw a warning.
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
  // For STRING settings with a grammar: true if the text is acceptable, and
  // the accepted forms for the error message.
  std::function<bool(const std::string&)> check = nullptr;
  std::string accepted = "";
};

// The core's own settings and those the loaded plugins declared.
const std::vector<Decl>& all();
void declare(const Decl& decl);  // plugins' settings, at load

// The raw value (environment, else default); the name must be declared.
std::string raw(const char* name);
int64_t get_int(const char* name);
uint64_t get_size(const char* name);
bool get_bool(const char* name);
double get_double(const char* name);
std::string get_string(const char* name);

// Checks every declared setting that is set and warns about unknown HCOMM_*
// names; throws HCOMM_ERR_CONFIG on the first value that does not parse.
void validate();

// Parsers, exposed for tests and for the parts that check strings themselves.
bool parse_int(const std::string& text, int64_t* out);
bool parse_size(const std::string& text, uint64_t* out);  // 64, 4K, 1M, 2G (powers of 1024)
bool parse_bool(const std::string& text, bool* out);
bool parse_double(const std::string& text, double* out);

}  // namespace hcomm::settings
