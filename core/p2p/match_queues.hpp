// MPI's matching order between the receives waiting for a message and the
// messages that arrived before a receive took them. A receive takes the
// oldest arrived message it matches; an arriving message goes to the oldest
// waiting receive that matches it. Messages from one rank arrive in the
// order sent, so a receive takes, of each rank, the first-sent message that
// matches it: no message overtakes another of its sender.
//
// Receive and Arrival are the caller's: a Receive has `source` and `tag`,
// either of which may be kAny; an Arrival has the `source` and `tag` it
// came with. The queues hold pointers and own nothing.
#pragma once

#include <algorithm>
#include <deque>

namespace hcomm::p2p {

// A receive's or probe's source or tag that takes any.
constexpr int kAny = -1;

inline bool matches(int want_source, int want_tag, int source, int tag) {
  return (want_source == kAny || want_source == source) && (want_tag == kAny || want_tag == tag);
}

template <class Receive, class Arrival>
class MatchQueues {
 public:
  // A new receive: the oldest arrival it matches, taken out of the queue;
  // nullptr when none, and the receive waits.
  Arrival* post(Receive* r) {
    if (Arrival* a = find(r->source, r->tag)) {
      remove(a);
      return a;
    }
    waiting_.push_back(r);
    return nullptr;
  }
  // A new arrival: the oldest waiting receive that matches it, taken out of
  // the queue; nullptr when none, and the arrival waits.
  Receive* arrive(Arrival* a) {
    auto it = std::find_if(waiting_.begin(), waiting_.end(),
                           [&](const Receive* r) { return matches(r->source, r->tag, a->source, a->tag); });
    if (it != waiting_.end()) {
      Receive* r = *it;
      waiting_.erase(it);
      return r;
    }
    arrived_.push_back(a);
    return nullptr;
  }
  // The oldest arrival that a receive of (source, tag) would take, left in
  // the queue (a probe); nullptr when none.
  Arrival* find(int source, int tag) const {
    auto it = std::find_if(arrived_.begin(), arrived_.end(),
                           [&](const Arrival* a) { return matches(source, tag, a->source, a->tag); });
    return it == arrived_.end() ? nullptr : *it;
  }
  // Takes an arrival out of the queue (a matched probe hands it on).
  void remove(Arrival* a) { arrived_.erase(std::find(arrived_.begin(), arrived_.end(), a)); }
  // Takes a waiting receive out of the queue (cancelled); false when it is
  // not waiting (it matched already).
  bool withdraw(Receive* r) {
    auto it = std::find(waiting_.begin(), waiting_.end(), r);
    if (it == waiting_.end()) return false;
    waiting_.erase(it);
    return true;
  }
  const std::deque<Receive*>& waiting() const { return waiting_; }
  const std::deque<Arrival*>& arrived() const { return arrived_; }

 private:
  std::deque<Receive*> waiting_;  // oldest first
  std::deque<Arrival*> arrived_;  // in arrival order
};

}  // namespace hcomm::p2p
