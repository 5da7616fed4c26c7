// hcomm-info: the plugins HComm finds (name, kind, ABI, version, path, load
// status or error) and every setting with its default, value, doc and the
// values it accepts.
#include <cstdio>
#include <cstring>
#include <string>

#include "hcomm/hcomm.h"
#include "hcomm/plugin/plugin.h"

namespace {

void print_plugins() {
  int n = hcomm_plugin_count();
  std::printf("Plugins (%d found):\n", n);
  std::printf("  %-10s %-12s %-8s %-5s %-8s %s\n", "KIND", "NAME", "VERSION", "ABI", "STATUS", "PATH");
  for (int i = 0; i < n; ++i) {
    hcomm_plugin_desc_t p;
    if (hcomm_plugin_get(i, &p) != HCOMM_SUCCESS) continue;
    std::string abi = p.vendor ? std::to_string(p.abi_major) + "." + std::to_string(p.abi_minor) : "-";
    std::printf("  %-10s %-12s %-8s %-5s %-8s %s\n", p.kind, p.name, p.version ? p.version : "-", abi.c_str(),
                p.status == HCOMM_SUCCESS ? "loaded" : "error", p.file);
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

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && (std::strcmp(argv[1], "-h") == 0 || std::strcmp(argv[1], "--help") == 0)) {
    std::printf("usage: hcomm-info\nLists the plugins HComm finds and every HCOMM_* setting.\n");
    return 0;
  }
  if (argc > 1) {
    std::fprintf(stderr, "hcomm-info: unexpected argument '%s' (try --help)\n", argv[1]);
    return 2;
  }
  std::printf("HComm %d.%d.%d, plugin ABI %d.%d\n\n", HCOMM_VERSION_MAJOR, HCOMM_VERSION_MINOR, HCOMM_VERSION_PATCH,
              HCOMM_PLUGIN_ABI_MAJOR, HCOMM_PLUGIN_ABI_MINOR);
  print_plugins();
  print_settings();
  return 0;
}
