#include "core/comm/argument_check.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "core/common/error.hpp"
#include "core/common/names.hpp"
#include "core/exec/operation.hpp"
#include "core/links/links.hpp"
#include "hcomm/hcomm.h"

namespace hcomm::comm {

namespace {

using Clock = std::chrono::steady_clock;

// How long a rank that found a difference keeps telling its peers before it fails.
constexpr auto kTellFor = std::chrono::seconds(1);
// How long a rank about to fail for a lost peer looks for a word of why.
constexpr auto kLastLookFor = std::chrono::milliseconds(200);

uint64_t hash_bytes(uint64_t h, const void* data, size_t bytes) {
  const auto* p = static_cast<const uint8_t*>(data);
  for (size_t i = 0; i < bytes; ++i) h = (h ^ p[i]) * 0x100000001B3ull;  // FNV-1a
  return h;
}

bool same_arguments(const exec::Agreement& a, const exec::Agreement& b) {
  return a.coll == b.coll && a.dtype == b.dtype && a.op == b.op && a.root == b.root && a.count == b.count &&
         a.counts == b.counts;
}

std::string describe(const exec::Agreement& a) {
  const auto coll = static_cast<hcomm_coll_t>(a.coll);
  std::string counts;
  if (coll == HCOMM_COLL_ALLGATHERV || coll == HCOMM_COLL_REDUCE_SCATTER_V)
    counts = format("recvcounts hashing to %016llx", static_cast<unsigned long long>(a.counts));
  else
    counts = format("count %llu", static_cast<unsigned long long>(a.count));
  return format("%s (%s, dtype %s, op %s, root %d; algorithm %s)", coll_name(coll), counts.c_str(),
                dtype_name(static_cast<hcomm_dtype_t>(a.dtype)), op_name(static_cast<hcomm_op_t>(a.op)), a.root,
                a.algorithm);
}

}  // namespace

ArgumentCheck::ArgumentCheck(int rank, int nranks)
    : rank_(rank), nranks_(nranks), asked_(nranks, 0), answered_(nranks, -1) {}

ArgumentCheck::~ArgumentCheck() = default;

exec::Agreement ArgumentCheck::agreement(const hcomm_coll_args_t& args, int nranks, const std::string& algorithm) {
  exec::Agreement a;
  a.coll = args.coll;
  a.dtype = args.dtype;
  a.op = args.op;
  a.root = args.root;
  a.count = args.count;
  // An alltoallv's counts differ between ranks by design; its messages'
  // lengths are checked instead.
  if ((args.coll == HCOMM_COLL_ALLGATHERV || args.coll == HCOMM_COLL_REDUCE_SCATTER_V) && args.recv_counts)
    a.counts = hash_bytes(0xCBF29CE484222325ull, args.recv_counts, sizeof(size_t) * static_cast<size_t>(nranks));
  std::snprintf(a.algorithm, sizeof a.algorithm, "%s", algorithm.c_str());
  uint64_t h = 0xCBF29CE484222325ull;
  for (uint64_t field : {uint64_t(a.coll), uint64_t(a.dtype), uint64_t(a.op), uint64_t(a.root), a.count, a.counts})
    h = hash_bytes(h, &field, sizeof field);
  a.hash = hash_bytes(h, a.algorithm, std::strlen(a.algorithm));
  return a;
}

void ArgumentCheck::post_receives(links::Links& io) {
  if (inbox_.empty()) {
    inbox_.resize(nranks_);
    receives_.assign(nranks_, nullptr);
    gone_.assign(nranks_, 0);
  }
  for (int p = 0; p < nranks_; ++p) {
    if (p == rank_ || receives_[p] || gone_[p]) continue;
    try {
      receives_[p] = io.irecv_standing(p, &inbox_[p], sizeof(Message), exec::check_tag(io.context()));
    } catch (const Error&) {
      gone_[p] = 1;  // its link is lost: the communicator's own requests report it
    }
  }
}

std::shared_ptr<void> ArgumentCheck::leftovers() {
  if (std::ranges::none_of(receives_, [](void* r) { return r != nullptr; }) && sending_.empty()) return nullptr;
  struct Leftovers {
    std::vector<Message> inbox;
    std::list<Sending> sending;
  };
  return std::make_shared<Leftovers>(Leftovers{std::move(inbox_), std::move(sending_)});
}

void ArgumentCheck::send(links::Links& io, int peer, Kind kind, const std::string& verdict) {
  Sending& s = sending_.emplace_back(Sending{.peer = peer, .message = {}});
  s.message.comm_id = comm_id_;
  s.message.from = rank_;
  s.message.kind = kind;
  s.message.history = history_;
  std::snprintf(s.message.verdict, sizeof s.message.verdict, "%s", verdict.c_str());
  progress_sends(io);
}

// Starts the sends not yet started and forgets those done.
void ArgumentCheck::progress_sends(links::Links& io) {
  for (auto it = sending_.begin(); it != sending_.end();) {
    size_t bytes = 0;
    bool done = false;
    try {
      if (!it->request) it->request = io.isend(it->peer, &it->message, sizeof(Message), exec::check_tag(io.context()));
      done = it->request && io.test(it->peer, it->request, &bytes);
    } catch (const Error&) {
      done = true;  // its link is lost: nobody to tell
    }
    it = done ? sending_.erase(it) : std::next(it);
  }
}

std::string ArgumentCheck::difference(int peer, const std::array<Entry, kHistory>& theirs) const {
  // The calls both ranks keep, oldest first: the first whose chain differs
  // names the call that differed, unless it is older than both keep.
  std::vector<const Entry*> mine;
  for (const Entry& e : history_)
    if (e.valid) mine.push_back(&e);
  std::ranges::sort(mine, {}, &Entry::seq);
  for (const Entry* m : mine) {
    const Entry& t = theirs[m->seq % kHistory];
    if (!t.valid || t.seq != m->seq || t.chain == m->chain) continue;
    if (same_arguments(m->agreement, t.agreement) &&
        std::strncmp(m->agreement.algorithm, t.agreement.algorithm, sizeof t.agreement.algorithm) == 0)
      return format(
          "ranks %d and %d made different collective calls before call %u of this communicator (which "
          "agrees; the calls that differ are older than the last %u each rank keeps): every rank must make "
          "the same collective calls in the same order, with the same count, dtype, op and root",
          rank_, peer, m->seq, kHistory);
    const bool same = same_arguments(m->agreement, t.agreement);
    return format(
        "the ranks passed different arguments to collective call %u of this communicator: rank %d called "
        "%s; rank %d called %s. %s",
        m->seq, rank_, describe(m->agreement).c_str(), peer, describe(t.agreement).c_str(),
        same ? "The arguments agree but the ranks chose different algorithms: give every rank the same "
               "HCOMM_TUNE and forced algorithms"
             : "Every rank must make the same collective calls in the same order, with the same count, "
               "dtype, op and root (and recvcounts for the v-collectives)");
  }
  return "";
}

void ArgumentCheck::fail(links::Links& io, const std::string& text) {
  for (int p = 0; p < nranks_; ++p)
    if (p != rank_) send(io, p, kVerdict, text);
  // The peers learn it only from these messages: see them out, for a while.
  const auto deadline = Clock::now() + kTellFor;
  while (!sending_.empty() && Clock::now() < deadline) {
    io.progress();
    progress_sends(io);
  }
  throw Error(HCOMM_ERR_INVALID_ARGUMENT, text);
}

void ArgumentCheck::take(links::Links& io) {
  for (int p = 0; p < nranks_; ++p) {
    size_t bytes = 0;
    if (p == rank_ || !receives_[p]) continue;
    try {
      if (!io.test_standing(p, receives_[p], &bytes)) continue;
    } catch (const Error&) {
      receives_[p] = nullptr;
      gone_[p] = 1;
      continue;
    }
    receives_[p] = nullptr;
    const Message& m = inbox_[p];
    if (bytes == sizeof(Message) && m.comm_id != comm_id_) continue;  // an earlier communicator's, posted again below
    if (bytes != sizeof(Message) || m.from != p)
      HCOMM_THROW(HCOMM_ERR_REMOTE,
                  "rank %d sent an argument check of %zu bytes that this rank cannot read: use the "
                  "same HComm build on every rank",
                  p, bytes);
    if (m.kind == kVerdict)
      throw Error(HCOMM_ERR_INVALID_ARGUMENT, std::string(m.verdict, strnlen(m.verdict, sizeof m.verdict)));
    const std::string diff = difference(p, m.history);
    if (!diff.empty()) fail(io, diff);
    if (m.kind == kAnswer) asked_[p] = 0;
    if (m.kind == kQuestion) send(io, p, kAnswer);
    uint32_t latest = 0;
    for (const Entry& e : history_)
      if (e.valid) latest = std::max(latest, e.seq);
    answered_[p] = latest;
  }
  post_receives(io);
}

void ArgumentCheck::probe(links::Links& io, const std::vector<int>& peers) {
  post_receives(io);
  progress_sends(io);
  take(io);
  int64_t latest = -1;
  for (const Entry& e : history_)
    if (e.valid) latest = std::max<int64_t>(latest, e.seq);
  auto ask = [&](int p) {
    if (p == rank_ || asked_[p] || answered_[p] == latest) return;
    asked_[p] = 1;
    send(io, p, kQuestion);
  };
  if (peers.empty())
    for (int p = 0; p < nranks_; ++p) ask(p);
  for (int p : peers) ask(p);
}

void ArgumentCheck::last_look(links::Links& io) {
  // What a peer sent just before it left may still be on its way in.
  const auto deadline = Clock::now() + kLastLookFor;
  do {
    post_receives(io);
    take(io);
    try {
      io.progress();
    } catch (const Error&) {
      // the links already lost are what the caller reports
    }
  } while (Clock::now() < deadline);
}

void ArgumentCheck::resolve(links::Links& io, int peer, uint32_t seq, double seconds) {
  post_receives(io);
  if (!asked_[peer]) {
    asked_[peer] = 1;
    send(io, peer, kQuestion);
  }
  const auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
  while (Clock::now() < deadline) {
    io.progress();
    progress_sends(io);
    take(io);  // throws once the peer's answer shows the difference
    io.wait(1000);
  }
  const Entry& mine = history_[seq % kHistory];
  fail(io, format("rank %d signalled in collective call %u of this communicator with another call signature than this "
                  "rank %d, which called %s: the ranks passed different arguments, to this call or an earlier one; "
                  "rank %d did not tell what it called within %g s. Every rank must make the same collective calls "
                  "in the same order, with the same count, dtype, op and root",
                  peer, seq, rank_, describe(mine.agreement).c_str(), peer, seconds));
}

}  // namespace hcomm::comm
