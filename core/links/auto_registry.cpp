#include "core/links/auto_registry.hpp"

#include <link.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <string>

#include "core/common/error.hpp"
#include "core/common/log.hpp"
#include "hcomm/hcomm.h"

namespace hcomm::links {

namespace {

// Kilobytes of this process's memory pinned for devices (RDMA, io_uring).
uint64_t pinned_kb() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmPin:", 0) == 0) return std::stoull(line.substr(6));
  return 0;
}

// Why this process's pages must not move, or nullptr. RDMA registrations
// count in VmPin; the CUDA driver pins host memory (cudaHostRegister)
// without counting it there (VmPin, VmLck) or marking the mapping
// (VmFlags), so its presence is reason enough.
const char* pages_held_by_devices() {
  if (pinned_kb()) return "this process has memory pinned for devices (VmPin)";
  bool cuda = false;
  ::dl_iterate_phdr(
      [](struct dl_phdr_info* info, size_t, void* found) {
        const char* name = std::strrchr(info->dlpi_name, '/');
        if (std::strncmp(name ? name + 1 : info->dlpi_name, "libcuda.so", 10) == 0) *static_cast<bool*>(found) = true;
        return 0;
      },
      &cuda);
  return cuda ? "the CUDA driver is loaded, which may pin host memory unseen" : nullptr;
}

}  // namespace

AutoRegistry& AutoRegistry::instance() {
  static AutoRegistry* registry = new AutoRegistry;  // used until the process ends
  return *registry;
}

void AutoRegistry::describe(const transport::Transport& t, const void* ptr, size_t bytes, hcomm_mem_desc_t* out) {
  out->bytes = 0;
  const uintptr_t start = reinterpret_cast<uintptr_t>(ptr);
  std::lock_guard<std::mutex> lock(mutex_);
  if (unsupported_ || !HCOMM_IFACE_HAS(&t.iface(), mem_held)) return;
  if (++clock_ % kSweepEvery == 0) sweep();
  auto next = registrations_.upper_bound(start);
  if (next != registrations_.begin()) {
    auto r = std::prev(next);
    if (r->first + r->second.bytes >= start + bytes && r->second.transport == &t) {
      if (held(r)) {
        ++r->second.uses;
        r->second.last = clock_;
        *out = r->second.desc;
        return;
      }
      if (unsupported_) return;
      forget(r);
    }
  }
  Sighting& s = sighting(start, bytes);
  const bool again = s.last != 0;
  s.last = clock_;
  if (again && !s.refused) enroll(t, start, bytes, out);
}

bool AutoRegistry::held(Registrations::iterator r) {
  int held = 0;
  const hcomm_result_t rc = r->second.transport->iface().mem_held(r->second.handle, &held);
  if (rc == HCOMM_SUCCESS) return held != 0;
  unsupported_ = true;
  HCOMM_INFO(EXEC,
             "%s cannot tell whether a registration still holds its pages (%s): buffers are no longer "
             "registered automatically",
             r->second.transport->name().c_str(), hcomm_result_string(rc));
  return false;
}

AutoRegistry::Registrations::iterator AutoRegistry::release(Registrations::iterator r) {
  const transport::Transport& t = *r->second.transport;
  const hcomm_result_t rc = t.iface().mem_release(r->second.handle);
  if (rc != HCOMM_SUCCESS)
    HCOMM_WARN(EXEC, "%s: unregistering the buffer at %p (%zu bytes) failed: %s", t.name().c_str(),
               reinterpret_cast<void*>(r->first), r->second.bytes, hcomm_result_string(rc));
  return registrations_.erase(r);
}

// The range's sighting, or the least recently seen one made over for it.
AutoRegistry::Sighting& AutoRegistry::sighting(uintptr_t start, size_t bytes) {
  Sighting* oldest = &sightings_[0];
  for (Sighting& s : sightings_) {
    if (s.start == start && s.bytes == bytes) return s;
    if (s.last < oldest->last) oldest = &s;
  }
  *oldest = Sighting{.start = start, .bytes = bytes, .last = 0, .refused = false};
  return *oldest;
}

void AutoRegistry::enroll(const transport::Transport& t, uintptr_t start, size_t bytes, hcomm_mem_desc_t* out) {
  if (const char* why = pages_held_by_devices()) {
    sighting(start, bytes).refused = true;
    HCOMM_INFO(EXEC,
               "the buffer at %p (%zu bytes) is not registered automatically: %s, and pages a device "
               "writes must not move",
               reinterpret_cast<void*>(start), bytes, why);
    return;
  }
  // Freed buffers' registrations go, and any of part of this range (the new
  // one moves whole pages).
  sweep();
  release_overlapping_locked(start, bytes);
  if (registrations_.size() >= kMaxRegistrations) {
    auto oldest = registrations_.begin();
    for (auto r = registrations_.begin(); r != registrations_.end(); ++r)
      if (r->second.last < oldest->second.last) oldest = r;
    release(oldest);
  }
  Registration fresh{.bytes = bytes, .transport = &t, .handle = nullptr, .desc = {}, .uses = 1, .last = clock_};
  const hcomm_result_t rc =
      t.iface().mem_register(t.ctx(), reinterpret_cast<void*>(start), bytes, &fresh.handle, &fresh.desc);
  if (rc != HCOMM_SUCCESS || fresh.desc.bytes == 0) {
    sighting(start, bytes).refused = true;
    if (rc == HCOMM_SUCCESS) t.iface().mem_release(fresh.handle);
    HCOMM_DEBUG(EXEC, "the buffer at %p (%zu bytes) cannot be registered automatically (%s)",
                reinterpret_cast<void*>(start), bytes,
                rc == HCOMM_SUCCESS ? "memory that does not move" : hcomm_result_string(rc));
    return;
  }
  HCOMM_DEBUG(EXEC, "registered the buffer at %p (%zu bytes) on its second use", reinterpret_cast<void*>(start), bytes);
  *out = registrations_.emplace(start, fresh).first->second.desc;
}

// A buffer freed (and maybe allocated anew): peers must not read its old
// pages, and its file would keep the memory. A registration that did not
// last kPaysOffAfter calls was a waste, and its range is not tried again.
AutoRegistry::Registrations::iterator AutoRegistry::forget(Registrations::iterator r) {
  HCOMM_DEBUG(EXEC, "the buffer at %p (%zu bytes) registered automatically was freed after %llu calls",
              reinterpret_cast<void*>(r->first), r->second.bytes, static_cast<unsigned long long>(r->second.uses));
  if (r->second.uses < kPaysOffAfter) sighting(r->first, r->second.bytes).refused = true;
  return release(r);
}

void AutoRegistry::sweep() {
  for (auto r = registrations_.begin(); r != registrations_.end();) r = held(r) ? std::next(r) : forget(r);
}

void AutoRegistry::release_overlapping(const void* ptr, size_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  release_overlapping_locked(reinterpret_cast<uintptr_t>(ptr), bytes);
}

void AutoRegistry::release_overlapping_locked(uintptr_t start, size_t bytes) {
  auto r = registrations_.upper_bound(start);
  if (r != registrations_.begin() && std::prev(r)->first + std::prev(r)->second.bytes > start) r = std::prev(r);
  while (r != registrations_.end() && r->first < start + bytes) r = release(r);
}

}  // namespace hcomm::links
