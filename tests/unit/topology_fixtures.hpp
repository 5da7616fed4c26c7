// Made-up rank descriptions for the topology tests.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/topology/description.hpp"

namespace hcomm::topology::testing {

struct NicSpec {
  const char* name;
  int numa;
};

// A rank of host `hostname` (boot id "boot-<hostname>", network namespace
// `net_ns`) bound to NUMA node `numa` and its last-level cache (numbered as
// the node), on a host with `nics`.
inline Description made_up_rank(const std::string& hostname, uint64_t net_ns, int numa,
                                const std::vector<NicSpec>& nics = {}) {
  Description d = blank_description();
  set_field(d.host.boot_id, "boot-" + hostname);
  set_field(d.host.hostname, hostname);
  d.host.net_ns = net_ns;
  d.numa = numa;
  d.llc = numa;
  d.last_cpu = numa < 0 ? -1 : 2 * numa;
  set_field(d.cpus, numa < 0 ? "" : std::to_string(2 * numa) + "-" + std::to_string(2 * numa + 1));
  for (const NicSpec& n : nics) {
    Nic& nic = d.nics[d.nnics++];
    set_field(nic.name, n.name);
    set_field(nic.pci, "0000:0" + std::to_string(d.nnics) + ":00.0");
    nic.kind = kNicNetwork;
    nic.numa = n.numa;
  }
  return d;
}

}  // namespace hcomm::topology::testing
