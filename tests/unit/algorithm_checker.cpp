#include "algorithm_checker.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <tuple>

namespace hcomm::algotest {

namespace {

const char* const kKindNames[] = {"SEND", "RECV",        "RECV_REDUCE", "REDUCE", "COPY",
                                  "LOAD", "LOAD_REDUCE", "STORE",       "SIGNAL", "WAIT"};
const char* const kBufferNames[] = {"SEND", "RECV", "SCRATCH", "WINDOW"};

constexpr size_t kMaxConflicts = 100;

bool is_transfer(uint32_t kind) { return kind <= HCOMM_STEP_RECV_REDUCE; }
bool is_flag(uint32_t kind) { return kind == HCOMM_STEP_SIGNAL || kind == HCOMM_STEP_WAIT; }
bool touches_peer(uint32_t kind) {
  return kind == HCOMM_STEP_LOAD || kind == HCOMM_STEP_LOAD_REDUCE || kind == HCOMM_STEP_STORE;
}
bool reduces(uint32_t kind) {
  return kind == HCOMM_STEP_RECV_REDUCE || kind == HCOMM_STEP_REDUCE || kind == HCOMM_STEP_LOAD_REDUCE;
}

// One buffer reference of a step: whether it names the peer's buffer and
// whether the step writes it.
struct Ref {
  const hcomm_bufref_t* ref;
  bool peers;
  bool written;
};

std::vector<Ref> refs_of(const hcomm_step_t& s) {
  switch (s.kind) {
    case HCOMM_STEP_SEND:
      return {{&s.src, false, false}};
    case HCOMM_STEP_RECV:
      return {{&s.dst, false, true}};
    case HCOMM_STEP_RECV_REDUCE:
    case HCOMM_STEP_COPY:
      return {{&s.src, false, false}, {&s.dst, false, true}};
    case HCOMM_STEP_REDUCE:
      return {{&s.src, false, false}, {&s.src2, false, false}, {&s.dst, false, true}};
    case HCOMM_STEP_LOAD:
      return {{&s.src, true, false}, {&s.dst, false, true}};
    case HCOMM_STEP_LOAD_REDUCE:
      return {{&s.src, false, false}, {&s.src2, true, false}, {&s.dst, false, true}};
    case HCOMM_STEP_STORE:
      return {{&s.src, false, false}, {&s.dst, true, true}};
    case HCOMM_STEP_SIGNAL:  // a payload is read when the signal is raised
      if (s.bytes) return {{&s.src, false, false}};
      return {};
    case HCOMM_STEP_WAIT:  // and written when its wait completes
      if (s.bytes) return {{&s.dst, false, true}};
      return {};
    default:
      return {};
  }
}

// A reference resolved to bytes [begin, begin + bytes) of an arena of
// `owner`; `offset` is where that lies in the buffer it named.
struct Access {
  int rank;
  size_t step;
  int owner;
  int arena;
  uint64_t begin;
  uint64_t bytes;
  uint64_t offset;
  uint32_t buffer;
  bool written;
  bool remote;  // another rank's memory
};

// Which steps of all ranks are ordered before which: `whole` when every
// chunk of x precedes every chunk of y, `chunkwise` when chunk i of x
// precedes chunk i of y only (a path of chunk-wise links, all of one chunk
// count). Steps are numbered rank by rank.
class Order {
 public:
  explicit Order(size_t steps) : words_((steps + 63) / 64), in_(steps) {}

  void link(size_t from, size_t to, bool whole) { in_[to].push_back({from, whole}); }

  // False when the links form a cycle (the simulator reports the deadlock).
  bool close() {
    const size_t n = in_.size();
    out_.assign(n, {});
    std::vector<size_t> pending(n), ready;
    for (size_t y = 0; y < n; ++y) {
      pending[y] = in_[y].size();
      for (const auto& [x, whole] : in_[y]) out_[x].push_back(y);
      if (!pending[y]) ready.push_back(y);
    }
    whole_.assign(n * words_, 0);
    chunkwise_.assign(n * words_, 0);
    while (!ready.empty()) {
      const size_t y = ready.back();
      ready.pop_back();
      sorted_.push_back(y);
      for (const auto& [x, whole] : in_[y]) {
        for (size_t w = 0; w < words_; ++w) {
          whole_[y * words_ + w] |= whole_[x * words_ + w] | (whole ? chunkwise_[x * words_ + w] : 0);
          if (!whole) chunkwise_[y * words_ + w] |= chunkwise_[x * words_ + w];
        }
        (whole ? whole_ : chunkwise_)[y * words_ + x / 64] |= uint64_t{1} << (x % 64);
      }
      for (size_t z : out_[y])
        if (--pending[z] == 0) ready.push_back(z);
    }
    return sorted_.size() == n;
  }

  // Whether some step in [begin, end) is ordered before y.
  bool any_before(size_t begin, size_t end, size_t y) const {
    for (size_t x = begin; x < end;) {
      const size_t w = y * words_ + x / 64;
      const uint64_t bits = (whole_[w] | chunkwise_[w]) >> (x % 64);
      const size_t span = std::min<size_t>(64 - x % 64, end - x);
      if (bits & (span == 64 ? ~uint64_t{0} : (uint64_t{1} << span) - 1)) return true;
      x += span;
    }
    return false;
  }

  // after[x * groups + g]: some step of group g (group_of[step]) is ordered after x.
  std::vector<bool> groups_after(const std::vector<int>& group_of, int groups) const {
    const size_t g = static_cast<size_t>(groups);
    std::vector<bool> after(in_.size() * g);
    for (auto x = sorted_.rbegin(); x != sorted_.rend(); ++x)
      for (size_t y : out_[*x]) {
        after[*x * g + static_cast<size_t>(group_of[y])] = true;
        for (size_t k = 0; k < g; ++k)
          if (after[y * g + k]) after[*x * g + k] = true;
      }
    return after;
  }

  bool whole(size_t x, size_t y) const { return bit(whole_, y, x); }
  bool chunkwise(size_t x, size_t y) const { return bit(chunkwise_, y, x); }

 private:
  bool bit(const std::vector<uint64_t>& rows, size_t row, size_t x) const {
    return (rows[row * words_ + x / 64] >> (x % 64)) & 1;
  }

  size_t words_;
  std::vector<std::vector<std::pair<size_t, bool>>> in_;
  std::vector<std::vector<size_t>> out_;
  std::vector<size_t> sorted_;               // a topological order
  std::vector<uint64_t> whole_, chunkwise_;  // row y: the steps before y
};

class Checker {
 public:
  Checker(const std::vector<RankSchedule>& ranks, const std::vector<RankMemory>& memory, const View& view, size_t es)
      : ranks_(ranks), memory_(memory), view_(view), es_(es ? es : 1) {
    for (const RankSchedule& r : ranks_) {
      first_.push_back(steps_);
      steps_ += r.steps.size();
      bool exposes = false;
      for (const hcomm_step_t& s : r.steps) {
        order_ = order_ || touches_peer(s.kind) || (s.flags & HCOMM_STEP_UNREAD);
        exposes = exposes || (s.kind == HCOMM_STEP_SIGNAL && (s.flags & HCOMM_STEP_SEND_READY));
      }
      publishes_.push_back(publishes_recv({r}));
      exposes_send_.push_back(exposes);
    }
  }

  std::vector<std::string> problems() {
    for (int r = 0; r < nranks(); ++r)
      for (size_t i = 0; i < ranks_[r].steps.size(); ++i) check_step(r, i);
    check_matching();
    check_mapped_everywhere();
    if (problems_.empty() && order_) check_order();
    return problems_;
  }

 private:
  using Key = std::tuple<int, int, uint32_t>;  // from, to, match
  struct Ends {
    std::vector<size_t> first, second;  // global step numbers: sends and receives, or signals and waits
  };

  int nranks() const { return static_cast<int>(ranks_.size()); }
  const hcomm_step_t& step(int rank, size_t i) const { return ranks_[rank].steps[i]; }
  size_t global(int rank, size_t i) const { return first_[rank] + i; }

  void fail(int rank, size_t i, const std::string& what) {
    problems_.push_back(step_name(rank, i, step(rank, i)) + ": " + what);
  }

  void check_step(int rank, size_t i) {
    const hcomm_step_t& s = step(rank, i);
    if (s.kind > HCOMM_STEP_WAIT) return fail(rank, i, "unknown kind " + std::to_string(s.kind));
    if (s.kind >= HCOMM_STEP_LOAD && !(view_.flags & HCOMM_VIEW_MAPPED))
      fail(rank, i, "a mapped-memory step in a view without HCOMM_VIEW_MAPPED");
    if (s.nchunks == 0) fail(rank, i, "no chunks");
    if (s.nchunks > (1u << 16)) fail(rank, i, std::to_string(s.nchunks) + " chunks, more than tags carry (2^16)");
    if (s.bytes % es_) fail(rank, i, "bytes not a whole number of elements");
    if (s.flags & ~uint32_t{HCOMM_STEP_FINAL | HCOMM_STEP_UNREAD | HCOMM_STEP_PUBLISH | HCOMM_STEP_SEND_READY})
      fail(rank, i, "unknown flags");
    if ((s.flags & HCOMM_STEP_SEND_READY) && s.kind != HCOMM_STEP_SIGNAL)
      fail(rank, i, "SEND_READY on a step that is not a SIGNAL");
    // The core describes a SEND to peers only where its owner says so.
    const hcomm_bufref_t* loaded =
        s.kind == HCOMM_STEP_LOAD ? &s.src : (s.kind == HCOMM_STEP_LOAD_REDUCE ? &s.src2 : nullptr);
    if (loaded && loaded->buffer == HCOMM_BUF_SEND && s.bytes && s.peer >= 0 && s.peer < nranks() &&
        !exposes_send_[s.peer])
      fail(rank, i, "loads the SEND of rank " + std::to_string(s.peer) +
                        ", whose schedule raises no SIGNAL with HCOMM_STEP_SEND_READY");
    if (s.flags & HCOMM_STEP_PUBLISH) {
      if (s.kind != HCOMM_STEP_COPY || s.dst.buffer != HCOMM_BUF_WINDOW)
        fail(rank, i, "PUBLISH on a step that is not a COPY into the WINDOW");
      else if (s.dst.offset + s.bytes > memory_[rank].layout.buffers[HCOMM_BUF_RECV].bytes)
        fail(rank, i, "PUBLISH of RECV bytes past its end");
    }
    if (s.flags & HCOMM_STEP_UNREAD) {
      const std::vector<Ref> refs = refs_of(s);
      if (std::none_of(refs.begin(), refs.end(), [](const Ref& r) { return r.written; }))
        fail(rank, i, "UNREAD on a step that writes nothing");
    }
    if ((s.flags & HCOMM_STEP_FINAL) && !reduces(s.kind)) fail(rank, i, "FINAL on a step that does not reduce");
    check_deps(rank, i);
    const bool peer_ok = s.peer >= 0 && s.peer < nranks() && (touches_peer(s.kind) || s.peer != rank);
    if ((is_transfer(s.kind) || is_flag(s.kind) || touches_peer(s.kind)) && !peer_ok)
      fail(rank, i, "bad peer " + std::to_string(s.peer));
    if (is_transfer(s.kind) && s.match >= (1u << 24))
      fail(rank, i, "match " + std::to_string(s.match) + " does not fit in 24 bits");
    if (is_flag(s.kind) && s.match >= HCOMM_MAX_SIGNALS)
      fail(rank, i, "flag " + std::to_string(s.match) + " is not below HCOMM_MAX_SIGNALS");
    if (peer_ok && (is_transfer(s.kind) || is_flag(s.kind))) {
      const bool sender = s.kind == HCOMM_STEP_SEND || s.kind == HCOMM_STEP_SIGNAL;
      Ends& ends =
          (is_flag(s.kind) ? flags_ : transfers_)[sender ? Key{rank, s.peer, s.match} : Key{s.peer, rank, s.match}];
      (sender ? ends.first : ends.second).push_back(global(rank, i));
    }
    std::vector<Access> mine;
    for (const Ref& ref : refs_of(s)) {
      if (ref.peers && !peer_ok) continue;
      Access a;
      if (!resolve(rank, i, ref, a)) continue;
      mine.push_back(a);
      // A peer's published RECV is read in place or from its window: both.
      if (a.remote && !a.written && a.buffer == HCOMM_BUF_RECV && publishes_[a.owner]) {
        const hcomm_bufref_t published = {.buffer = HCOMM_BUF_WINDOW, .offset = ref.ref->offset};
        if (resolve(rank, i, {&published, true, false}, a)) mine.push_back(a);
      }
    }
    // A copy onto itself moves nothing (the executor leaves it out).
    if (s.kind == HCOMM_STEP_COPY && mine.size() == 2 && mine[0].arena == mine[1].arena &&
        mine[0].begin == mine[1].begin)
      mine.clear();
    for (const Access& w : mine)
      for (const Access& r : mine)
        if (w.written && !r.written && w.owner == r.owner && w.arena == r.arena && w.begin != r.begin &&
            w.begin < r.begin + r.bytes && r.begin < w.begin + w.bytes)
          fail(rank, i, "the destination partly overlaps a source (they must be equal or apart)");
    if (order_)
      for (const Access& a : mine)
        if (a.bytes) accesses_.push_back(a);
  }

  void check_deps(int rank, size_t i) {
    const hcomm_step_t& s = step(rank, i);
    if (s.ndeps > HCOMM_STEP_MAX_DEPS) return fail(rank, i, "too many dependencies");
    if (s.whole_deps >> s.ndeps) fail(rank, i, "whole_deps names missing dependencies");
    for (uint32_t d = 0; d < s.ndeps; ++d) {
      if (s.deps[d] < 0 || static_cast<size_t>(s.deps[d]) >= i) {
        fail(rank, i, "dependency " + std::to_string(s.deps[d]) + " does not point backwards");
        continue;
      }
      if (!(s.whole_deps & (1u << d)) && step(rank, static_cast<size_t>(s.deps[d])).nchunks != s.nchunks)
        fail(rank, i, "chunk-wise dependency on a step with another chunk count");
    }
  }

  // Checks one reference; true and `out` filled when it lies inside its buffer.
  bool resolve(int rank, size_t i, const Ref& ref, Access& out) {
    const hcomm_step_t& s = step(rank, i);
    const int owner = ref.peers ? s.peer : rank;
    const uint32_t buffer = ref.ref->buffer;
    const std::string whose = owner == rank ? "its" : "rank " + std::to_string(owner) + "'s";
    if (buffer > HCOMM_BUF_WINDOW) {
      fail(rank, i, "unknown buffer " + std::to_string(buffer));
      return false;
    }
    const std::string name = whose + " " + kBufferNames[buffer];
    if (buffer == HCOMM_BUF_WINDOW && !(view_.flags & HCOMM_VIEW_MAPPED))
      fail(rank, i, "names a WINDOW in a view without HCOMM_VIEW_MAPPED");
    if (ref.peers && buffer == HCOMM_BUF_SCRATCH) fail(rank, i, "names " + name + ", which peers do not map");
    if (ref.peers && buffer <= HCOMM_BUF_RECV && !(view_.flags & HCOMM_VIEW_PEER_BUFFERS))
      fail(rank, i, "names " + name + " in a view without HCOMM_VIEW_PEER_BUFFERS");
    if (ref.written && buffer == HCOMM_BUF_SEND && s.bytes) fail(rank, i, "writes " + name + " buffer");
    const Region& region = memory_[owner].layout.buffers[buffer];
    if (ref.ref->offset > region.bytes || s.bytes > region.bytes - ref.ref->offset) {
      fail(rank, i,
           "range [" + std::to_string(ref.ref->offset) + ", +" + std::to_string(s.bytes) + ") outside " + name +
               " of " + std::to_string(region.bytes) + " bytes");
      return false;
    }
    out = {.rank = rank,
           .step = i,
           .owner = owner,
           .arena = region.arena,
           .begin = region.base + ref.ref->offset,
           .bytes = s.bytes,
           .offset = ref.ref->offset,
           .buffer = buffer,
           .written = ref.written,
           .remote = owner != rank};
    return true;
  }

  const hcomm_step_t& global_step(size_t g) const {
    const int rank = rank_of(g);
    return step(rank, g - first_[rank]);
  }
  int rank_of(size_t g) const {
    return static_cast<int>(std::upper_bound(first_.begin(), first_.end(), g) - first_.begin()) - 1;
  }
  static std::string pair_name(const Key& key, const char* what) {
    const auto [from, to, match] = key;
    return std::string(what) + " " + std::to_string(from) + " -> " + std::to_string(to) + " match " +
           std::to_string(match) + ": ";
  }

  void check_matching() {
    for (const auto& [key, ends] : transfers_) {
      if (ends.first.size() != 1 || ends.second.size() != 1) {
        problems_.push_back(pair_name(key, "transfer") + std::to_string(ends.first.size()) + " sends, " +
                            std::to_string(ends.second.size()) + " receives");
        continue;
      }
      const hcomm_step_t &send = global_step(ends.first[0]), &recv = global_step(ends.second[0]);
      if (send.bytes != recv.bytes || send.nchunks != recv.nchunks)
        problems_.push_back(pair_name(key, "transfer") + "send of " + std::to_string(send.bytes) + " bytes in " +
                            std::to_string(send.nchunks) + " chunks, receive of " + std::to_string(recv.bytes) +
                            " bytes in " + std::to_string(recv.nchunks));
    }
    // Each chunk of a SIGNAL is one signal; the j-th pairs with the j-th WAIT chunk.
    for (const auto& [key, ends] : flags_) {
      uint64_t raised = 0, awaited = 0;
      for (size_t g : ends.first) raised += global_step(g).nchunks;
      for (size_t g : ends.second) awaited += global_step(g).nchunks;
      if (awaited > raised)
        problems_.push_back(pair_name(key, "flag") + std::to_string(awaited) + " WAIT chunks but " +
                            std::to_string(raised) + " signals to pair with");
      if (raised > HCOMM_MAX_SIGNAL_OCCURRENCES)
        problems_.push_back(pair_name(key, "flag") + std::to_string(raised) +
                            " signals, more than HCOMM_MAX_SIGNAL_OCCURRENCES");
    }
  }

  // The core raises the signals of one pair and flag in order, chunk after
  // chunk, step after step, so each SIGNAL step precedes the next whole. A
  // WAIT chunk completes after its signal: the WAIT step follows whole the
  // last SIGNAL step whose signals all pair with its first chunk or earlier
  // ones, and chunk-wise a SIGNAL step whose chunks pair with its own one to
  // one.
  void link_signals(Order& order) const {
    for (const auto& [key, ends] : flags_) {
      for (size_t k = 1; k < ends.first.size(); ++k) order.link(ends.first[k - 1], ends.first[k], true);
      uint64_t waited = 0;
      for (size_t w : ends.second) {
        const uint64_t first_wait = waited, chunks = global_step(w).nchunks;
        waited += chunks;
        uint64_t raised = 0;
        size_t before = SIZE_MAX;
        for (size_t g : ends.first) {
          const uint64_t first_signal = raised;
          raised += global_step(g).nchunks;
          if (raised - 1 <= first_wait)
            before = g;
          else if (first_signal == first_wait && raised - first_signal == chunks)
            order.link(g, w, false);
          if (first_signal > first_wait) break;
        }
        if (before != SIZE_MAX) order.link(before, w, true);
      }
    }
  }

  static bool uses_mapped(const RankSchedule& r) {
    for (const hcomm_step_t& s : r.steps) {
      if (s.kind >= HCOMM_STEP_LOAD && s.kind <= HCOMM_STEP_WAIT) return true;
      for (const Ref& ref : refs_of(s))
        if (ref.ref->buffer == HCOMM_BUF_WINDOW) return true;
    }
    return false;
  }

  // The core counts mapped calls alike on every rank.
  void check_mapped_everywhere() {
    int user = -1, other = -1;
    for (int r = 0; r < nranks(); ++r) (uses_mapped(ranks_[r]) ? user : other) = r;
    if (user >= 0 && other >= 0)
      problems_.push_back("rank " + std::to_string(user) + " uses mapped steps or its WINDOW but rank " +
                          std::to_string(other) + " does not: a call uses them on every rank or on none");
  }

  std::string access_name(const Access& a) const {
    return step_name(a.rank, a.step, step(a.rank, a.step)) + (a.written ? " writing " : " reading ") +
           (a.owner == a.rank ? "its" : "rank " + std::to_string(a.owner) + "'s") + " " + kBufferNames[a.buffer] +
           " [" + std::to_string(a.offset) + ", +" + std::to_string(a.bytes) + ")";
  }

  // Bytes of chunk c of an access, as the executor cuts its step.
  std::pair<uint64_t, uint64_t> chunk(const Access& a, uint32_t c) const {
    const hcomm_step_t& s = step(a.rank, a.step);
    const uint64_t elems = s.bytes / es_;
    const uint64_t first = elems * c / s.nchunks, last = elems * (c + 1) / s.nchunks;
    return {a.begin + first * es_, a.begin + last * es_};
  }

  // Whether chunk i of one access overlaps chunk j of the other for some i != j.
  bool chunks_cross(const Access& a, const Access& b) const {
    const uint32_t n = step(a.rank, a.step).nchunks;
    for (uint32_t i = 0, j = 0; i < n && j < n;) {
      const auto [a0, a1] = chunk(a, i);
      const auto [b0, b1] = chunk(b, j);
      if (a0 < b1 && b0 < a1 && a0 < a1 && b0 < b1 && i != j) return true;
      if (a1 <= b1)
        ++i;
      else
        ++j;
    }
    return false;
  }

  bool ordered(const Order& order, const Access& a, const Access& b) const {
    const size_t x = global(a.rank, a.step), y = global(b.rank, b.step);
    if (order.whole(x, y) || order.whole(y, x)) return true;
    return (order.chunkwise(x, y) || order.chunkwise(y, x)) && !chunks_cross(a, b);
  }

  void check_order() {
    Order order(steps_);
    for (int r = 0; r < nranks(); ++r)
      for (size_t i = 0; i < ranks_[r].steps.size(); ++i) {
        const hcomm_step_t& s = step(r, i);
        for (uint32_t d = 0; d < s.ndeps; ++d)
          order.link(global(r, static_cast<size_t>(s.deps[d])), global(r, i), s.whole_deps & (1u << d));
      }
    for (const auto& [key, ends] : transfers_) order.link(ends.first[0], ends.second[0], false);
    link_signals(order);
    if (!order.close()) return;
    check_conflicts(order);
    check_unread(order);
    std::vector<int> rank_of_step;
    for (int r = 0; r < nranks(); ++r) rank_of_step.resize(rank_of_step.size() + ranks_[r].steps.size(), r);
    const std::vector<bool> after = order.groups_after(rank_of_step, nranks());
    for (const Access& a : accesses_) {
      if (!a.remote) continue;
      const size_t x = global(a.rank, a.step);
      const size_t begin = first_[a.owner], end = begin + ranks_[a.owner].steps.size();
      const bool entered = order.any_before(begin, end, x);
      const bool released = after[x * static_cast<size_t>(nranks()) + static_cast<size_t>(a.owner)];
      if (!entered)
        problems_.push_back(access_name(a) + " before any step of rank " + std::to_string(a.owner) +
                            " is ordered before it: WAIT for a SIGNAL rank " + std::to_string(a.owner) +
                            " raises once that memory is ready");
      if (!released && a.buffer <= HCOMM_BUF_RECV)
        problems_.push_back("rank " + std::to_string(a.owner) + " may return from the call while " + access_name(a) +
                            ": rank " + std::to_string(a.owner) + " must WAIT for a SIGNAL rank " +
                            std::to_string(a.rank) + " raises after that step");
    }
  }

  // What an UNREAD step writes, no step of any rank reads after it: every
  // read of those bytes is ordered before it.
  void check_unread(const Order& order) {
    for (const Access& w : accesses_) {
      if (!w.written || !(step(w.rank, w.step).flags & HCOMM_STEP_UNREAD)) continue;
      const size_t x = global(w.rank, w.step);
      for (const Access& r : accesses_) {
        if (r.written || r.owner != w.owner || r.arena != w.arena || (r.rank == w.rank && r.step == w.step)) continue;
        if (r.begin >= w.begin + w.bytes || w.begin >= r.begin + r.bytes) continue;
        const size_t y = global(r.rank, r.step);
        if (order.whole(y, x) || (order.chunkwise(y, x) && !chunks_cross(r, w))) continue;
        if (problems_.size() == kMaxConflicts) return;
        problems_.push_back(access_name(r) + " reads what UNREAD " + access_name(w) + " writes, and not before it");
      }
    }
  }

  // Two steps that touch the same bytes of one rank, one of them writing and
  // one of them another rank's step, must be ordered. A broken schedule
  // reports the first kMaxConflicts pairs.
  void check_conflicts(const Order& order) {
    std::map<std::pair<int, int>, std::vector<const Access*>> by_memory;
    for (const Access& a : accesses_) by_memory[{a.owner, a.arena}].push_back(&a);
    for (auto& [memory, list] : by_memory) {
      std::sort(list.begin(), list.end(), [](const Access* a, const Access* b) { return a->begin < b->begin; });
      for (size_t i = 0; i < list.size(); ++i)
        for (size_t j = i + 1; j < list.size() && list[j]->begin < list[i]->begin + list[i]->bytes; ++j) {
          const Access &a = *list[i], &b = *list[j];
          if ((!a.written && !b.written) || (!a.remote && !b.remote)) continue;
          if ((a.rank == b.rank && a.step == b.step) || ordered(order, a, b)) continue;
          if (problems_.size() == kMaxConflicts) return;
          problems_.push_back(access_name(a) + " and " + access_name(b) +
                              " are not ordered: a WAIT for a SIGNAL raised after the earlier one is missing");
        }
    }
  }

  const std::vector<RankSchedule>& ranks_;
  const std::vector<RankMemory>& memory_;
  std::vector<bool> publishes_;  // per rank: a step publishes its RECV (HCOMM_STEP_PUBLISH)
  std::vector<bool> exposes_send_;  // per rank: a SIGNAL says peers may read its SEND
  const View& view_;
  const size_t es_;
  std::vector<size_t> first_;  // rank -> global number of its step 0
  size_t steps_ = 0;
  bool order_ = false;  // some step touches a peer's memory: check the order of accesses
  std::map<Key, Ends> transfers_, flags_;
  std::vector<Access> accesses_;
  std::vector<std::string> problems_;
};

}  // namespace

std::string step_name(int rank, size_t step, const hcomm_step_t& s) {
  const std::string kind = s.kind <= HCOMM_STEP_WAIT ? kKindNames[s.kind] : "kind " + std::to_string(s.kind);
  std::string name = "rank " + std::to_string(rank) + " step " + std::to_string(step) + " (" + kind;
  if (is_transfer(s.kind) || is_flag(s.kind) || touches_peer(s.kind)) name += " peer " + std::to_string(s.peer);
  return name + ")";
}

std::vector<std::string> check_schedules(const std::vector<RankSchedule>& ranks, const std::vector<RankMemory>& memory,
                                         const View& view, size_t dtype_size) {
  return Checker(ranks, memory, view, dtype_size).problems();
}

}  // namespace hcomm::algotest
