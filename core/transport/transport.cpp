#include "core/transport/transport.hpp"

#include <algorithm>
#include <memory>
#include <mutex>

#include "core/common/error.hpp"
#include "core/common/log.hpp"
#include "core/common/settings.hpp"
#include "core/plugin/loader.hpp"
#include "core/plugin/services.hpp"

namespace hcomm::transport {

namespace {

bool all_mandatory(const hcomm_transport_v1_t* t) {
  return HCOMM_IFACE_HAS(t, init) && HCOMM_IFACE_HAS(t, finalize) && HCOMM_IFACE_HAS(t, properties) &&
         HCOMM_IFACE_HAS(t, open) && HCOMM_IFACE_HAS(t, close) && HCOMM_IFACE_HAS(t, address) &&
         HCOMM_IFACE_HAS(t, score) && HCOMM_IFACE_HAS(t, connect) && HCOMM_IFACE_HAS(t, ep_ready) &&
         HCOMM_IFACE_HAS(t, ep_close) && HCOMM_IFACE_HAS(t, isend) && HCOMM_IFACE_HAS(t, irecv) &&
         HCOMM_IFACE_HAS(t, test) && HCOMM_IFACE_HAS(t, progress);
}

// Every transport plugin found, each loaded and initialised the first time a
// communicator may use it: one that HCOMM_TRANSPORTS leaves out is never
// loaded (neither its libraries, their signal handlers and threads, nor its
// start-up cost).
struct Slot {
  const plugin::PluginInfo* info;
  std::unique_ptr<Transport> transport;
  bool tried = false;
};

std::mutex slots_mutex;

std::vector<Slot>& slots() {
  static std::vector<Slot> list = [] {
    std::vector<Slot> out;
    for (const plugin::PluginInfo& p : plugin::discovered())
      if (p.expected_kind == HCOMM_PLUGIN_TRANSPORT) out.push_back({.info = &p});
    return out;
  }();
  return list;
}

const std::string& name_of(const Slot& slot) { return slot.info->expected_name; }

// The slot's transport, loaded and initialised on first use; nullptr (logged)
// where the plugin does not load or start. A bad value of one of its settings
// is the user's to fix: it stops the communicator's creation.
Transport* started(Slot& slot) {
  if (!slot.tried) {
    slot.tried = true;
    const plugin::PluginInfo& info = plugin::load_transport(name_of(slot));
    if (!info.loaded()) return nullptr;  // the loader said why
    settings::validate(name_of(slot));
    try {
      slot.transport = std::make_unique<Transport>(info.header, info.path);
    } catch (const Error& e) {
      if (e.code() == HCOMM_ERR_CONFIG) {
        slot.tried = false;
        throw;
      }
      HCOMM_WARN(NET, "transport %s unusable: %s", name_of(slot).c_str(), e.what());
    }
  }
  return slot.transport.get();
}

bool admits(const Filter& f, const std::string& name) {
  const bool listed = std::find(f.names.begin(), f.names.end(), name) != f.names.end();
  return f.names.empty() || listed != f.exclude;
}

}  // namespace

Transport::Transport(const hcomm_plugin_header_t* header, const std::string& path)
    : name_(header->name), iface_(static_cast<const hcomm_transport_v1_t*>(header->iface)) {
  if (!all_mandatory(iface_)) {
    HCOMM_THROW(HCOMM_ERR_PLUGIN, "plugin %s: its transport interface lacks a mandatory function (size %zu)",
                path.c_str(), iface_->size);
  }
  check(iface_->init(plugin::services(), &ctx_), "init");
  props_.size = sizeof props_;
  check(iface_->properties(ctx_, &props_), "properties");
}

Transport::~Transport() {
  if (ctx_) iface_->finalize(ctx_);
}

bool Transport::maps_memory() const {
  return HCOMM_IFACE_HAS(iface_, mem_alloc) && HCOMM_IFACE_HAS(iface_, mem_register) &&
         HCOMM_IFACE_HAS(iface_, mem_release) && HCOMM_IFACE_HAS(iface_, mem_map) &&
         HCOMM_IFACE_HAS(iface_, mem_unmap);
}

void Transport::check(hcomm_result_t rc, const char* what) const {
  if (rc == HCOMM_SUCCESS) return;
  std::string text = last_error();
  if (text.empty()) text = "no detail given";
  // Plugins usually name themselves already ("tcp: connection ... lost").
  if (text.rfind(name_ + ":", 0) == 0) HCOMM_THROW(rc, "%s (%s)", text.c_str(), what);
  HCOMM_THROW(rc, "%s: %s: %s", name_.c_str(), what, text.c_str());
}

Filter parse_filter(const std::string& text, const char* label) {
  Filter f;
  size_t start = 0;
  if (!text.empty() && text[0] == '^') f.exclude = true, start = 1;
  while (start < text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    std::string name = text.substr(start, end - start);
    if (name.empty() || name.find('^') != std::string::npos)
      HCOMM_THROW(HCOMM_ERR_CONFIG,
                  "%s='%s' does not parse: expected names separated by commas, either all included "
                  "('shm,tcp') or all excluded ('^shm'); mixing include and exclude is not allowed",
                  label, text.c_str());
    f.names.push_back(name);
    start = end + 1;
  }
  if (f.exclude && f.names.empty())
    HCOMM_THROW(HCOMM_ERR_CONFIG, "%s='^' excludes nothing: name the transports to exclude", label);
  std::lock_guard lock(slots_mutex);
  std::string known;
  for (const Slot& s : slots()) known += (known.empty() ? "" : ", ") + name_of(s);
  for (const std::string& name : f.names)
    if (std::none_of(slots().begin(), slots().end(), [&](const Slot& s) { return name_of(s) == name; }))
      HCOMM_THROW(HCOMM_ERR_CONFIG,
                  "%s='%s' names transport '%s', which was not found: the transports found are %s (hcomm-info "
                  "lists them; HCOMM_PLUGIN_PATH adds folders)",
                  label, text.c_str(), name.c_str(), known.empty() ? "none" : known.c_str());
  return f;
}

std::string allowed_names(const std::string& spec) {
  const Filter f = parse_filter(spec);
  std::vector<std::string> names = f.names;
  if (f.exclude || f.names.empty()) {
    std::lock_guard lock(slots_mutex);
    names.clear();
    for (const Slot& s : slots())
      if (admits(f, name_of(s))) names.push_back(name_of(s));
  }
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ",") + n;
  return out;
}

Allowed allowed(const std::string& spec) {
  Filter f = parse_filter(spec);
  std::lock_guard lock(slots_mutex);
  auto& all = slots();
  std::string found;
  for (const Slot& s : all) found += (found.empty() ? "" : ", ") + name_of(s);
  Allowed out{{}, !f.exclude && !f.names.empty()};
  if (out.ordered) {
    for (const std::string& n : f.names) {
      auto slot = std::find_if(all.begin(), all.end(), [&](const Slot& s) { return n == name_of(s); });
      Transport* t = slot == all.end() ? nullptr : started(*slot);
      if (!t)
        HCOMM_THROW(HCOMM_ERR_CONFIG,
                    "the communicator's transports '%s' name transport '%s', which did not load or start (see "
                    "the warning above, or hcomm-info; the list comes from HCOMM_TRANSPORTS or "
                    "hcomm_config_t.transports)",
                    spec.c_str(), n.c_str());
      out.transports.push_back(t);
    }
  } else {
    for (Slot& s : all)
      if (admits(f, name_of(s)))
        if (Transport* t = started(s)) out.transports.push_back(t);
  }
  if (out.transports.empty())
    HCOMM_THROW(HCOMM_ERR_CONFIG,
                "the communicator's transports '%s' leave no transport to use (found: %s); see hcomm-info",
                spec.c_str(), found.empty() ? "none" : found.c_str());
  return out;
}

// One that already runs if any maps memory; else the first that does once
// started, of those HCOMM_TRANSPORTS admits.
Transport* memory_transport() {
  const Filter f = parse_filter(settings::get_string("HCOMM_TRANSPORTS"));
  std::lock_guard lock(slots_mutex);
  for (Slot& s : slots())
    if (s.transport && s.transport->maps_memory()) return s.transport.get();
  for (Slot& s : slots())
    if (admits(f, name_of(s)))
      if (Transport* t = started(s); t && t->maps_memory()) return t;
  return nullptr;
}

}  // namespace hcomm::transport
