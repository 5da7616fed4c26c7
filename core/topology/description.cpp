#include "core/topology/description.hpp"

#include <hwloc.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <fstream>
#include <memory>

#include "core/common/error.hpp"
#include "core/common/log.hpp"

namespace hcomm::topology {

namespace {

constexpr uint32_t kMagic = 0x4f504f54;  // "TOPO"
constexpr uint32_t kVersion = 3;         // raised whenever the description's fields change

std::atomic<GpuLocator> g_gpu_locator{nullptr};

HostId local_host() {
  HostId id{};
  std::ifstream boot("/proc/sys/kernel/random/boot_id");
  std::string boot_id;
  if (std::getline(boot, boot_id)) set_field(id.boot_id, boot_id);
  char name[sizeof id.hostname] = {};
  if (::gethostname(name, sizeof name - 1) == 0) set_field(id.hostname, name);
  struct stat st {};
  if (::stat("/proc/self/ns/net", &st) == 0) id.net_ns = st.st_ino;
  return id;
}

using Bitmap = std::unique_ptr<hwloc_bitmap_s, decltype(&hwloc_bitmap_free)>;
Bitmap bitmap() { return Bitmap(hwloc_bitmap_alloc(), &hwloc_bitmap_free); }

// The one NUMA node whose memory is local to every CPU of `cpus`, else -1.
int32_t numa_of(hwloc_topology_t topo, hwloc_const_cpuset_t cpus) {
  Bitmap nodes = bitmap();
  hwloc_cpuset_to_nodeset(topo, cpus, nodes.get());
  return hwloc_bitmap_weight(nodes.get()) == 1 ? hwloc_bitmap_first(nodes.get()) : -1;
}

// The last-level cache holding every CPU of `cpus` (the outermost cache
// above the first that covers them all), -1 when none does.
int32_t llc_of(hwloc_topology_t topo, hwloc_const_cpuset_t cpus) {
  hwloc_obj_t cache = hwloc_get_cache_covering_cpuset(topo, cpus);
  if (!cache) return -1;
  for (hwloc_obj_t p = cache->parent; p; p = p->parent)
    if (hwloc_obj_type_is_cache(p->type)) cache = p;
  return static_cast<int32_t>(cache->logical_index);
}

void describe_cpus(hwloc_topology_t topo, Description& d) {
  Bitmap set = bitmap();
  if (hwloc_get_cpubind(topo, set.get(), 0) == 0 && !hwloc_bitmap_iszero(set.get())) {
    hwloc_bitmap_list_snprintf(d.cpus, sizeof d.cpus, set.get());
    d.numa = numa_of(topo, set.get());
    d.llc = llc_of(topo, set.get());
  } else {
    HCOMM_DEBUG(TOPO, "hwloc could not read this process's CPU binding: %s", strerror(errno));
  }
  if (hwloc_get_last_cpu_location(topo, set.get(), 0) == 0 && !hwloc_bitmap_iszero(set.get()))
    d.last_cpu = hwloc_bitmap_first(set.get());
}

void format_pci(const hwloc_obj_attr_u::hwloc_pcidev_attr_s& pci, char (&out)[16]) {
  std::snprintf(out, sizeof out, "%04x:%02x:%02x.%x", pci.domain, pci.bus, pci.dev, pci.func);
}

// The NUMA node of the CPUs an I/O object hangs off, -1 when unknown.
int32_t numa_near(hwloc_topology_t topo, hwloc_obj_t io) {
  hwloc_obj_t near = hwloc_get_non_io_ancestor_obj(topo, io);
  return near && near->cpuset ? numa_of(topo, near->cpuset) : -1;
}

// The devices found, sorted by `key` (a text field), the first N into `out`.
template <class T, size_t N, class Key>
uint32_t keep_first(std::vector<T>& found, T (&out)[N], Key key, const char* what) {
  std::sort(found.begin(), found.end(), [&](const T& a, const T& b) { return std::strcmp(key(a), key(b)) < 0; });
  if (found.size() > N) HCOMM_WARN(TOPO, "this host has %zu %s; the topology keeps the first %zu", found.size(), what, N);
  const size_t kept = std::min(found.size(), N);
  std::copy_n(found.begin(), kept, out);
  return static_cast<uint32_t>(kept);
}

void describe_nics(hwloc_topology_t topo, Description& d) {
  std::vector<Nic> nics;
  for (hwloc_obj_t os = hwloc_get_next_osdev(topo, nullptr); os; os = hwloc_get_next_osdev(topo, os)) {
    const auto type = os->attr->osdev.type;
    if ((type != HWLOC_OBJ_OSDEV_NETWORK && type != HWLOC_OBJ_OSDEV_OPENFABRICS) || !os->name) continue;
    Nic nic{};
    set_field(nic.name, os->name);
    nic.kind = type == HWLOC_OBJ_OSDEV_OPENFABRICS ? kNicOpenFabrics : kNicNetwork;
    for (hwloc_obj_t p = os->parent; p; p = p->parent)
      if (p->type == HWLOC_OBJ_PCI_DEVICE) {
        format_pci(p->attr->pcidev, nic.pci);
        break;
      }
    nic.numa = numa_near(topo, os);
    nics.push_back(nic);
  }
  d.nnics = keep_first(nics, d.nics, [](const Nic& n) { return n.name; }, "NICs (by name)");
}

constexpr uint16_t kVendorNvidia = 0x10de;
constexpr uint16_t kVendorAmd = 0x1002;

// GPUs are PCI display (0x0300) or 3D (0x0302) controllers; integrated
// graphics of other vendors are left out.
void describe_gpus(hwloc_topology_t topo, Description& d) {
  std::vector<Gpu> gpus;
  for (hwloc_obj_t dev = hwloc_get_next_pcidev(topo, nullptr); dev; dev = hwloc_get_next_pcidev(topo, dev)) {
    const auto& pci = dev->attr->pcidev;
    const bool display = pci.class_id == 0x0300 || pci.class_id == 0x0302;
    if (!display || (pci.vendor_id != kVendorNvidia && pci.vendor_id != kVendorAmd)) continue;
    Gpu gpu{};
    format_pci(pci, gpu.pci);
    for (hwloc_obj_t os = dev->io_first_child; os; os = os->next_sibling)
      if (os->type == HWLOC_OBJ_OS_DEVICE && os->name) {
        set_field(gpu.name, os->name);
        break;
      }
    gpu.numa = numa_near(topo, dev);
    gpus.push_back(gpu);
  }
  d.ngpus = keep_first(gpus, d.gpus, [](const Gpu& g) { return g.pci; }, "GPUs (by PCI bus id)");
}

// The machine as hwloc sees it, loaded once per process (it takes tens of
// milliseconds) and kept: the binding is read afresh for every description.
hwloc_topology_t machine() {
  static const hwloc_topology_t loaded = [] {
    hwloc_topology_t topo = nullptr;
    if (hwloc_topology_init(&topo) != 0) return topo;
    hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    if (hwloc_topology_load(topo) == 0) return topo;
    HCOMM_WARN(TOPO, "hwloc could not load this machine's topology (%s): NUMA nodes and NICs unknown", strerror(errno));
    hwloc_topology_destroy(topo);
    return hwloc_topology_t{nullptr};
  }();
  return loaded;
}

template <size_t N>
bool terminated(const char (&text)[N]) {
  return std::memchr(text, '\0', N) != nullptr;
}

}  // namespace

bool HostId::operator==(const HostId& other) const {
  return std::strcmp(boot_id, other.boot_id) == 0 && std::strcmp(hostname, other.hostname) == 0 &&
         net_ns == other.net_ns;
}

Description blank_description() {
  Description d;
  std::memset(&d, 0, sizeof d);  // padding too: records compare and travel byte for byte
  d.magic = kMagic;
  d.version = kVersion;
  d.numa = -1;
  d.last_cpu = -1;
  d.llc = -1;
  return d;
}

Description discover() {
  Description d = blank_description();
  d.host = local_host();
  if (hwloc_topology_t topo = machine()) {
    describe_cpus(topo, d);
    describe_nics(topo, d);
    describe_gpus(topo, d);
  }
  if (GpuLocator locate = g_gpu_locator.load()) set_field(d.gpu, locate());
  return d;
}

std::vector<uint8_t> encode(const Description& d) {
  std::vector<uint8_t> bytes(sizeof d);
  std::memcpy(bytes.data(), &d, sizeof d);
  return bytes;
}

Description decode(std::span<const uint8_t> bytes, int rank) {
  if (bytes.size() != sizeof(Description))
    HCOMM_THROW(HCOMM_ERR_INTERNAL, "rank %d's topology record is %zu bytes, expected %zu", rank, bytes.size(),
                sizeof(Description));
  Description d;
  std::memcpy(&d, bytes.data(), sizeof d);
  if (d.magic != kMagic || d.version != kVersion)
    HCOMM_THROW(HCOMM_ERR_CONFIG,
                "rank %d's topology record has magic %#x version %u, expected %#x version %u: run the same HComm "
                "build on every rank",
                rank, d.magic, d.version, kMagic, kVersion);
  bool strings = terminated(d.host.boot_id) && terminated(d.host.hostname) && terminated(d.cpus) && terminated(d.gpu);
  for (const Nic& n : d.nics) strings = strings && terminated(n.name) && terminated(n.pci);
  for (const Gpu& g : d.gpus) strings = strings && terminated(g.name) && terminated(g.pci);
  if (!strings || d.nnics > kMaxNics || d.ngpus > kMaxGpus)
    HCOMM_THROW(HCOMM_ERR_INTERNAL, "rank %d's topology record is damaged (unterminated text, %u NICs or %u GPUs)",
                rank, d.nnics, d.ngpus);
  return d;
}

void set_gpu_locator(GpuLocator locator) { g_gpu_locator.store(locator); }

}  // namespace hcomm::topology
