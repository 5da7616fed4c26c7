#include "core/topology/gather.hpp"

#include "core/common/error.hpp"
#include "core/common/log.hpp"
#include "core/common/settings.hpp"
#include "core/topology/topo_file.hpp"

namespace hcomm::topology {

Topology gather(bootstrap::Bootstrap& bootstrap) {
  const std::string path = settings::get_string("HCOMM_TOPO_FILE");
  if (!path.empty()) {
    Topology t = read_topology_file(path);
    if (t.size() != bootstrap.size())
      HCOMM_THROW(HCOMM_ERR_CONFIG, "HCOMM_TOPO_FILE %s describes %d ranks, this communicator has %d", path.c_str(),
                  t.size(), bootstrap.size());
    if (bootstrap.rank() == 0) HCOMM_INFO(TOPO, "topology from HCOMM_TOPO_FILE %s", path.c_str());
    return t;
  }
  const std::vector<uint8_t> mine = encode(discover());
  std::vector<uint8_t> all(mine.size() * bootstrap.size());
  bootstrap.allgather(mine.data(), mine.size(), all.data());
  std::vector<Description> ranks;
  for (int r = 0; r < bootstrap.size(); ++r)
    ranks.push_back(decode(std::span(all).subspan(r * mine.size(), mine.size()), r));
  return Topology(std::move(ranks));
}

}  // namespace hcomm::topology
