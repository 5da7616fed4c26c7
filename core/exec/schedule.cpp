#include "core/exec/schedule.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "core/common/error.hpp"
#include "core/exec/window.hpp"

namespace hcomm::exec {

namespace {

bool is_mapped(uint32_t kind) { return kind >= HCOMM_STEP_LOAD && kind <= HCOMM_STEP_WAIT; }

bool is_data(uint32_t kind) {
  return kind == HCOMM_STEP_REDUCE || kind == HCOMM_STEP_COPY || kind == HCOMM_STEP_LOAD ||
         kind == HCOMM_STEP_LOAD_REDUCE || kind == HCOMM_STEP_STORE;
}

// Schedule::chain_end. A chain starts at a data step of several chunks and
// takes each later step that is either a WAIT of one chunk that depends on
// nothing in the chain (it is run before the chain's data), or a data step
// of as many chunks that depends chunkwise on the chain's last data step and
// otherwise only on the chain's WAITs and on steps before the chain.
std::vector<uint32_t> chain_ends(const std::vector<hcomm_step_t>& steps) {
  const uint32_t n = static_cast<uint32_t>(steps.size());
  std::vector<uint32_t> end(n);
  for (uint32_t first = 0; first < n; ++first) {
    end[first] = first + 1;
    const hcomm_step_t& head = steps[first];
    if (!is_data(head.kind) || head.nchunks < 2) continue;
    uint32_t last_data = first, data_steps = 1, k = first + 1;
    for (; k < n; ++k) {
      const hcomm_step_t& s = steps[k];
      bool linked = false, fits = true;
      for (uint32_t d = 0; d < s.ndeps && fits; ++d) {
        const uint32_t dep = static_cast<uint32_t>(s.deps[d]);
        const bool whole = s.whole_deps & (1u << d);
        if (dep < first) continue;
        if (s.kind == HCOMM_STEP_WAIT || (whole && steps[dep].kind != HCOMM_STEP_WAIT)) fits = false;
        linked |= !whole && dep == last_data;
      }
      if (!fits) break;
      if (s.kind == HCOMM_STEP_WAIT && s.nchunks == 1) continue;
      if (!is_data(s.kind) || s.nchunks != head.nchunks || !linked) break;
      last_data = k;
      ++data_steps;
    }
    if (data_steps > 1) end[first] = last_data + 1;
  }
  return end;
}

// Schedules with more waits run through the general executor.
constexpr size_t kMaxInOrderWaits = 1024;

// Schedule::in_order, from the steps and their signal order: per step, the
// WAITs it depends on as bits (its own among them, if it is one).
bool runs_in_order(const Schedule& s) {
  const size_t n = s.steps.size();
  size_t waits = 0;
  for (const hcomm_step_t& st : s.steps) {
    if (st.kind == HCOMM_STEP_SEND || st.kind == HCOMM_STEP_RECV || st.kind == HCOMM_STEP_RECV_REDUCE) return false;
    waits += st.kind == HCOMM_STEP_WAIT;
  }
  if (waits > kMaxInOrderWaits) return false;
  if (waits == 0) return true;  // every SIGNAL trivially follows all (no) WAITs
  const size_t words = (waits + 63) / 64;
  std::vector<uint64_t> after(n * words, 0);
  size_t seen = 0;  // WAITs before step i
  for (size_t i = 0; i < n; ++i) {
    const hcomm_step_t& st = s.steps[i];
    uint64_t* mine = &after[i * words];
    auto inherit = [&](size_t from) {
      for (size_t w = 0; w < words; ++w) mine[w] |= after[from * words + w];
    };
    for (uint32_t d = 0; d < st.ndeps; ++d) inherit(static_cast<size_t>(st.deps[d]));
    if (s.previous_signal[i] >= 0) inherit(static_cast<size_t>(s.previous_signal[i]));
    if (st.kind == HCOMM_STEP_WAIT) {
      mine[seen / 64] |= uint64_t{1} << (seen % 64);
      ++seen;
    } else if (st.kind == HCOMM_STEP_SIGNAL) {
      for (size_t w = 0; w < seen / 64; ++w)
        if (~mine[w]) return false;
      if (seen % 64 && (~mine[seen / 64] & ((uint64_t{1} << (seen % 64)) - 1))) return false;
    }
  }
  return true;
}

// Who waits for whom, the first chunk of each step, and the order of signals.
void derive(Schedule& s) {
  const size_t n = s.steps.size();
  std::vector<std::vector<uint32_t>> waiting(n);
  std::map<std::pair<int32_t, uint32_t>, uint32_t> signalled, awaited;
  std::map<std::pair<int32_t, uint32_t>, int32_t> last_signal;
  std::set<std::pair<int32_t, uint32_t>> carries[2];  // pairs whose waits [0] or signals [1] carry a payload
  s.chunk_base.assign(n, 0);
  s.signal_base.assign(n, 0);
  s.previous_signal.assign(n, -1);
  s.total_chunks = 0;
  for (size_t i = 0; i < n; ++i) {
    const hcomm_step_t& st = s.steps[i];
    for (uint32_t d = 0; d < st.ndeps; ++d) waiting[st.deps[d]].push_back(static_cast<uint32_t>(i));
    s.chunk_base[i] = s.total_chunks;
    s.total_chunks += st.nchunks;
    if (st.kind != HCOMM_STEP_SIGNAL && st.kind != HCOMM_STEP_WAIT) continue;
    const std::pair<int32_t, uint32_t> pair{st.peer, st.match};
    auto& counts = st.kind == HCOMM_STEP_SIGNAL ? signalled : awaited;
    auto& carried = carries[st.kind == HCOMM_STEP_SIGNAL];
    // A payload lives in its flags' lines until its reader took it: one
    // signal of each of those pairs per call.
    s.signal_base[i] = counts[pair];
    for (uint32_t j = 0; j < window::lines_of(st.bytes); ++j) {
      const std::pair<int32_t, uint32_t> line{st.peer, st.match + j};
      uint32_t& count = counts[line];
      if (count > 0 && (st.bytes || carried.contains(line)))
        HCOMM_THROW(HCOMM_ERR_INTERNAL, "algorithm %s built an invalid schedule: step %zu: a signal with a payload "
                    "must be the only one of its peer and match (and of the matches its payload spans) in a call",
                    s.algorithm.c_str(), i);
      if (st.bytes) carried.insert(line);
      count += st.nchunks;
    }
    const uint32_t count = counts[pair];
    if (count > window::kMaxOccurrences)
      HCOMM_THROW(HCOMM_ERR_INTERNAL, "algorithm %s built an invalid schedule: step %zu: more than %llu signals of one "
                  "peer and match in a call", s.algorithm.c_str(), i,
                  static_cast<unsigned long long>(window::kMaxOccurrences));
    if (st.kind == HCOMM_STEP_SIGNAL) {
      auto [it, first] = last_signal.try_emplace(pair, static_cast<int32_t>(i));
      if (!first) {
        s.previous_signal[i] = std::exchange(it->second, static_cast<int32_t>(i));
        waiting[s.previous_signal[i]].push_back(static_cast<uint32_t>(i));
      }
    }
  }
  s.dependents_begin.assign(n + 1, 0);
  s.dependents.clear();
  for (size_t i = 0; i < n; ++i) {
    std::sort(waiting[i].begin(), waiting[i].end());
    waiting[i].erase(std::unique(waiting[i].begin(), waiting[i].end()), waiting[i].end());
    s.dependents.insert(s.dependents.end(), waiting[i].begin(), waiting[i].end());
    s.dependents_begin[i + 1] = static_cast<uint32_t>(s.dependents.size());
  }
  s.in_order = runs_in_order(s);
  s.chain_end = chain_ends(s.steps);
}

}  // namespace

void Schedule::chunk_range(const hcomm_step_t& s, size_t elem_size, uint32_t c, uint64_t* offset, uint64_t* bytes) {
  if (s.nchunks == 1) {  // most steps of small calls: no divisions
    *offset = 0;
    *bytes = s.bytes;
    return;
  }
  uint64_t elems = s.bytes / elem_size;
  uint64_t first = elems * c / s.nchunks, last = elems * (c + 1) / s.nchunks;
  *offset = first * elem_size;
  *bytes = (last - first) * elem_size;
}

void finalize_schedule(Schedule& s, uint64_t send_bytes, uint64_t recv_bytes) {
  const size_t es = s.args.dtype_size ? s.args.dtype_size : 1;
  auto fail = [&](size_t i, const char* what) {
    HCOMM_THROW(HCOMM_ERR_INTERNAL, "algorithm %s built an invalid schedule: step %zu: %s", s.algorithm.c_str(), i,
                what);
  };
  // This rank's buffers; a window is checked when the call runs.
  auto check_ref = [&](size_t i, const hcomm_bufref_t& r, uint64_t bytes) {
    if (r.buffer == HCOMM_BUF_WINDOW) {
      if (r.offset > UINT64_MAX - bytes) fail(i, "buffer reference out of range");
      s.window_extent = std::max(s.window_extent, r.offset + bytes);
      s.window_base = std::min(s.window_base, r.offset);
      s.own_window_lo = std::min(s.own_window_lo, r.offset);
      s.own_window_hi = std::max(s.own_window_hi, r.offset + bytes);
      s.mapped = true;
      return;
    }
    uint64_t limit = r.buffer == HCOMM_BUF_SEND   ? send_bytes
                     : r.buffer == HCOMM_BUF_RECV ? recv_bytes
                     : r.buffer == HCOMM_BUF_SCRATCH ? s.algorithm_scratch
                                                   : 0;
    if (r.buffer > HCOMM_BUF_WINDOW) fail(i, "unknown buffer");
    if (r.offset > limit || bytes > limit - r.offset) fail(i, "buffer reference out of range");
  };
  // A peer's buffers: its SEND and RECV are checked against what it publishes.
  auto check_peer_ref = [&](size_t i, const hcomm_bufref_t& r, uint64_t bytes) {
    if (r.buffer == HCOMM_BUF_SCRATCH || r.buffer > HCOMM_BUF_WINDOW) fail(i, "a peer's buffer that is not SEND, RECV or WINDOW");
    if (r.offset > UINT64_MAX - bytes) fail(i, "buffer reference out of range");
    if (r.buffer == HCOMM_BUF_WINDOW) {
      s.window_extent = std::max(s.window_extent, r.offset + bytes);
      s.window_base = std::min(s.window_base, r.offset);
    }
  };
  uint64_t staging = s.algorithm_scratch;
  s.send_bytes = send_bytes;
  s.recv_bytes = recv_bytes;
  s.mapped = false;
  s.peers_read_send = false;
  s.window_extent = 0;
  s.window_base = UINT64_MAX;
  s.own_window_lo = UINT64_MAX;
  s.own_window_hi = 0;
  s.stores_to_windows = false;
  s.publishes_recv = false;
  s.staging_offset.assign(s.steps.size(), 0);
  s.staging_slot.assign(s.steps.size(), 0);
  for (size_t i = 0; i < s.steps.size(); ++i) {
    hcomm_step_t& st = s.steps[i];
    if (st.nchunks == 0) st.nchunks = 1;
    if (st.nchunks > kMaxChunks) fail(i, "more chunks than tags can carry");
    if (st.bytes % es) fail(i, "bytes not a whole number of elements");
    if (st.ndeps > HCOMM_STEP_MAX_DEPS) fail(i, "too many dependencies");
    for (uint32_t d = 0; d < st.ndeps; ++d) {
      if (st.deps[d] < 0 || static_cast<size_t>(st.deps[d]) >= i) fail(i, "a dependency does not point backwards");
      bool whole = st.whole_deps & (1u << d);
      if (!whole && s.steps[st.deps[d]].nchunks != st.nchunks)
        fail(i, "a chunk-wise dependency on a step with another chunk count");
    }
    if (is_mapped(st.kind)) {
      s.mapped = true;
      if (st.peer < 0) fail(i, "a mapped step names no peer");
    }
    switch (st.kind) {
      case HCOMM_STEP_SEND: check_ref(i, st.src, st.bytes); break;
      case HCOMM_STEP_RECV: check_ref(i, st.dst, st.bytes); break;
      case HCOMM_STEP_RECV_REDUCE: {
        check_ref(i, st.src, st.bytes);
        check_ref(i, st.dst, st.bytes);
        uint64_t elems = st.bytes / es;
        uint64_t max_chunk = (elems + st.nchunks - 1) / st.nchunks * es;
        max_chunk = (max_chunk + 63) & ~uint64_t{63};  // cache-line aligned slots
        s.staging_offset[i] = staging;
        s.staging_slot[i] = max_chunk;
        staging += max_chunk * std::min(st.nchunks, kMaxInflightChunks);
        break;
      }
      case HCOMM_STEP_REDUCE:
        check_ref(i, st.src, st.bytes);
        check_ref(i, st.src2, st.bytes);
        check_ref(i, st.dst, st.bytes);
        break;
      case HCOMM_STEP_COPY:
        check_ref(i, st.src, st.bytes);
        check_ref(i, st.dst, st.bytes);
        if (st.flags & HCOMM_STEP_PUBLISH) {
          if (st.dst.buffer != HCOMM_BUF_WINDOW) fail(i, "HCOMM_STEP_PUBLISH on a COPY whose dst is not the WINDOW");
          if (st.dst.offset > recv_bytes || st.bytes > recv_bytes - st.dst.offset)
            fail(i, "HCOMM_STEP_PUBLISH: the window range published stands for RECV bytes past its end");
          s.publishes_recv = true;
        }
        break;
      case HCOMM_STEP_LOAD:
        check_peer_ref(i, st.src, st.bytes);
        check_ref(i, st.dst, st.bytes);
        break;
      case HCOMM_STEP_LOAD_REDUCE:
        check_ref(i, st.src, st.bytes);
        check_peer_ref(i, st.src2, st.bytes);
        check_ref(i, st.dst, st.bytes);
        break;
      case HCOMM_STEP_STORE:
        check_ref(i, st.src, st.bytes);
        check_peer_ref(i, st.dst, st.bytes);
        s.stores_to_windows |= st.dst.buffer == HCOMM_BUF_WINDOW;
        break;
      case HCOMM_STEP_SIGNAL:
      case HCOMM_STEP_WAIT:
        if (st.match >= HCOMM_MAX_SIGNALS) fail(i, "signal match id not below HCOMM_MAX_SIGNALS");
        if (st.bytes) {
          if (st.bytes > HCOMM_SIGNAL_MAX_PAYLOAD_BYTES)
            fail(i, "a signal's payload exceeds HCOMM_SIGNAL_MAX_PAYLOAD_BYTES");
          if (st.match + window::lines_of(st.bytes) > HCOMM_MAX_SIGNALS)
            fail(i, "a signal's payload spans flags at or above HCOMM_MAX_SIGNALS");
          if (st.nchunks != 1) fail(i, "a signal with a payload in more than one chunk");
          check_ref(i, st.kind == HCOMM_STEP_SIGNAL ? st.src : st.dst, st.bytes);
        }
        break;
      default: fail(i, "unknown step kind");
    }
    if (st.flags & HCOMM_STEP_SEND_READY) {
      if (st.kind != HCOMM_STEP_SIGNAL) fail(i, "HCOMM_STEP_SEND_READY on a step that is not a SIGNAL");
      s.peers_read_send = true;
    }
    if ((st.flags & HCOMM_STEP_PUBLISH) && st.kind != HCOMM_STEP_COPY)
      fail(i, "HCOMM_STEP_PUBLISH on a step that is not a COPY");
    if ((st.kind == HCOMM_STEP_SEND || st.kind == HCOMM_STEP_RECV || st.kind == HCOMM_STEP_RECV_REDUCE) &&
        st.match >= (1u << 24))
      fail(i, "match id does not fit in 24 bits");
  }
  s.uses_halves = s.window_extent > 0 || s.peers_read_send;
  s.scratch_bytes = staging;
  derive(s);
}

}  // namespace hcomm::exec
