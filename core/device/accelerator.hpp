// Accelerator memory through the device plugins (hcomm/plugin/device.h): the
// core never links a device runtime. The first device plugin that loads and
// sees a device serves every call; without one, no pointer is device memory.
#pragma once

#include <cstddef>

#include "hcomm/plugin/device.h"

namespace hcomm::device {

class Accelerator {
 public:
  // The accelerator of this process, or nullptr where no device plugin has a
  // device (found once, at the first call; inline, as every call asks).
  static const Accelerator* get() {
    static const Accelerator* const found = find();
    return found;
  }

  // Whether ptr is memory of the device (managed memory counts).
  bool owns(const void* ptr) const;
  const hcomm_device_v1_t& plugin() const { return *plugin_; }
  const char* name() const { return name_; }

  // Whether the plugin queues stream-ordered work (ABI 1.15's functions).
  bool streams() const { return HCOMM_IFACE_HAS(plugin_, capturing); }
  // Throws the plugin's error text, naming `what`, where rc is a failure.
  void check(hcomm_result_t rc, const char* what) const;

  // Calls the plugin; throws its error text where it fails.
  void copy(void* dst, const void* src, size_t bytes) const;
  void* alloc_pinned(size_t bytes) const;
  void free_pinned(void* ptr) const;
  // Device memory the host's other processes can map, at a 2 MiB boundary.
  void* alloc_shareable(size_t bytes) const;
  void free_shareable(void* ptr) const;
  // Host memory that stands for a device buffer during a blocking call:
  // pinned, at least `bytes`, one per thread and slot (0, 1), kept and grown.
  void* staging(size_t bytes, int slot) const;

 private:
  Accelerator(const hcomm_device_v1_t* plugin, const char* name) : plugin_(plugin), name_(name) {}
  static const Accelerator* find();
  const hcomm_device_v1_t* plugin_;
  const char* name_;
};

}  // namespace hcomm::device
