// hcomm-info: the plugins HComm finds (name, kind, ABI, version, path, load
// status or error) and every setting with its default, value, doc and the
// values it accepts, for people or (--parsable) for scripts. It checks every
// HCOMM_* setting that is set as communicator creation would, reports each
// bad one and then exits 1; HCOMM_* names it does not know (communicators
// ignore them) it reports with the nearest known name, a likely misspelling.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>
#include <unistd.h>

#include "common/command_line.hpp"
#include "hcomm/hcomm.h"
#include "hcomm/plugin/plugin.h"

namespace {

// The library's own version (the one this program runs with), "0.2.0".
std::string library_version() {
  int v = 0;
  if (hcomm_get_version(&v) != HCOMM_SUCCESS) return "unknown";
  return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
}

std::string plugin_abi() {
  return std::to_string(HCOMM_PLUGIN_ABI_MAJOR) + "." + std::to_string(HCOMM_PLUGIN_ABI_MINOR);
}

std::string version_line() { return "HComm " + library_version() + ", plugin ABI " + plugin_abi(); }

std::string plugin_abi_of(const hcomm_plugin_desc_t& p) {
  return p.vendor ? std::to_string(p.abi_major) + "." + std::to_string(p.abi_minor) : "";
}

void print_plugins() {
  int n = hcomm_plugin_count();
  std::printf("Plugins (%d found):\n", n);
  std::printf("  %-10s %-12s %-8s %-5s %-8s %s\n", "KIND", "NAME", "VERSION", "ABI", "STATUS", "PATH");
  for (int i = 0; i < n; ++i) {
    hcomm_plugin_desc_t p;
    if (hcomm_plugin_get(i, &p) != HCOMM_SUCCESS) continue;
    std::string abi = plugin_abi_of(p);
    std::printf("  %-10s %-12s %-8s %-5s %-8s %s\n", p.kind, p.name, p.version ? p.version : "-",
                abi.empty() ? "-" : abi.c_str(), p.status == HCOMM_SUCCESS ? "loaded" : "error", p.file);
    if (p.status != HCOMM_SUCCESS) std::printf("      error: %s\n", p.error);
    if (p.provides && *p.provides) std::printf("      algorithms: %s\n", p.provides);
  }
}

void print_settings() {
  int n = hcomm_setting_count();
  std::printf("\nSettings (%d):\n", n);
  for (int i = 0; i < n; ++i) {
    hcomm_setting_desc_t s;
    if (hcomm_setting_get(i, &s) != HCOMM_SUCCESS) continue;
    const char* accepted = hcomm_setting_accepted(i);
    std::printf("  %-24s %-7s default '%s'%s%s%s  [%s]\n      %s\n      accepts %s\n", s.name, s.type, s.default_value,
                s.value ? ", set to '" : "", s.value ? s.value : "", s.value ? "'" : "", s.owner, s.doc,
                accepted ? accepted : "?");
  }
}

// --parsable: one `key:value` line per fact, as ompi_info --parsable. The
// key's fields are separated by ':' and never contain one; the value is the
// rest of the line, on one line.
void parsable(const std::string& key, const char* value) {
  std::string text = value ? value : "";
  for (char& c : text)
    if (c == '\n') c = ' ';
  std::printf("%s:%s\n", key.c_str(), text.c_str());
}

void print_parsable() {
  parsable("version", library_version().c_str());
  parsable("plugin_abi", plugin_abi().c_str());
  for (int i = 0, n = hcomm_plugin_count(); i < n; ++i) {
    hcomm_plugin_desc_t p;
    if (hcomm_plugin_get(i, &p) != HCOMM_SUCCESS) continue;
    const std::string key = std::string("plugin:") + p.kind + ":" + p.name + ":";
    parsable(key + "version", p.version);
    parsable(key + "abi", plugin_abi_of(p).c_str());
    parsable(key + "status", p.status == HCOMM_SUCCESS ? "loaded" : "error");
    parsable(key + "path", p.file);
    if (p.status != HCOMM_SUCCESS) parsable(key + "error", p.error);
    if (p.provides && *p.provides) parsable(key + "algorithms", p.provides);
  }
  for (int i = 0, n = hcomm_setting_count(); i < n; ++i) {
    hcomm_setting_desc_t s;
    if (hcomm_setting_get(i, &s) != HCOMM_SUCCESS) continue;
    const std::string key = std::string("setting:") + s.name + ":";
    parsable(key + "type", s.type);
    parsable(key + "owner", s.owner);
    parsable(key + "default", s.default_value);
    parsable(key + "value", s.value ? s.value : s.default_value);
    parsable(key + "source", s.value ? "environment" : "default");
    parsable(key + "accepts", hcomm_setting_accepted(i));
    parsable(key + "doc", s.doc);
  }
}

// Checks every setting that is set; reports each bad one on stderr (and, for
// scripts, as setting:NAME:error). Returns how many were bad.
int check_settings(bool as_parsable) {
  int bad = 0;
  for (int i = 0, n = hcomm_setting_count(); i < n; ++i) {
    if (hcomm_setting_check(i) == HCOMM_SUCCESS) continue;
    ++bad;
    const std::string error = hcomm_get_last_error();
    std::fprintf(stderr, "hcomm-info: bad setting: %s\n", error.c_str());
    hcomm_setting_desc_t s;
    if (as_parsable && hcomm_setting_get(i, &s) == HCOMM_SUCCESS)
      parsable(std::string("setting:") + s.name + ":error", error.c_str());
  }
  if (bad)
    std::fprintf(stderr, "hcomm-info: %d setting%s with a bad value: communicators would not start\n", bad,
                 bad == 1 ? "" : "s");
  return bad;
}

// Reports the HCOMM_* variables of the environment that name no setting
// (and, for scripts, setting:NAME:unknown with the nearest known name).
void report_unknown(bool as_parsable) {
  for (char** e = environ; *e; ++e) {
    const std::string entry = *e;
    if (entry.rfind("HCOMM_", 0) != 0) continue;
    const std::string name = entry.substr(0, entry.find('='));
    const char* nearest = nullptr;
    if (hcomm_setting_known(name.c_str(), &nearest) != 0) continue;
    if (nearest)
      std::fprintf(stderr, "hcomm-info: unknown setting %s (communicators ignore it): did you mean %s?\n",
                   name.c_str(), nearest);
    else
      std::fprintf(stderr, "hcomm-info: unknown setting %s (communicators ignore it)\n", name.c_str());
    if (as_parsable) parsable("setting:" + name + ":unknown", nearest ? nearest : "");
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app;
  hcomm::tools::describe(app, "hcomm-info",
                         "Lists the plugins HComm finds and every HCOMM_* setting, and checks the settings that "
                         "are set (exit 1 if one has a bad value).");
  bool as_parsable = false;
  app.add_flag("--parsable,--parseable", as_parsable,
               "One key:value line per fact (version, plugin_abi, plugin:KIND:NAME:FIELD, setting:NAME:FIELD)");
  app.set_version_flag("--version", version_line, "Print HComm's version and plugin ABI and exit");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return hcomm::tools::parse_error_exit(app, e);
  }
  if (as_parsable) {
    print_parsable();
  } else {
    std::printf("%s\n\n", version_line().c_str());
    print_plugins();
    print_settings();
  }
  report_unknown(as_parsable);
  std::fflush(stdout);
  return check_settings(as_parsable) ? 1 : 0;
}
