// The topology as a JSON document: what hcomm-topo --dump writes and
// HCOMM_TOPO_FILE reads instead of discovering the machine.
//
//   {"format": "hcomm-topology", "version": 1,
//    "hosts": [{"name", "boot_id", "net_ns", "nics": [{"name", "kind", "pci", "numa"}],
//               "gpus": [{"pci", "name", "numa"}]}],
//    "ranks": [{"rank", "host", "numa", "cpus", "last_cpu", "llc", "gpu"}],
//    "links": [{"ranks": [a, b], "class", "transport", "bandwidth_gbps", "latency_us"}],
//    "levels": {"node_of", "hosts", "leaders", "rails"}}
//
// hosts[i] is host i as the ranks number them; a rank's "host" indexes it.
// A link's bandwidth and latency replace the transports' scores in the
// algorithms' link models; its class, when given, must be the one its ranks'
// hosts and NUMA nodes make, and its transport (what served the pair when the
// file was written) is not read. "levels" is derived and not read; a host's
// "gpus" may be left out (none), and a rank's "llc" (-1: unknown).
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <span>
#include <string>
#include <vector>

#include "core/topology/topology.hpp"

namespace hcomm::topology {

struct LinkEntry {
  int a, b;  // a < b
  std::string transport;
  hcomm_link_score_t score;
};

// The document; json::write (core/common/json.hpp) lays it out.
nlohmann::ordered_json to_json(const Topology& topology, std::span<const LinkEntry> links);
// Throws HCOMM_ERR_CONFIG naming the member that is wrong ("ranks[2].host: ...").
Topology from_json(const nlohmann::ordered_json& document);
// Reads and parses `path`; errors start with "topology file <path>: ".
Topology read_topology_file(const std::string& path);

}  // namespace hcomm::topology
