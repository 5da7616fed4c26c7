// The transport plugins as the core uses them: filtered and ordered by
// HCOMM_TRANSPORTS, each loaded and initialised once per process when first
// admitted.
#pragma once

#include <string>
#include <vector>

#include "hcomm/plugin/transport.h"

namespace hcomm::transport {

class Transport {
 public:
  Transport(const hcomm_plugin_header_t* header, const std::string& path);
  ~Transport();
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;

  const std::string& name() const { return name_; }
  const hcomm_transport_v1_t& iface() const { return *iface_; }
  void* ctx() const { return ctx_; }
  const hcomm_transport_props_t& props() const { return props_; }
  bool has_wait() const { return HCOMM_IFACE_HAS(iface_, wait); }
  // ABI 1.1: memory other ranks of the host map (all five functions), and
  // single copies by address (ep_read and ep_write).
  bool maps_memory() const;
  bool copies_by_address() const { return HCOMM_IFACE_HAS(iface_, ep_read) && HCOMM_IFACE_HAS(iface_, ep_write); }
  // Throws Error(rc, "<transport>: <what>: <the plugin's text>") unless rc is success.
  void check(hcomm_result_t rc, const char* what) const;

 private:
  std::string name_;
  const hcomm_transport_v1_t* iface_;
  void* ctx_ = nullptr;
  hcomm_transport_props_t props_{};
};

// HCOMM_TRANSPORTS: "a,b" (only these, in this order) or "^a,b" (all but these).
struct Filter {
  bool exclude = false;
  std::vector<std::string> names;
};
// Throws HCOMM_ERR_CONFIG, naming `label`, for text that does not parse or
// names a transport whose plugin was not found (the message lists those found).
Filter parse_filter(const std::string& text, const char* label = "HCOMM_TRANSPORTS");

struct Allowed {
  std::vector<Transport*> transports;
  bool ordered;  // true: the user's order is the preference, else link scores decide
};
// The transports `spec` allows (HCOMM_TRANSPORTS grammar; the communicator's
// list, its config or the environment), each started on first use; throws
// if it names one that is not loaded, or if none is left.
Allowed allowed(const std::string& spec);

// The names of the transports `spec` allows, comma separated ("shm,tcp"): a
// list of names as it is, else the loaded ones it leaves in. Starts none.
// Tune files record what they were measured over in these words.
std::string allowed_names(const std::string& spec);

// The first loaded transport that maps memory (hcomm_mem_alloc), or nullptr.
Transport* memory_transport();

}  // namespace hcomm::transport
