/* HComm plugin ABI, common part (version 1).
 *
 * A plugin is a shared library libhcomm_<kind>_<name>.so exporting one C
 * symbol, hcomm_plugin_v1, a function returning a pointer to a constant
 * hcomm_plugin_header_t. Interface structs start with their own size and only
 * ever grow at their end: a new function bumps the minor version, and the core
 * calls a function only if it lies inside the size the plugin reported. A new
 * major version exports hcomm_plugin_v2 beside hcomm_plugin_v1.
 *
 * Plugins include only these headers, never link the core, log through the
 * callback handed to init and never write to the process environment.
 */
#ifndef HCOMM_PLUGIN_H
#define HCOMM_PLUGIN_H

#include "hcomm/types.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HCOMM_PLUGIN_ABI_MAJOR 1
#define HCOMM_PLUGIN_ABI_MINOR 15
#define HCOMM_PLUGIN_SYMBOL "hcomm_plugin_v1"

typedef enum hcomm_plugin_kind {
  HCOMM_PLUGIN_TRANSPORT = 1,
  HCOMM_PLUGIN_ALGORITHM = 2,
  HCOMM_PLUGIN_DEVICE = 3
} hcomm_plugin_kind_t;

typedef enum hcomm_log_level {
  HCOMM_LOG_NONE = 0,
  HCOMM_LOG_WARN = 1,
  HCOMM_LOG_INFO = 2,
  HCOMM_LOG_DEBUG = 3,
  HCOMM_LOG_TRACE = 4
} hcomm_log_level_t;

typedef enum hcomm_setting_type {
  HCOMM_SETTING_INT = 0,    /* decimal integer */
  HCOMM_SETTING_SIZE = 1,   /* bytes, with optional K/M/G suffix (powers of 1024) */
  HCOMM_SETTING_BOOL = 2,   /* 0/1, true/false, yes/no, on/off */
  HCOMM_SETTING_DOUBLE = 3, /* decimal number */
  HCOMM_SETTING_STRING = 4  /* free text, checked by its user */
} hcomm_setting_type_t;

/* A setting a plugin reads; the core validates it when the plugin is loaded
 * (a bad value stops communicator creation, naming the setting, the value and
 * what it accepts) and hcomm-info lists it with its range. */
typedef struct hcomm_setting_decl {
  const char* name; /* full name, HCOMM_<PLUGIN>_... */
  hcomm_setting_type_t type;
  const char* default_value;
  const char* doc; /* one line */
  /* ABI 1.11 (read only where the header's setting_size covers them): the
   * accepted range. INT, SIZE, DOUBLE: the smallest and largest value, in the
   * setting's own syntax ("64K"); NULL: unbounded on that side. Any type:
   * the accepted values, comma separated, compared without case ("auto,on,off");
   * NULL: any value of the type. */
  const char* min;
  const char* max;
  const char* values;
} hcomm_setting_decl_t;

/* Services the core hands to a plugin's init. */
typedef struct hcomm_plugin_services {
  size_t size;
  /* Logs one line; subsys is one of INIT, NET, ALGO, TOPO, EXEC, PLUGIN. */
  void (*log)(hcomm_log_level_t level, const char* subsys, const char* message);
  /* Cheap check before formatting a message. */
  int (*log_enabled)(hcomm_log_level_t level, const char* subsys);
  /* The value of a declared setting (environment or default); never NULL. */
  const char* (*get_setting)(const char* name);
  /* Records the text of the error the plugin is about to return. */
  void (*set_error)(const char* message);
  /* ABI 1.13: the core's ABI minor version. A plugin built against a newer
   * one calls what later minors added only where this is at least theirs. */
  uint32_t abi_minor;
} hcomm_plugin_services_t;

typedef struct hcomm_plugin_header {
  size_t size; /* sizeof(hcomm_plugin_header_t) as the plugin was built */
  uint16_t abi_major;
  uint16_t abi_minor;
  hcomm_plugin_kind_t kind;
  const char* name;    /* matches <name> in the file name */
  const char* vendor;
  const char* version; /* the plugin's own version string */
  const hcomm_setting_decl_t* settings;
  size_t num_settings;
  const void* iface; /* hcomm_transport_v1_t, hcomm_algorithm_v1_t, ... by kind */
  /* ABI 1.11: sizeof(hcomm_setting_decl_t) as the plugin was built, the
   * distance between two entries of `settings`; a header without it has
   * entries of the four fields up to doc. */
  size_t setting_size;
} hcomm_plugin_header_t;

typedef const hcomm_plugin_header_t* (*hcomm_plugin_v1_fn)(void);

/* The size of one entry of h->settings: setting_size where the header has it,
 * else that of the entries of ABI 1.0 to 1.10; 0 for a header that has the
 * field but left it 0 (a plugin error the core reports). */
static inline size_t hcomm_plugin_setting_size(const hcomm_plugin_header_t* h) {
  if (h->size < offsetof(hcomm_plugin_header_t, setting_size) + sizeof(h->setting_size))
    return offsetof(hcomm_setting_decl_t, min);
  return h->setting_size;
}

/* Entry i of h->settings, whatever size of entry the plugin was built with;
 * its fields past `doc` may be read only where
 * HCOMM_SETTING_HAS(h, field) is true. */
static inline const hcomm_setting_decl_t* hcomm_plugin_setting(const hcomm_plugin_header_t* h, size_t i) {
  return (const hcomm_setting_decl_t*)((const char*)h->settings + i * hcomm_plugin_setting_size(h));
}
#define HCOMM_SETTING_HAS(h, field) \
  (hcomm_plugin_setting_size(h) >= offsetof(hcomm_setting_decl_t, field) + sizeof(((hcomm_setting_decl_t*)0)->field))

/* True if member `field` of the size-prefixed struct `s` lies inside the size
 * the plugin reported: call optional or newer functions only when it does. */
#define HCOMM_IFACE_HAS(s, field) \
  ((s)->size >= offsetof(__typeof__(*(s)), field) + sizeof((s)->field) && (s)->field != NULL)

#ifdef __cplusplus
}
#endif

#endif /* HCOMM_PLUGIN_H */
