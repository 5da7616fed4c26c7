// What each rank tells the others about where it runs: its host, the NUMA
// node and CPUs it is bound to, its GPU and the host's NICs and GPUs. A fixed-size
// record, all-gathered through the bootstrap when a communicator starts.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace hcomm::topology {

// A host as the ranks must tell hosts apart: the kernel's boot id (another
// machine or VM), the UTS hostname (containers on one kernel that name
// themselves) and the network namespace (its own network stack: ranks in
// different namespaces reach each other only through a network, which is how
// several hosts are emulated on one machine). Two ranks are on one host when
// all three match; an identity that could not be read is empty and matches
// only itself.
struct HostId {
  char boot_id[40];
  char hostname[72];
  uint64_t net_ns;

  bool operator==(const HostId& other) const;
};

enum NicKind : int32_t { kNicNetwork = 0, kNicOpenFabrics = 1 };

struct Nic {
  char name[32];  // eth0, mlx5_0
  char pci[16];   // its PCI bus id, "" when it sits on none (virtual)
  int32_t kind;   // NicKind
  int32_t numa;   // the NUMA node it is attached to, -1 when unknown
};

constexpr int kMaxNics = 8;

// A GPU of the host: a PCI display or 3D controller of NVIDIA or AMD.
struct Gpu {
  char pci[16];   // its PCI bus id
  char name[16];  // the OS device hwloc names under it (cuda0, nvidia0, card1), "" when none
  int32_t numa;   // the NUMA node it is attached to, -1 when unknown
};

constexpr int kMaxGpus = 16;

struct Description {
  uint32_t magic;
  uint32_t version;
  HostId host;
  int32_t numa;      // the NUMA node holding every CPU the rank may run on; -1: several or unknown
  int32_t last_cpu;  // where it ran last, -1 when unknown
  int32_t llc;       // the last-level cache (hwloc's index) over every CPU the rank may run on; -1: several or unknown
  char cpus[128];    // the CPUs it is bound to, as a list ("0-3,8"); "" when unknown
  char gpu[16];      // the PCI bus id of its GPU, "" without one
  uint32_t nnics;
  Nic nics[kMaxNics];  // the host's NICs, by name
  uint32_t ngpus;
  Gpu gpus[kMaxGpus];  // the host's GPUs, by PCI bus id
};

// A fresh record with magic and version set and nothing known.
Description blank_description();
// This process, from the system (hwloc for CPUs, NUMA and NICs).
Description discover();

// Fixed-size records; decode checks magic, version and strings and names
// the rank in its errors.
std::vector<uint8_t> encode(const Description& d);
Description decode(std::span<const uint8_t> bytes, int rank);
constexpr size_t kEncodedBytes = sizeof(Description);

// The GPU a rank drives, as a PCI bus id ("0000:3b:00.0"), or "" for none.
// A device plugin that drives GPUs installs it when it loads; until one does,
// ranks describe no GPU.
using GpuLocator = std::string (*)();
void set_gpu_locator(GpuLocator locator);

// Copies text into a fixed field, cut to fit and terminated.
template <size_t N>
void set_field(char (&field)[N], const std::string& text) {
  const size_t n = text.size() < N - 1 ? text.size() : N - 1;
  text.copy(field, n);
  field[n] = '\0';
}

}  // namespace hcomm::topology
