#include <cmath>

#include "cases.hpp"

namespace hcomm::tcheck {

namespace {

void check_properties(const hcomm_transport_props_t& p) {
  if (!(p.caps & HCOMM_CAP_TAGGED)) TCHECK_FAIL("properties: caps 0x%x lack HCOMM_CAP_TAGGED", p.caps);
  if (!(p.mem_kinds & HCOMM_MEM_HOST)) TCHECK_FAIL("properties: mem_kinds 0x%x lack HCOMM_MEM_HOST", p.mem_kinds);
  if (p.max_message == 0) TCHECK_FAIL("properties: max_message is 0");
  if (!(std::isfinite(p.bandwidth_gbps) && p.bandwidth_gbps > 0))
    TCHECK_FAIL("properties: bandwidth_gbps is %g (must be a positive number)", p.bandwidth_gbps);
  for (double value : {p.latency_us, p.overhead_us})
    if (!(std::isfinite(value) && value >= 0))
      TCHECK_FAIL("properties: latency_us %g, overhead_us %g (must be numbers >= 0)", p.latency_us, p.overhead_us);
}

}  // namespace

// The set-up every test shares (RankTransport::start) checks the addresses, the
// scores and the connection; here it is the whole test.
void run_connect(RankContext& ctx) {
  RankTransport& s = ctx.transport;
  s.start();
  check_properties(s.properties());
  if (ctx.rank == 0)
    ctx.note(format("slowest connect call %.2f ms, endpoints ready after %.1f ms", s.slowest_connect_seconds() * 1e3,
                    s.ready_seconds() * 1e3));
  s.finish();
}

}  // namespace hcomm::tcheck
