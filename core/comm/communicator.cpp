#include "core/comm/communicator.hpp"

#include <sched.h>
#include <sys/random.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstring>

#include "core/algorithm/tuning.hpp"
#include "core/common/error.hpp"
#include "core/common/log.hpp"
#include "core/common/names.hpp"
#include "core/common/settings.hpp"
#include "core/topology/gather.hpp"
#include "core/topology/topo_file.hpp"
#include "core/transport/transport.hpp"

namespace hcomm::comm {

namespace {

using Clock = std::chrono::steady_clock;

// Wait policy: a blocking wake-up across cores costs tens of microseconds,
// so an idle rank spins first, then yields the core (other ranks may need it
// when they outnumber the cores), and only then sleeps in the transports.
// When this host's ranks outnumber its cores, or a mapped peer this rank
// waits for last waited on its own CPU (the scheduler put them together, the
// other CPUs being busy), a spinning rank steals the core of the rank it
// waits for (which it woke, but which need not preempt it), so it yields at
// once, and sleeps after kSharedYieldFor (a wake-up on a shared core is
// cheap; a yield may leave the CPU to this rank until the next tick). On a
// shared CPU it also sleeps at once in the first of every kSharedProbeEvery
// idle spells in a row: waking, it is placed on an idle CPU if there is one.
constexpr auto kSpinFor = std::chrono::microseconds(50);
constexpr auto kYieldFor = std::chrono::microseconds(2000);
constexpr auto kSharedYieldFor = std::chrono::microseconds(20);
constexpr int64_t kSleepUs = 1000;
constexpr uint64_t kSharedProbeEvery = 256;
// While spinning, a mapped call's flag is looked at this many times between
// rounds of the progress loop.
constexpr int kFlagLooks = 64;
constexpr int kMaxFlagSpins = 1000;

// More ranks on this host (of this communicator, or of the job as the
// launcher tells it) than CPUs this rank may run on.
bool host_oversubscribed(int ranks_here, const bootstrap::Locality& job) {
  cpu_set_t cpus;
  if (sched_getaffinity(0, sizeof cpus, &cpus) != 0) return false;
  return std::max(ranks_here, job.size) > CPU_COUNT(&cpus);
}
// What a synchronisation costs on top when a host's ranks outnumber its
// cores: a time slice handed over (fitted to one_shot against two_shot,
// which synchronises once more, at 1-8 KiB).
constexpr double kOversubscribedSyncUs = 3.0;
constexpr auto kPeerCheckInterval = std::chrono::milliseconds(100);
// A call idle for this part of its timeout reports the peers it waits on to
// the rendezvous, which judges the same part later which ranks hold it up:
// the answer is there before the timeout, when every rank held up has
// reported too.
constexpr int kStallReportParts = 3;
// How long a rank whose peer signalled with another call signature waits for
// that peer to say what it called.
constexpr double kResolveWithin = 5.0;

// "rank 2", "ranks 2, 5"
std::string rank_list(const std::vector<int>& ranks) {
  std::string out = ranks.size() == 1 ? "rank " : "ranks ";
  for (size_t i = 0; i < ranks.size(); ++i) out += (i ? ", " : "") + std::to_string(ranks[i]);
  return out;
}

std::array<uint8_t, 16> random_bytes() {
  std::array<uint8_t, 16> key{};
  if (getrandom(key.data(), key.size(), 0) != static_cast<ssize_t>(key.size()))
    HCOMM_THROW(HCOMM_ERR_SYSTEM, "getrandom failed: %s", strerror(errno));
  return key;
}

// Messages from this rank to itself. A send is copied into the oldest
// receive posted with its tag, or held until one is posted, so that it
// completes at once (a blocking send to itself returns). As on a transport,
// one tag's messages match in order; lengths must be equal.
class SelfLink {
 public:
  explicit SelfLink(int rank) : rank_(rank) {}

  void* isend(const void* buf, size_t len, uint64_t tag) {
    if (auto posted = first(posted_, tag); posted != posted_.end()) {
      deliver(*posted->second, buf, len);
      posted_.erase(posted);
    } else {
      const auto* bytes = static_cast<const uint8_t*>(buf);
      held_.emplace(tag, std::vector<uint8_t>(bytes, bytes + len));
    }
    return &sent_;
  }

  void* irecv(void* buf, size_t len, uint64_t tag) {
    Receive& r = receives_.emplace_back(Receive{.buf = buf, .len = len});
    if (auto held = first(held_, tag); held != held_.end()) {
      deliver(r, held->second.data(), held->second.size());
      held_.erase(held);
    } else {
      posted_.emplace(tag, &r);
    }
    return &r;
  }

  bool test(void* request, size_t* bytes) {
    if (request == &sent_) return true;
    auto it = std::find_if(receives_.begin(), receives_.end(), [&](const Receive& r) { return &r == request; });
    if (!it->done) return false;
    std::string error = std::move(it->error);
    *bytes = it->len;
    receives_.erase(it);
    if (!error.empty()) throw Error(HCOMM_ERR_INVALID_ARGUMENT, error);
    return true;
  }

 private:
  struct Receive {
    void* buf;
    size_t len;
    bool done = false;
    std::string error;
  };

  // The oldest entry of `tag` (equal keys keep their insertion order).
  template <class Map>
  static typename Map::iterator first(Map& map, uint64_t tag) {
    auto it = map.lower_bound(tag);
    return it != map.end() && it->first == tag ? it : map.end();
  }

  void deliver(Receive& r, const void* data, size_t len) {
    r.done = true;
    if (len != r.len)
      r.error = format("rank %d sent itself a message of %zu bytes that met a receive of %zu bytes", rank_, len, r.len);
    else if (len)
      std::memcpy(r.buf, data, len);
  }

  int rank_;
  char sent_ = 0;  // the request of every send: sends complete at once
  std::list<Receive> receives_;
  std::multimap<uint64_t, Receive*> posted_;
  std::multimap<uint64_t, std::vector<uint8_t>> held_;
};

// Point to point as a one-step schedule to or from args.root, built through
// the algorithms' builder so that it is chunked and checked as theirs are.
template <hcomm_step_kind_t kKind>
hcomm_result_t build_p2p(const hcomm_coll_args_t* args, const hcomm_comm_view_t*, hcomm_schedule_builder_t* b) {
  const uint64_t bytes = uint64_t{args->count} * args->dtype_size;
  hcomm_step_t step{.kind = kKind, .peer = args->root, .bytes = bytes,
                    .nchunks = b->chunks_for(b, bytes, args->dtype_size)};
  if (kKind == HCOMM_STEP_SEND)
    step.src = {.buffer = HCOMM_BUF_SEND, .offset = 0};
  else
    step.dst = {.buffer = HCOMM_BUF_RECV, .offset = 0};
  return b->add(b, &step) < 0 ? HCOMM_ERR_INTERNAL : HCOMM_SUCCESS;
}

constexpr hcomm_algorithm_desc_t p2p_algorithm(const char* name, decltype(&build_p2p<HCOMM_STEP_SEND>) build) {
  return {.size = sizeof(hcomm_algorithm_desc_t),
          .name = name,
          .colls = 1u << HCOMM_COLL_SENDRECV,
          .mem_kinds = HCOMM_MEM_HOST | HCOMM_MEM_CUDA,
          .min_bytes = 0,
          .max_bytes = UINT64_MAX,
          .min_ranks = 1,
          .max_ranks = INT_MAX,
          .cost = nullptr,
          .build = build};
}
constexpr hcomm_algorithm_desc_t kSendAlgorithm = p2p_algorithm("send", build_p2p<HCOMM_STEP_SEND>);
constexpr hcomm_algorithm_desc_t kRecvAlgorithm = p2p_algorithm("recv", build_p2p<HCOMM_STEP_RECV>);

// The layout arrays of hcomm_coll_args_t, in the order of Key::layout.
constexpr std::array<const size_t* hcomm_coll_args_t::*, 4> kLayoutFields = {
    &hcomm_coll_args_t::send_counts, &hcomm_coll_args_t::send_displs, &hcomm_coll_args_t::recv_counts,
    &hcomm_coll_args_t::recv_displs};

}  // namespace

// The communicator's messages: to other ranks through their transports'
// endpoints, to itself in memory; mapped memory as Peers maps it.
class Links final : public exec::PeerIO {
 public:
  Links(Peers& peers, int rank) : peers_(peers), rank_(rank), self_(rank) {}

  void* isend(int peer, const void* buf, size_t len, uint64_t tag) override {
    return peer == rank_ ? self_.isend(buf, len, tag) : peers_.isend(peer, buf, len, tag);
  }
  void* irecv(int peer, void* buf, size_t len, uint64_t tag) override {
    return peer == rank_ ? self_.irecv(buf, len, tag) : peers_.irecv(peer, buf, len, tag);
  }
  bool test(int peer, void* request, size_t* bytes) override {
    return peer == rank_ ? self_.test(request, bytes) : peers_.test(peer, request, bytes);
  }
  void progress() override { peers_.progress(); }
  void wait(int64_t timeout_us) override { peers_.wait(timeout_us); }
  void check_peers() override { peers_.check_peers(); }
  exec::MappedIO* mapped() override { return peers_.mapped(); }

 private:
  Peers& peers_;
  int rank_;
  SelfLink self_;
};

Communicator::Communicator(std::unique_ptr<bootstrap::Bootstrap> bootstrap, const Config& config)
    : bootstrap_(std::move(bootstrap)),
      rank_(bootstrap_->rank()),
      size_(bootstrap_->size()),
      config_(config),
      check_(rank_, size_),
      topology_(topology::gather(*bootstrap_)),
      oversubscribed_(host_oversubscribed(static_cast<int>(topology_.host_ranks(topology_.host_of().at(rank_)).size()),
                                          bootstrap_->locality())) {
  log::set_rank(rank_);
  // The key that authenticates this communicator's transport connections:
  // derived from the job's secret and rank 0's fresh nonce, so it never travels.
  const std::array<uint8_t, 16> nonce = random_bytes();
  std::vector<uint8_t> nonces(nonce.size() * size_);
  bootstrap_->allgather(nonce.data(), nonce.size(), nonces.data());
  const std::array<uint8_t, 16> key = bootstrap_->derive_key(nonces.data(), nonce.size());

  peers_ = std::make_unique<Peers>(*bootstrap_, key, topology_, config_);
  links_ = std::make_unique<Links>(*peers_, rank_);
  log_topology();
  hcomm_comm_view_t view{.size = sizeof(hcomm_comm_view_t),
                         .rank = rank_,
                         .nranks = size_,
                         .link = peers_->link_model(),
                         .nnodes = topology_.nhosts(),
                         .node_of = topology_.host_of().data(),
                         .intra = peers_->intra_model(),
                         .inter = peers_->inter_model(),
                         .chunk_bytes = config_.chunk_bytes};
  peers_->describe_mapped(view);
  if (any_rank_oversubscribed()) {
    // Every wait for a peer then waits for the scheduler to run it.
    view.flags |= HCOMM_VIEW_OVERSUBSCRIBED;
    for (hcomm_link_model_t* m : {&view.link, &view.intra, &view.inter, &view.mapped})
      m->alpha_us += kOversubscribedSyncUs;
    HCOMM_INFO(INIT, "rank %d: a host has more ranks than cores: a synchronisation costs %g us more in the cost model",
               rank_, kOversubscribedSyncUs);
  }
  algorithm::Tuning tuning = algorithm::tuning(view, transport::allowed_names(config_.transports));
  view = tuning.view;
  selector_ = std::make_unique<algorithm::Selector>(view, std::move(tuning.rules), algorithm::registry());
  selector_->log_score_map();
  p2p_builders_[0] =
      std::make_unique<algorithm::Selector>(view, std::vector<algorithm::TuneRule>{}, std::vector{&kSendAlgorithm});
  p2p_builders_[1] =
      std::make_unique<algorithm::Selector>(view, std::vector<algorithm::TuneRule>{}, std::vector{&kRecvAlgorithm});
  bootstrap_->barrier();
  HCOMM_INFO(INIT, "communicator ready: rank %d of %d", rank_, size_);
}

bool Communicator::any_rank_oversubscribed() {
  const uint8_t mine = oversubscribed_;
  std::vector<uint8_t> all(size_);
  bootstrap_->allgather(&mine, sizeof mine, all.data());
  return std::ranges::any_of(all, [](uint8_t o) { return o != 0; });
}

// Rank 0 logs the hierarchy once.
void Communicator::log_topology() const {
  if (rank_ != 0 || !log::enabled(HCOMM_LOG_INFO, log::TOPO)) return;
  auto list = [](const std::vector<int>& ranks) {
    std::string out;
    for (int r : ranks) out += (out.empty() ? "" : ",") + std::to_string(r);
    return out;
  };
  HCOMM_INFO(TOPO, "%d ranks on %d hosts; leaders %s; %zu rails", size_, topology_.nhosts(),
             list(topology_.leaders()).c_str(), topology_.rails().size());
  for (int h = 0; h < topology_.nhosts(); ++h)
    HCOMM_INFO(TOPO, "host %d (%s): ranks %s", h, topology_.rank(topology_.host_ranks(h).front()).host.hostname,
               list(topology_.host_ranks(h)).c_str());
}

const std::string& Communicator::topology_json() {
  topology_json_ = topology::json::write(topology::to_json(topology_, peers_->all_links()));
  return topology_json_;
}

Communicator::~Communicator() {
  running_.clear();
  links_.reset();
  peers_.reset();
  bootstrap_->close();
}

void Communicator::check_usable() const {
  if (!broken_.empty())
    HCOMM_THROW(HCOMM_ERR_REMOTE, "the communicator is unusable after an earlier failure: %s; destroy it",
                broken_.c_str());
}

void Communicator::fail(const Error& e) {
  // A peer that left may have left because the ranks' arguments differ: say so.
  if (e.code() == HCOMM_ERR_REMOTE) {
    try {
      check_.last_look(*peers_);
    } catch (const Error& why) {
      if (why.code() == HCOMM_ERR_INVALID_ARGUMENT) {
        broken_ = why.what();
        running_.clear();
        throw why;
      }
    }
  }
  broken_ = e.what();
  running_.clear();
  throw e;
}

bool Communicator::KeyLess::operator()(const Key& a, const Key& b) const {
  if (a.fixed != b.fixed) return a.fixed < b.fixed;
  for (size_t i = 0; i < a.layout.size(); ++i)
    if (!std::ranges::equal(a.layout[i], b.layout[i]))
      return std::ranges::lexicographical_compare(a.layout[i], b.layout[i]);
  return false;
}

bool Communicator::Key::operator==(const Key& o) const {
  if (fixed != o.fixed) return false;
  for (size_t i = 0; i < layout.size(); ++i)
    if (!std::ranges::equal(layout[i], o.layout[i])) return false;
  return true;
}

// Spans into the caller's arrays: a lookup allocates nothing.
Communicator::Key Communicator::key_of(const hcomm_coll_args_t& a) const {
  // Every field given: zeroing the key first took a string instruction that
  // cost more than the rest of the lookup.
  const auto span = [&](size_t i) {
    const size_t* array = a.*kLayoutFields[i];
    return array ? std::span<const size_t>(array, static_cast<size_t>(size_)) : std::span<const size_t>();
  };
  return Key{.fixed = {a.coll, a.count, a.dtype, a.op, a.root, a.in_place, a.mem_kind},
             .layout = {span(0), span(1), span(2), span(3)}};
}

const std::shared_ptr<const exec::Schedule>& Communicator::schedule_for(const hcomm_coll_args_t& args) {
  Key key = key_of(args);
  if (last_schedule_ && key == last_key_) return last_schedule_;
  auto it = schedules_.find(key);
  if (it == schedules_.end()) {
    // The stored key and the schedule's args point into the entry's copies.
    auto entry = std::make_shared<Cached>();
    hcomm_coll_args_t a = args;
    for (size_t i = 0; i < kLayoutFields.size(); ++i) {
      if (key.layout[i].empty()) continue;
      entry->layout[i].assign(key.layout[i].begin(), key.layout[i].end());
      a.*kLayoutFields[i] = entry->layout[i].data();
      key.layout[i] = entry->layout[i];
    }
    auto schedule = selector_->build(a);
    schedule->agreement = ArgumentCheck::agreement(a, size_, schedule->algorithm);
    entry->schedule = std::move(schedule);
    HCOMM_DEBUG(ALGO, "built %s schedule for %s of %llu bytes: %zu steps", entry->schedule->algorithm.c_str(),
                coll_name(a.coll), static_cast<unsigned long long>(algorithm::message_bytes(a, size_)),
                entry->schedule->steps.size());
    it = schedules_.emplace(key, std::move(entry)).first;
  }
  last_key_ = it->first;
  // Shares the entry, so that the arrays live as long as the schedule is used.
  last_schedule_ = std::shared_ptr<const exec::Schedule>(it->second, it->second->schedule.get());
  return last_schedule_;
}

const std::shared_ptr<const exec::Schedule>& Communicator::p2p_schedule_for(bool send, const hcomm_coll_args_t& args) {
  auto& schedule = p2p_schedules_[{send, args.root, args.count, args.dtype}];
  if (!schedule) schedule = p2p_builders_[send ? 0 : 1]->build(args);
  return schedule;
}

void Communicator::force_algorithm(hcomm_coll_t coll, const std::string& algorithm) {
  selector_->force(coll, algorithm);
  // Schedules of the earlier choice go; operations in flight keep theirs.
  std::erase_if(schedules_, [&](const auto& entry) { return std::get<0>(entry.first.fixed) == coll; });
  last_schedule_.reset();
}

const hcomm_algorithm_desc_t* Communicator::query_algorithm(const hcomm_coll_args_t& args) const {
  return selector_->pick(args);
}

// Scratch buffers are kept and reused: no allocation or page faults per call.
std::vector<uint8_t>* Communicator::acquire_scratch(uint64_t bytes) {
  auto best = std::find_if(free_scratch_.begin(), free_scratch_.end(), [&](auto* b) { return b->size() >= bytes; });
  if (best != free_scratch_.end()) {
    auto* b = *best;
    free_scratch_.erase(best);
    return b;
  }
  if (!free_scratch_.empty()) {  // grow a free one rather than add another
    auto* b = free_scratch_.back();
    free_scratch_.pop_back();
    b->resize(bytes);
    return b;
  }
  return &scratch_pool_.emplace_back(bytes);
}

// Building a schedule sends nothing: its errors (no algorithm serves the
// call) leave the communicator usable.
exec::Operation* Communicator::start(const hcomm_coll_args_t& args, const void* send, void* recv) {
  check_usable();
  // A collective's tags tell calls apart by their number modulo kSeqsInFlight.
  if (running_.size() >= exec::kSeqsInFlight)
    HCOMM_THROW(HCOMM_ERR_INVALID_ARGUMENT,
                "%s: %zu operations are in flight on this communicator, the most it "
                "takes; complete some (hcomm_wait) before starting more",
                coll_name(args.coll), running_.size());
  const auto& schedule = schedule_for(args);
  std::vector<uint8_t>* scratch = schedule->scratch_bytes ? acquire_scratch(schedule->scratch_bytes) : nullptr;
  exec::Buffers buffers{send, recv, scratch ? scratch->data() : nullptr};
  const uint32_t seq = seq_++;
  const uint64_t signature = check_.record(seq, schedule->agreement);
  return launch(schedule, buffers, seq, exec::collective_tag_base(seq, signature), scratch, std::nullopt, signature);
}

exec::Operation* Communicator::send(const hcomm_coll_args_t& args, const void* buf, int tag) {
  return start_p2p(true, args, {buf, nullptr, nullptr}, tag);
}

exec::Operation* Communicator::recv(const hcomm_coll_args_t& args, void* buf, int tag) {
  return start_p2p(false, args, {buf, buf, nullptr}, tag);  // SEND resolves to RECV where unused
}

exec::Operation* Communicator::start_p2p(bool send, const hcomm_coll_args_t& args, exec::Buffers buffers, int tag) {
  check_usable();
  const auto& schedule = p2p_schedule_for(send, args);
  const uint32_t number = (send ? sent_ : received_)[{args.root, tag}]++;
  const P2P call{.send = send, .peer = args.root, .tag = tag, .number = number, .count = args.count};
  return launch(schedule, buffers, number, exec::p2p_tag_base(tag, number), nullptr, call);
}

exec::Operation* Communicator::launch(const std::shared_ptr<const exec::Schedule>& schedule, exec::Buffers buffers,
                                      uint32_t seq, uint64_t tag_base, std::vector<uint8_t>* scratch,
                                      std::optional<P2P> p2p, uint64_t signature) {
  if (idle_.empty()) idle_.emplace_back();
  Running& entry = idle_.front();
  // An idle entry keeps its last operation, to run again for a call of the same schedule.
  exec::Operation* op = nullptr;
  if (entry.op && entry.op->schedule() == schedule.get()) {
    op = &*entry.op;
    op->restart(buffers, seq, tag_base, signature);
  } else {
    op = &entry.op.emplace(schedule, buffers, seq, tag_base, size_, signature);
  }
  entry.scratch = scratch;
  entry.p2p = p2p;
  running_.splice(running_.end(), idle_, idle_.begin());
  try {
    progress_all();
  } catch (const Error& e) {
    fail(e);
  }
  return op;
}

void Communicator::progress_all() {
  try {
    links_->progress();
  } catch (const Error& e) {
    blame_oldest(e);
  }
  for (Running& r : running_) {
    try {
      r.op->advance(*links_);
    } catch (const Error& e) {
      if (!r.p2p) throw;
      // A message that does not fit its receive is the caller's mistake: say which.
      const bool mismatch = !r.p2p->send && e.code() == HCOMM_ERR_INVALID_ARGUMENT;
      throw Error(e.code(), describe(r) + " failed: " + e.what() +
                                (mismatch ? "; a receive's count must equal the count of the send it matches" : ""));
    }
  }
}

void Communicator::check_arguments(bool ask) {
  exec::MappedIO* mapped = links_->mapped();
  if (mapped && mapped->calls().mismatched >= 0) {
    // Mapped calls run one at a time in call order: the first one not done is it.
    auto r = std::find_if(running_.begin(), running_.end(),
                          [](const Running& x) { return !x.p2p && x.op->schedule()->mapped && !x.op->done(); });
    const int peer = std::exchange(mapped->calls().mismatched, -1);
    check_.resolve(*peers_, peer, r == running_.end() ? seq_ - 1 : r->op->seq(),
                   std::min(config_.timeout_s, kResolveWithin));
  }
  if (!ask) return;
  std::vector<int> peers;
  for (const Running& r : running_)
    if (!r.p2p && !r.op->done()) r.op->pending_peer_ranks(peers);
  check_.probe(*peers_, peers);
}

std::list<Communicator::Running>::iterator Communicator::find(const exec::Operation* op) {
  return std::find_if(running_.begin(), running_.end(), [&](const Running& r) { return &*r.op == op; });
}

std::string Communicator::describe(const Running& r) const {
  if (!r.p2p) return r.op->describe();
  const P2P& p = *r.p2p;
  return format("%s of %zu elements %s rank %d with tag %d (message %u of that tag)", p.send ? "send" : "receive",
                p.count, p.send ? "to" : "from", p.peer, p.tag, p.number);
}

// Errors found outside any one step (a lost link, a peer gone) fail the
// oldest operation in flight, which is the one waiting on it.
void Communicator::blame_oldest(const Error& e) {
  if (running_.empty()) throw e;
  throw Error(e.code(), describe(running_.front()) + " failed: " + e.what());
}

void Communicator::release(exec::Operation* op) {
  auto it = find(op);
  if (it == running_.end()) return;
  if (it->scratch) free_scratch_.push_back(it->scratch);
  if (!it->op->done()) it->op.reset();  // a mapped call that began holds the communicator's turn
  idle_.splice(idle_.begin(), running_, it);
}

bool Communicator::test(exec::Operation* op) {
  check_usable();
  try {
    if (!op->done()) progress_all();
    if (!op->done()) check_arguments(false);
  } catch (const Error& e) {
    fail(e);
  }
  if (!op->done()) return false;
  release(op);
  return true;
}

void Communicator::wait(exec::Operation* op) {
  check_usable();
  try {
    // The clock is read only once the operation stops moving: a call whose
    // steps keep completing never reads it.
    uint64_t events = 0;
    bool idle_since_known = false;
    bool stall_reported = false;
    bool cpu_shared = false;  // a mapped peer last waited on this rank's CPU
    int flag_spins = 0;
    Clock::time_point last_event, next_peer_check = Clock::time_point::max();
    const auto timeout = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(config_.timeout_s));
    exec::MappedIO* mapped = oversubscribed_ ? nullptr : links_->mapped();
    while (!op->done()) {
      progress_all();
      if (op->done()) break;
      uint64_t now_events = 0;
      for (const Running& r : running_) now_events += r.op->events();
      if (now_events != events) {
        events = now_events;
        idle_since_known = false;
        flag_spins = 0;
        if (stall_reported) {
          bootstrap_->report_stall({}, 0);  // it moves again
          stall_reported = false;
        }
        continue;
      }
      check_arguments(false);
      // A raised flag makes a step complete on the next round; the bound
      // keeps the deadline in force should it not.
      if (mapped && flag_spins < kMaxFlagSpins && mapped->spin(kFlagLooks)) {
        ++flag_spins;
        continue;
      }
      auto now = Clock::now();
      if (!idle_since_known) {
        idle_since_known = true;
        last_event = now;
        cpu_shared = mapped && mapped->shares_cpu();
        shared_idles_ = cpu_shared ? shared_idles_ + 1 : 0;
        if (next_peer_check == Clock::time_point::max()) next_peer_check = now + kPeerCheckInterval;
        continue;
      }
      auto idle = now - last_event;
      const bool shared = oversubscribed_ || cpu_shared;
      if (idle < (shared ? Clock::duration::zero() : Clock::duration(kSpinFor))) continue;
      const bool probe = cpu_shared && (shared_idles_ - 1) % kSharedProbeEvery == 0;
      if (!probe && idle < (shared ? Clock::duration(kSharedYieldFor) : Clock::duration(kYieldFor))) {
        sched_yield();
      } else {
        links_->wait(kSleepUs);
        now = Clock::now();
      }
      if (now >= next_peer_check) {
        try {
          links_->check_peers();
        } catch (const Error& e) {
          blame_oldest(e);
        }
        check_arguments(true);
        next_peer_check = now + kPeerCheckInterval;
      }
      if (!stall_reported && now - last_event > timeout / kStallReportParts) {
        std::vector<int> waits_on;
        op->pending_peer_ranks(waits_on);
        bootstrap_->report_stall(waits_on, config_.timeout_s / kStallReportParts);
        stall_reported = true;
      }
      if (now - last_event > timeout) {
        // The peers waited on may themselves wait: name the ranks the waits
        // lead to, where the rendezvous found them.
        const std::optional<std::vector<int>> held_up_by = bootstrap_->held_up_by();
        const std::string waiting =
            held_up_by && !held_up_by->empty()
                ? format(
                      "held up by %s (%s no progress while the ranks this call waits on waited for %s: a stopped "
                      "or stuck process, or one that did not make this call)",
                      rank_list(*held_up_by).c_str(), held_up_by->size() == 1 ? "it made" : "they made",
                      held_up_by->size() == 1 ? "it" : "them")
                : "waiting on " + op->pending_peers();
        HCOMM_THROW(HCOMM_ERR_TIMEOUT, "%s: no progress for %g s (HCOMM_TIMEOUT, or the config's timeout_s); %s",
                    describe(*find(op)).c_str(), config_.timeout_s, waiting.c_str());
      }
    }
  } catch (const Error& e) {
    fail(e);
  }
  release(op);
}

}  // namespace hcomm::comm

