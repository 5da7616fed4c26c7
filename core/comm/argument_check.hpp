// Checks that the ranks of a communicator pass the same arguments to each
// collective call (collective, count, dtype, op, root, the counts arrays that
// all must share) and run the same algorithm for it.
//
// Each call has a signature: a hash of its agreement (exec::Agreement)
// chained with the signatures of the calls before it, so that a call whose
// ranks disagreed leaves every later one disagreeing too (a broadcast whose
// ranks all took themselves for the root receives nothing to compare). The
// executor carries it in what a call already exchanges: in its messages'
// tags, so that messages of calls that differ never match, and in its mapped
// signals, whose waits compare it (exec::MappedCall). A call that differs
// thus stops rather than mixing data; the ranks then tell each other what
// they called, in messages of exec::check_tag holding their last calls'
// agreements, and fail naming both ranks' arguments:
//   - a rank that waited kProbeAfter without progress asks the peers it
//     waits on (at most one question in flight per peer);
//   - a rank whose mapped wait saw another signature asks that peer at once;
//   - a rank that finds a difference tells every peer, which fail with its
//     words when they next wait.
#pragma once

#include <array>
#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <vector>

#include "core/exec/schedule.hpp"
#include "hcomm/plugin/algorithm.h"

namespace hcomm::links {
class Links;
}

namespace hcomm::comm {

class ArgumentCheck {
 public:
  ArgumentCheck(int rank, int nranks);
  ~ArgumentCheck();
  ArgumentCheck(const ArgumentCheck&) = delete;
  ArgumentCheck& operator=(const ArgumentCheck&) = delete;

  // The communicator's id, the same on every rank and unlike other
  // communicators', set before any call: a message of another (one that
  // used the same tag context on shared connections before) is dropped.
  void identify(uint64_t comm_id) { comm_id_ = comm_id; }
  uint64_t id() const { return comm_id_; }

  // The agreement of a call of `args` served by `algorithm`.
  static exec::Agreement agreement(const hcomm_coll_args_t& args, int nranks, const std::string& algorithm);

  // Records call `seq` (the communicator's collective call number) and
  // returns its signature.
  uint64_t record(uint32_t seq, const exec::Agreement& a) {
    chain_ = mix(chain_, a.hash);
    Entry& e = history_[seq % kHistory];
    // A loop of the same call finds its agreement there already.
    if (!e.valid || e.agreement.hash != a.hash) e.agreement = a;
    e.seq = seq;
    e.valid = 1;
    e.chain = chain_;
    return chain_;
  }

  // Asks `peers` (none: every peer) what they called, unless a question to
  // one is in flight or it already answered about this call, and takes the
  // answers and questions that arrived. Throws HCOMM_ERR_INVALID_ARGUMENT
  // naming both ranks' arguments when a peer's calls differ from this rank's.
  void probe(links::Links& io, const std::vector<int>& peers);
  // Takes what arrived, as probe does, asking nobody: for a rank about to
  // fail otherwise (a peer that found a difference fails and may close its
  // links before this rank read why).
  void last_look(links::Links& io);
  // A mapped wait saw another signature from `peer` in call `seq`: asks it
  // and waits up to `seconds` for its answer. Always throws.
  [[noreturn]] void resolve(links::Links& io, int peer, uint32_t seq, double seconds);
  // What its receives and sends in flight read and write, when any are, for
  // links whose connections outlive the communicator (Links::leave).
  std::shared_ptr<void> leftovers();

 private:
  static constexpr uint32_t kHistory = 16;
  struct Entry {
    uint32_t seq = 0;
    uint32_t valid = 0;
    uint64_t chain = 0;
    exec::Agreement agreement;
  };
  enum Kind : uint32_t { kQuestion = 1, kAnswer = 2, kVerdict = 3 };
  // A message of exec::check_tag.
  struct Message {
    uint64_t comm_id = 0;
    int32_t from = -1;
    uint32_t kind = 0;
    std::array<Entry, kHistory> history;
    char verdict[768] = {};  // kVerdict: the error, as its finder wrote it
  };
  struct Sending {
    int peer;
    Message message;
    void* request = nullptr;
  };

  static uint64_t mix(uint64_t chain, uint64_t hash) {
    const uint64_t x = (chain ^ hash) * 0x9E3779B97F4A7C15ull;
    return x ^ (x >> 29);
  }
  void post_receives(links::Links& io);
  void send(links::Links& io, int peer, Kind kind, const std::string& verdict = "");
  void progress_sends(links::Links& io);
  // Takes what arrived; throws on a difference or a verdict.
  void take(links::Links& io);
  // The text of the first difference between this rank's calls and `theirs`
  // (of rank `peer`), or "" when their common calls agree.
  std::string difference(int peer, const std::array<Entry, kHistory>& theirs) const;
  [[noreturn]] void fail(links::Links& io, const std::string& text);

  int rank_, nranks_;
  uint64_t comm_id_ = 0;
  uint64_t chain_ = 0;
  std::array<Entry, kHistory> history_{};
  // Per peer: its posted receive (standing, posted at the first probe),
  // whether its link is gone, whether a question to it is unanswered, and
  // the last call it answered about (-1: none).
  std::vector<Message> inbox_;
  std::vector<void*> receives_;
  std::vector<uint8_t> gone_;
  std::vector<uint8_t> asked_;
  std::vector<int64_t> answered_;
  std::list<Sending> sending_;
};

}  // namespace hcomm::comm
