#include "core/algorithm/link_models.hpp"

#include <algorithm>

#include "core/algorithm/calibration.hpp"
#include "core/common/log.hpp"

namespace hcomm::algorithm {

namespace {

// A copy through memory: the scale of the links' models (the transports'
// bandwidths), and a peer's byte loaded through mapped memory. A flag raised
// and seen across cores: mapped memory's latency. Both fitted to measured
// allreduces of 2 and 4 ranks.
constexpr double kCopyGbps = 16, kMappedFlagUs = 0.3;

// What a synchronisation costs on top when a host's ranks outnumber its
// cores: a time slice handed over.
constexpr double kOversubscribedSyncUs = 3.0;

// A byte combined costs what this machine's ranks measure against a copy
// (reduce_to_copy_ratio, the slowest rank's): one_shot combines all of the
// message on every rank, two_shot, ring and the others a share each, and
// which is the faster turns on it.
hcomm_link_model_t model_of(double bandwidth_gbps, double latency_us, double reduce_to_copy) {
  return {.alpha_us = latency_us,
          .beta_us_per_byte = bandwidth_gbps > 0 ? 1.0 / (bandwidth_gbps * 1e3) : 0,
          .gamma_us_per_byte = reduce_to_copy / (kCopyGbps * 1e3)};
}

}  // namespace

// Each rank takes the lowest bandwidth and highest latency of its own links
// of one host and between hosts, and the ranks combine theirs.
LinkModels agree_link_models(bootstrap::Bootstrap& bootstrap, const topology::Topology& topology,
                             const std::vector<hcomm_link_score_t>& scores) {
  struct Worst {
    double bandwidth[2] = {0, 0};  // [0] of one host, [1] between hosts; 0: no such link
    double latency[2] = {0, 0};
    double reduce_to_copy = 0;
  };
  auto merge = [](Worst& into, int level, double bw, double lat) {
    into.bandwidth[level] = into.bandwidth[level] == 0 ? bw : std::min(into.bandwidth[level], bw);
    into.latency[level] = std::max(into.latency[level], lat);
  };
  const int rank = bootstrap.rank(), size = bootstrap.size();
  Worst mine;
  mine.reduce_to_copy = reduce_to_copy_ratio();
  for (int p = 0; p < size; ++p) {
    if (p == rank) continue;
    merge(mine, topology.same_host(rank, p) ? 0 : 1, scores.at(p).bandwidth_gbps, scores.at(p).latency_us);
  }
  std::vector<Worst> all(size);
  bootstrap.allgather(&mine, sizeof mine, all.data());
  Worst worst;
  for (const Worst& w : all) {
    worst.reduce_to_copy = std::max(worst.reduce_to_copy, w.reduce_to_copy);
    for (int level = 0; level < 2; ++level)
      if (w.bandwidth[level] > 0) merge(worst, level, w.bandwidth[level], w.latency[level]);
  }
  // Without two hosts (or without a host of two ranks) one level stands for both.
  const bool has[2] = {worst.bandwidth[0] > 0, worst.bandwidth[1] > 0};
  for (int level = 0; level < 2; ++level)
    if (!has[level] && has[1 - level])
      worst.bandwidth[level] = worst.bandwidth[1 - level], worst.latency[level] = worst.latency[1 - level];
  const double r = worst.reduce_to_copy;
  HCOMM_INFO(INIT, "rank %d: a reduction costs %.2fx a copy (the slowest rank's; this rank measured %.2fx)", rank, r,
             mine.reduce_to_copy);
  return {.link = model_of(has[1] ? std::min(worst.bandwidth[0], worst.bandwidth[1]) : worst.bandwidth[0],
                           std::max(worst.latency[0], worst.latency[1]), r),
          .intra = model_of(worst.bandwidth[0], worst.latency[0], r),
          .inter = model_of(worst.bandwidth[1], worst.latency[1], r),
          .mapped = model_of(kCopyGbps, kMappedFlagUs, r)};
}

void add_oversubscription(hcomm_comm_view_t& view) {
  view.flags |= HCOMM_VIEW_OVERSUBSCRIBED;
  for (hcomm_link_model_t* m : {&view.link, &view.intra, &view.inter, &view.mapped})
    m->alpha_us += kOversubscribedSyncUs;
  HCOMM_INFO(INIT, "rank %d: a host has more ranks than cores: a synchronisation costs %g us more in the cost model",
             view.rank, kOversubscribedSyncUs);
}

}  // namespace hcomm::algorithm
