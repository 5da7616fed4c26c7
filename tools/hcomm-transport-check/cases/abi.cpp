#include "cases.hpp"

namespace hcomm::tcheck {

// PluginLibrary made every check when it opened the file; this lists what it found.
void run_abi(RankContext& ctx) {
  ctx.plugin.require_usable();
  ctx.note(ctx.plugin.summary());
}

}  // namespace hcomm::tcheck
