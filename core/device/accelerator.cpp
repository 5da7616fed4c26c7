#include "core/device/accelerator.hpp"

#include <memory>
#include <mutex>

#include "core/common/error.hpp"
#include "core/common/log.hpp"
#include "core/plugin/loader.hpp"
#include "core/plugin/services.hpp"

namespace hcomm::device {

namespace {

[[noreturn]] void fail(const char* what, const char* plugin) {
  HCOMM_THROW(HCOMM_ERR_SYSTEM, "device plugin %s: %s failed: %s", plugin, what, last_error());
}

}  // namespace

const Accelerator* Accelerator::find() {
  for (const plugin::PluginInfo* p : plugin::load_kind(HCOMM_PLUGIN_DEVICE)) {
    if (!p->loaded()) continue;
    auto* iface = static_cast<const hcomm_device_v1_t*>(p->header->iface);
    if (!HCOMM_IFACE_HAS(iface, synchronize)) {
      HCOMM_WARN(PLUGIN, "device plugin %s: interface too small (%zu bytes); skipped", p->header->name,
                 iface->size);
      continue;
    }
    if (iface->init(plugin::services()) != HCOMM_SUCCESS) {
      HCOMM_WARN(PLUGIN, "device plugin %s: init failed: %s; skipped", p->header->name, last_error());
      continue;
    }
    const int devices = iface->device_count();
    if (devices < 1) {
      HCOMM_INFO(PLUGIN, "device plugin %s: no device (%s)", p->header->name, last_error());
      continue;
    }
    HCOMM_INFO(PLUGIN, "device plugin %s: %d devices; their memory is staged through the host", p->header->name,
               devices);
    return new Accelerator(iface, p->header->name);
  }
  return nullptr;
}

bool Accelerator::owns(const void* ptr) const {
  if (!ptr) return false;
  hcomm_pointer_attr_t attr{.size = sizeof attr};
  return plugin_->pointer_attr(ptr, &attr) == HCOMM_SUCCESS && attr.mem_kind != HCOMM_MEM_HOST;
}

void Accelerator::check(hcomm_result_t rc, const char* what) const {
  if (rc != HCOMM_SUCCESS) fail(what, name_);
}

void Accelerator::copy(void* dst, const void* src, size_t bytes) const {
  if (bytes && plugin_->copy(dst, src, bytes, nullptr) != HCOMM_SUCCESS) fail("copy", name_);
}

void* Accelerator::alloc_pinned(size_t bytes) const {
  void* p = nullptr;
  if (plugin_->alloc(bytes, HCOMM_DEVICE_ALLOC_PINNED_HOST, &p) != HCOMM_SUCCESS) fail("pinned allocation", name_);
  return p;
}

void Accelerator::free_pinned(void* ptr) const { plugin_->free(ptr, HCOMM_DEVICE_ALLOC_PINNED_HOST); }

void* Accelerator::alloc_shareable(size_t bytes) const {
  void* p = nullptr;
  if (plugin_->alloc(bytes, HCOMM_DEVICE_ALLOC_SHAREABLE, &p) != HCOMM_SUCCESS)
    HCOMM_THROW(HCOMM_ERR_SYSTEM, "hcomm_mem_alloc_device: device plugin %s could not allocate %zu bytes: %s", name_,
                bytes, last_error());
  return p;
}

void Accelerator::free_shareable(void* ptr) const {
  if (plugin_->free(ptr, HCOMM_DEVICE_ALLOC_SHAREABLE) != HCOMM_SUCCESS) fail("freeing device memory", name_);
}

void* Accelerator::staging(size_t bytes, int slot) const {
  struct Buffer {
    const Accelerator* owner = nullptr;
    void* ptr = nullptr;
    size_t bytes = 0;
    ~Buffer() {
      if (ptr) owner->free_pinned(ptr);
    }
  };
  thread_local Buffer buffers[2];
  Buffer& b = buffers[slot];
  if (b.bytes < bytes) {
    if (b.ptr) free_pinned(b.ptr);
    b.ptr = nullptr;
    b.bytes = 0;
    b.ptr = alloc_pinned(bytes);
    b.owner = this;
    b.bytes = bytes;
  }
  return b.ptr;
}

}  // namespace hcomm::device
