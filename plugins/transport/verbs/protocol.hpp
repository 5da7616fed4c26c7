// The per-peer message protocol without the device: credit flow control over
// the peer's pre-posted receive buffers, and tag matching of arrivals (eager
// payloads and rendezvous announcements) against posted receives.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <unordered_map>
#include <vector>

#include "request.hpp"

namespace hcomm::verbs {

// Every send and every RDMA write with immediate consumes one of the peer's
// receive buffers. The last credit is kept for returning credits, so that two
// peers that both ran dry can always tell each other about reposted buffers.
// Credits go back with every message, and on their own once a quarter of our
// buffers were taken by data (or half by anything): a credit-only message is
// not answered by another at once, so two idle peers do not ping-pong.
class Credits {
 public:
  Credits(int peer_buffers, int own_buffers)
      : available_(peer_buffers),
        data_threshold_(std::max(1, own_buffers / 4)),
        threshold_(std::max(1, own_buffers / 2)) {}

  bool can_send_data() const { return available_ > 1; }
  bool can_send_credit() const { return available_ > 0; }
  void spend() { --available_; }
  void add(int returned) { available_ += returned; }
  int available() const { return available_; }

  // One of our buffers was reposted: the peer may use it again.
  void reposted(bool after_credit_only) {
    ++owed_;
    if (!after_credit_only) ++data_owed_;
  }
  bool should_return() const { return data_owed_ >= data_threshold_ || owed_ >= threshold_; }
  int owed() const { return owed_; }
  uint16_t take_owed() {
    int n = owed_;
    owed_ = data_owed_ = 0;
    return static_cast<uint16_t>(n);
  }

 private:
  int available_;
  int owed_ = 0;
  int data_owed_ = 0;
  const int data_threshold_;
  const int threshold_;
};

// A message that arrived before its receive: an eager payload, or a
// rendezvous announcement whose data waits at the sender.
struct Arrival {
  bool rendezvous = false;
  uint64_t seq = 0;  // rendezvous: the sender's message number
  uint64_t len = 0;
  std::vector<std::byte> payload;  // eager
};

// Messages of one tag match in arrival order, which RC keeps equal to the
// sender's posting order.
class Matcher {
 public:
  // The oldest receive posted for the tag, or nothing (then keep the arrival).
  Request* match_arrival(uint64_t tag);
  void keep_arrival(uint64_t tag, Arrival arrival);
  // The oldest arrival for the tag, or nothing (then post the receive).
  std::optional<Arrival> match_receive(uint64_t tag);
  void post_receive(Request* recv);

  // Every receive still posted, oldest first per tag (for failing them).
  std::vector<Request*> take_posted();
  size_t arrivals() const { return arrival_count_; }

 private:
  std::unordered_map<uint64_t, std::deque<Request*>> posted_;
  std::unordered_map<uint64_t, std::deque<Arrival>> arrived_;
  size_t arrival_count_ = 0;
};

}  // namespace hcomm::verbs
