#include "rank_transport.hpp"

#include <sched.h>

#include <algorithm>
#include <cstring>

#include "proc_self.hpp"

namespace hcomm::tcheck {

std::string describe_error(hcomm_result_t code, const std::string& text) {
  if (code == HCOMM_SUCCESS) return result_name(code);
  return result_name(code) + (text.empty() ? std::string(" (no error text set)") : ": " + text);
}

RankTransport::RankTransport(const PluginLibrary& plugin, SharedState& shared, int rank)
    : plugin_(plugin), shared_(shared), rank_(rank) {}

void RankTransport::start(int key_index) {
  if (!context_) init();
  open(key_index);
  exchange_addresses();
  check_scores();
  connect_peers();
  wait_until_ready();
  barrier_polling("connect: waiting for every rank to be connected");
}

void RankTransport::init() {
  phase("init");
  require("init", [&] { return api().init(CheckServices::instance().table(), &context_); });
  if (!context_) TCHECK_FAIL("init succeeded but returned a NULL context");
}

hcomm_transport_props_t RankTransport::properties() {
  hcomm_transport_props_t props{};
  props.size = sizeof props;
  require("properties", [&] { return api().properties(context_, &props); });
  return props;
}

void RankTransport::open(int key_index) {
  phase("open");
  hcomm_transport_open_args_t args{};
  args.size = sizeof args;
  args.rank = rank_;
  args.nranks = nranks();
  std::memcpy(args.comm_key, shared_.comm_keys[key_index], sizeof args.comm_key);
  net_ = nullptr;
  require("open", [&] { return api().open(context_, &args, &net_); });
  if (!net_) TCHECK_FAIL("open succeeded but returned a NULL net");
  endpoints_.assign(static_cast<size_t>(nranks()), nullptr);
}

void RankTransport::exchange_addresses() {
  phase("address");
  RankSlot& mine = shared_.slots[rank_];
  size_t len = sizeof mine.address;
  require("address", [&] { return api().address(net_, mine.address, &len); });
  if (len == 0 || len > sizeof mine.address)
    TCHECK_FAIL("address returned length %zu (must be 1..%zu)", len, sizeof mine.address);
  mine.address_len = static_cast<uint32_t>(len);
  phase("address: waiting for every rank's address");
  shared_.barrier.wait(deadline());
}

void RankTransport::check_scores() {
  phase("score");
  RankSlot& mine = shared_.slots[rank_];
  for (int peer = 0; peer < nranks(); ++peer) {
    if (peer == rank_) continue;
    const RankSlot& theirs = shared_.slots[peer];
    hcomm_link_score_t score{};
    require(format("score(rank %d, rank %d)", rank_, peer), [&] {
      return api().score(net_, mine.address, mine.address_len, theirs.address, theirs.address_len, &score);
    });
    mine.scores[peer] = score;
  }
  phase("score: waiting for every rank's scores");
  shared_.barrier.wait(deadline());
  for (int peer = 0; peer < nranks(); ++peer) {
    if (peer == rank_) continue;
    const hcomm_link_score_t& a = mine.scores[peer];
    const hcomm_link_score_t& b = shared_.slots[peer].scores[rank_];
    if (a.reachable != b.reachable || a.bandwidth_gbps != b.bandwidth_gbps || a.latency_us != b.latency_us)
      TCHECK_FAIL(
          "score differs between the two sides of a pair: rank %d sees rank %d as (reachable %d, %g GB/s, "
          "%g us), rank %d sees rank %d as (reachable %d, %g GB/s, %g us)",
          rank_, peer, a.reachable, a.bandwidth_gbps, a.latency_us, peer, rank_, b.reachable, b.bandwidth_gbps,
          b.latency_us);
    if (!a.reachable) TCHECK_FAIL("score says rank %d cannot reach rank %d on this one host", rank_, peer);
    if (!(a.bandwidth_gbps > 0) || !(a.latency_us >= 0))
      TCHECK_FAIL("score of rank %d - rank %d is reachable with bandwidth %g GB/s and latency %g us", rank_, peer,
                  a.bandwidth_gbps, a.latency_us);
  }
}

void RankTransport::connect_peers() {
  for (int step = 1; step < nranks(); ++step) {
    int peer = (rank_ + step) % nranks();  // ranks connect in different orders
    phase(format("connect to rank %d", peer));
    const RankSlot& theirs = shared_.slots[peer];
    void* ep = nullptr;
    Clock::time_point begin = Clock::now();
    require(format("connect to rank %d", peer),
            [&] { return api().connect(net_, peer, theirs.address, theirs.address_len, &ep); });
    double took = seconds_since(begin);
    slowest_connect_ = std::max(slowest_connect_, took);
    if (took > kConnectCallLimitSeconds)
      TCHECK_FAIL("connect to rank %d took %.0f ms (limit %.0f ms): connect must not block, ep_ready is polled", peer,
                  took * 1e3, kConnectCallLimitSeconds * 1e3);
    if (!ep) TCHECK_FAIL("connect to rank %d succeeded but returned a NULL endpoint", peer);
    endpoints_[static_cast<size_t>(peer)] = ep;
  }
}

void RankTransport::wait_until_ready() {
  phase("connect: polling ep_ready");
  Clock::time_point begin = Clock::now();
  std::vector<bool> ready(static_cast<size_t>(nranks()), false);
  ready[static_cast<size_t>(rank_)] = true;
  for (;;) {
    progress();
    bool all = true;
    for (int peer = 0; peer < nranks(); ++peer) {
      if (ready[static_cast<size_t>(peer)]) continue;
      int is_ready = 0;
      require(format("ep_ready for rank %d", peer), [&] { return api().ep_ready(endpoint(peer), &is_ready); });
      ready[static_cast<size_t>(peer)] = is_ready != 0;
      all = all && is_ready;
    }
    if (all) break;
    shared_.barrier.throw_if_aborted();
    if (deadline().expired()) {
      std::string waiting;
      for (int peer = 0; peer < nranks(); ++peer)
        if (!ready[static_cast<size_t>(peer)]) waiting += format("%s%d", waiting.empty() ? "" : ", ", peer);
      TCHECK_FAIL("endpoints to rank(s) %s not ready after %.1f s", waiting.c_str(), seconds_since(begin));
    }
    ::sched_yield();
  }
  ready_seconds_ = seconds_since(begin);
}

void RankTransport::progress() {
  require("progress", [&] { return api().progress(net_); });
}

void RankTransport::barrier_polling(const std::string& why) {
  phase(why);
  shared_.barrier.wait_polling(deadline(), [&] { progress(); });
}

void RankTransport::record_shm_files() {
  std::set<std::string> now = shm_files_in_use();
  shm_files_.insert(now.begin(), now.end());
  shared_.slots[rank_].set_shm_files(shm_files_);
}

void RankTransport::quiesce() {
  record_shm_files();
  barrier_polling("waiting for every rank to finish its transfers");
  phase("waiting for every rank before close");
  shared_.barrier.wait(deadline());
}

void RankTransport::close_endpoints() {
  phase("ep_close");
  for (int peer = 0; peer < nranks(); ++peer) {
    if (!endpoints_[static_cast<size_t>(peer)]) continue;
    require(format("ep_close for rank %d", peer), [&] { return api().ep_close(endpoint(peer)); });
    endpoints_[static_cast<size_t>(peer)] = nullptr;
  }
}

void RankTransport::close() {
  phase("close");
  record_shm_files();
  require("close", [&] { return api().close(net_); });
  net_ = nullptr;
  endpoints_.assign(endpoints_.size(), nullptr);
}

void RankTransport::finalize() {
  phase("finalize");
  record_shm_files();
  require("finalize", [&] { return api().finalize(context_); });
  context_ = nullptr;
}

void RankTransport::finish() {
  quiesce();
  close();
  finalize();
}

}  // namespace hcomm::tcheck
