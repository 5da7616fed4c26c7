// The transport connections of a communicator: a net per usable transport and
// an endpoint per peer on the transport that serves that pair best. Built at
// communicator creation: addresses all-gathered through the bootstrap, each
// pair scored (both sides reach the same answer; a transport that maps memory
// serves only ranks the topology puts on one host), endpoints connected with
// a deadline.
//
// Communicators split from the one that made them share them: each takes a
// tag context of its own (exec::kContexts in all), so that their messages
// never match each other's. Once shared, every call holds a lock, so that
// communicators of one family may run on different threads where every
// transport takes calls from any thread (any_thread(); HCOMM_SPLIT_SHARE).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/bootstrap/bootstrap.hpp"
#include "core/topology/topology.hpp"
#include "core/transport/transport.hpp"

namespace hcomm::links {

class Connections {
 public:
  // `transports`: HCOMM_TRANSPORTS' value; `timeout_s`: the deadline of
  // connecting. Collective over `bootstrap`; the ranks here are its ranks.
  Connections(bootstrap::Bootstrap& bootstrap, const std::array<uint8_t, 16>& comm_key,
              const topology::Topology& topology, const std::string& transports, double timeout_s);
  ~Connections();
  Connections(const Connections&) = delete;
  Connections& operator=(const Connections&) = delete;

  int rank() const { return rank_; }
  // Whether every transport serving a peer may be called from any thread
  // (HCOMM_CAP_ANY_THREAD).
  bool any_thread() const;
  const std::string& transports() const { return transports_; }

  void* isend(int peer, const void* buf, size_t len, uint64_t tag, bool counted);
  void* irecv(int peer, void* buf, size_t len, uint64_t tag, bool counted);
  bool test(int peer, void* request, size_t* bytes, bool counted);
  // Moves data for every request; with none in flight, only every
  // kIdleProgressEvery calls, unless `always`.
  void progress(bool always = false);
  // Blocks up to timeout_us in the nets until progress may be possible.
  void wait(int64_t timeout_us);

  // The transport serving `peer` and its endpoint; the net's index (the same
  // on every rank).
  transport::Transport& transport(int peer) const { return *link(peer).net->transport; }
  void* endpoint(int peer) const { return link(peer).ep; }
  int net_index(int peer) const;
  const std::string& net_name(int index) const { return nets_.at(index)->transport->name(); }
  // The transport's score of the link to `peer`.
  hcomm_link_score_t score(int peer) const { return link(peer).score; }

  // Tag contexts: bit c of free_contexts() is set when no communicator on
  // this rank uses context c. take: a communicator begins to use it; give
  // back: it ended, leaving receives posted under it when `keep` holds
  // their memory, which these connections then keep (a later user of the
  // context drops what lands there for an earlier one); past kMaxKept such
  // leftovers, the context stays taken instead.
  uint32_t free_contexts() const;
  void take_context(int context);
  void give_back_context(int context, std::shared_ptr<void> keep = nullptr);
  // A communicator sharing these ended with operations in flight that did
  // not complete: their receives may still land, so no call may move data.
  void poison(const std::string& why);

 private:
  struct Net {
    transport::Transport* transport;
    void* handle = nullptr;
    bool used = false;
  };
  struct Link {
    Net* net = nullptr;
    void* ep = nullptr;
    hcomm_link_score_t score{};
  };
  struct Choice {
    int net = -1;  // index into nets_, -1 when none reaches
    hcomm_link_score_t score{};
  };
  // Holds the lock while these connections are shared.
  class Guard {
   public:
    explicit Guard(const Connections& c);
    ~Guard() {
      if (locked_) mutex_.unlock();
    }
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;

   private:
    std::mutex& mutex_;
    bool locked_;
  };

  void open_nets(const std::array<uint8_t, 16>& key, const std::string& transports);
  void exchange_addresses(bootstrap::Bootstrap& bootstrap);
  const uint8_t* address(int r, size_t t, uint32_t* len) const;
  Choice pair(const topology::Topology& topology, int a, int b) const;
  void choose(bootstrap::Bootstrap& bootstrap, const topology::Topology& topology);
  void connect_all(bootstrap::Bootstrap& bootstrap, double timeout_s);
  void progress_nets();
  void wait_nets(int64_t timeout_us);
  const Link& link(int peer) const;
  void release();
  [[noreturn]] void throw_poisoned() const;

  int rank_, size_;
  std::string transports_;
  bool ordered_ = false;  // HCOMM_TRANSPORTS gave a preference order
  std::vector<std::unique_ptr<Net>> nets_;
  std::vector<Link> links_;
  std::vector<uint8_t> addresses_;  // every rank's AddressSlot per net, in rank order
  // Transport requests handed out and not yet ended; progress calls while none are.
  uint64_t in_flight_ = 0;
  uint64_t idle_progress_calls_ = 0;
  static constexpr uint64_t kIdleProgressEvery = 64;

  mutable std::mutex mutex_;
  std::atomic<bool> shared_{false};  // a second context was taken once: calls hold mutex_
  mutable std::atomic<int> waiters_{0};  // calls waiting for mutex_
  uint32_t contexts_taken_ = 0;      // under mutex_, as the rest below
  std::vector<std::shared_ptr<void>> kept_;  // what receives posted by communicators now gone write into
  static constexpr size_t kMaxKept = 64;
  std::string poisoned_;  // why no call may move data on them; empty while they may
};

}  // namespace hcomm::links
