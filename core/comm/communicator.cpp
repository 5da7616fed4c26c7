#include "core/comm/communicator.hpp"

#include <sched.h>
#include <sys/random.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <climits>
#include <cstring>

#include "core/algorithm/link_models.hpp"
#include "core/algorithm/tuning.hpp"
#include "core/comm/stream_order.hpp"
#include "core/common/error.hpp"
#include "core/common/json.hpp"
#include "core/common/log.hpp"
#include "core/common/names.hpp"
#include "core/common/settings.hpp"
#include "core/topology/gather.hpp"
#include "core/topology/topo_file.hpp"
#include "core/transport/transport.hpp"

namespace hcomm::comm {

namespace {

using Clock = std::chrono::steady_clock;

// More ranks on this host (of this communicator, or of the job as the
// launcher tells it) than CPUs this rank may run on.
bool host_oversubscribed(int ranks_here, const bootstrap::Locality& job) {
  cpu_set_t cpus;
  if (sched_getaffinity(0, sizeof cpus, &cpus) != 0) return false;
  return std::max(ranks_here, job.size) > CPU_COUNT(&cpus);
}
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

constexpr size_t kNonceBytes = 16;

// A fresh random nonce of every rank, in rank order.
std::vector<uint8_t> gather_nonces(bootstrap::Bootstrap& bootstrap) {
  std::array<uint8_t, kNonceBytes> mine{};
  if (getrandom(mine.data(), mine.size(), 0) != static_cast<ssize_t>(mine.size()))
    HCOMM_THROW(HCOMM_ERR_SYSTEM, "getrandom failed: %s", strerror(errno));
  std::vector<uint8_t> all(mine.size() * bootstrap.size());
  bootstrap.allgather(mine.data(), mine.size(), all.data());
  return all;
}

// The communicator's id: the ranks' nonces hashed (FNV-1a).
uint64_t id_of(const std::vector<uint8_t>& nonces) {
  uint64_t h = 0xCBF29CE484222325ull;
  for (uint8_t b : nonces) h = (h ^ b) * 0x100000001B3ull;
  return h;
}

}  // namespace

Communicator::Communicator(std::unique_ptr<bootstrap::Bootstrap> bootstrap, const Config& config,
                           const Parent* parent)
    : bootstrap_(std::move(bootstrap)),
      rank_(bootstrap_->rank()),
      size_(bootstrap_->size()),
      config_(config),
      check_(rank_, size_),
      topology_(topology::gather(*bootstrap_)),
      oversubscribed_(host_oversubscribed(static_cast<int>(topology_.host_ranks(topology_.host_of().at(rank_)).size()),
                                          bootstrap_->locality())) {
  const log::RankScope scope(rank_);
  // The ranks' nonces make the communicator's id and the key of connections of its own.
  const std::vector<uint8_t> nonces = gather_nonces(*bootstrap_);
  check_.identify(id_of(nonces));
  links_ = make_links(parent, nonces);
  idle_wait_ = std::make_unique<exec::IdleWait>(*links_, oversubscribed_);
  log_topology();
  std::vector<hcomm_link_score_t> scores(size_);
  for (int p = 0; p < size_; ++p)
    if (p != rank_) scores[p] = links_->score(p);
  const algorithm::LinkModels models = algorithm::agree_link_models(*bootstrap_, topology_, scores);
  hcomm_comm_view_t view{.size = sizeof(hcomm_comm_view_t),
                         .rank = rank_,
                         .nranks = size_,
                         .link = models.link,
                         .nnodes = topology_.nhosts(),
                         .node_of = topology_.host_of().data(),
                         .intra = models.intra,
                         .inter = models.inter,
                         .chunk_bytes = config_.chunk_bytes};
  links_->describe_mapped(view);
  view.mapped = view.flags & HCOMM_VIEW_MAPPED ? models.mapped : models.link;
  if (any_rank_oversubscribed()) algorithm::add_oversubscription(view);
  algorithm::Tuning tuning = algorithm::tuning(view, transport::allowed_names(config_.transports));
  schedules_ = std::make_unique<ScheduleCache>(tuning.view, std::move(tuning.rules));
  schedules_->log_score_map();
  if (config_.p2p_matching_any)
    matching_ = std::make_unique<p2p::Matching>(*links_, *schedules_, rank_, size_, check_.id());
  bootstrap_->barrier();
  HCOMM_INFO(INIT, "communicator ready: rank %d of %d", rank_, size_);
}

std::unique_ptr<links::Links> Communicator::make_links(const Parent* parent, const std::vector<uint8_t>& nonces) {
  using Share = Config::SplitShare;
  uint32_t offer = 0;  // the contexts this rank could take, when it may share
  if (parent && parent->links.connections().transports() == config_.transports &&
      (config_.split_share == Share::kOn ||
       (config_.split_share == Share::kAuto && parent->links.connections().any_thread())))
    offer = parent->links.connections().free_contexts();
  std::vector<uint32_t> offers(size_);
  bootstrap_->allgather(&offer, sizeof offer, offers.data());
  for (uint32_t o : offers) offer &= o;
  if (offer)
    return std::make_unique<links::Links>(parent->links, parent->members, std::countr_zero(offer), *bootstrap_,
                                          topology_);
  if (parent && config_.split_share != Share::kOff)
    HCOMM_INFO(INIT, "rank %d: the new communicator connects anew (%s)", rank_,
               parent->links.connections().transports() != config_.transports ? "its transports differ from its parent's"
               : config_.split_share == Share::kAuto && !parent->links.connections().any_thread()
                   ? "a transport of its parent's connections takes calls from one thread only (HCOMM_SPLIT_SHARE=on "
                     "shares them where the communicators run on one thread at a time)"
                   : "no tag context of its parent's connections is free on every member");
  // The key that authenticates this communicator's transport connections:
  // derived from the job's secret and rank 0's fresh nonce, so it never travels.
  const std::array<uint8_t, 16> key = bootstrap_->derive_key(nonces.data(), kNonceBytes);
  return std::make_unique<links::Links>(*bootstrap_, key, topology_, config_.transports, config_.timeout_s);
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
  const log::RankScope scope(rank_);
  nlohmann::ordered_json doc = topology::to_json(topology_, links_->all_links());
  doc["connections"] = {{"inherited", links_->inherited()}, {"tag_context", links_->context()}};
  topology_json_ = json::write(doc);
  return topology_json_;
}

Communicator::~Communicator() {
  const log::RankScope scope(rank_);
  stream_order_.reset();  // its calls done, its thread gone
  leave_links();
  running_.clear();
  links_.reset();
  bootstrap_->close();
}

// Operations in flight complete first, as MPI_Comm_free has them do. Where
// another communicator moves data on the same connections after this one is
// gone, receives this one posted must not land in freed memory: what its
// standing receives write into outlives it, and operations that failed stop
// the connections.
void Communicator::leave_links() {
  std::string unfinished;
  while (!running_.empty() && unfinished.empty()) {
    try {
      wait(&*running_.front().op);
    } catch (const Error& e) {
      unfinished = e.what();  // fail() dropped the rest (and stopped shared connections)
    }
  }
  if (matching_ && unfinished.empty() && broken_.empty()) {
    // Sends and matched receives in matching mode complete too; receives no
    // message matched are dropped.
    class Busy final : public Awaited {
     public:
      explicit Busy(const p2p::Matching& m) : m_(m) {}
      bool done() override { return !m_.busy(); }
      std::string describe() const override { return "point to point still under way as the communicator goes"; }
      void pending_peer_ranks(std::vector<int>&) const override {}

     private:
      const p2p::Matching& m_;
    } busy(*matching_);
    try {
      wait_until(busy);
    } catch (const Error& e) {
      unfinished = e.what();
    }
  }
  if (links_->sharers() == 1) return;
  struct Leftovers {
    std::shared_ptr<void> check, matching;
  };
  std::shared_ptr<void> matching_leftovers = matching_ ? matching_->leftovers() : nullptr;
  std::shared_ptr<void> check_leftovers = check_.leftovers();
  links_->leave(matching_leftovers ? std::make_shared<Leftovers>(Leftovers{check_leftovers, matching_leftovers})
                                   : check_leftovers,
                unfinished.empty() ? ""
                                   : format("rank %d destroyed a communicator sharing them whose operations did not "
                                            "complete (%s)",
                                            rank_, unfinished.c_str()));
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
      check_.last_look(*links_);
    } catch (const Error& why) {
      if (why.code() == HCOMM_ERR_INVALID_ARGUMENT) {
        broken_ = why.what();
        abandon_running();
        throw why;
      }
    }
  }
  broken_ = e.what();
  abandon_running();
  throw e;
}

// Operations that will not complete are dropped; where another communicator
// shares the connections, their receives may still land, so no one may move
// data on them any more.
void Communicator::abandon_running() {
  if (links_->sharers() > 1 && std::ranges::any_of(running_, [](const Running& r) { return !r.op->done(); }))
    links_->poison(format("rank %d: a communicator sharing them failed with operations in flight (%s)", rank_,
                          broken_.c_str()));
  running_.clear();
}

std::unique_ptr<Communicator> Communicator::split(int color, int key, const Config& config) {
  const log::RankScope scope(rank_);
  check_usable();
  struct Choice {
    int32_t color, key;
  };
  const Choice mine{color, key};
  std::vector<Choice> all(size_);
  bootstrap_->allgather(&mine, sizeof mine, all.data());
  std::vector<int> members;  // ranks here of this rank's colour, in their order there
  for (int r = 0; r < size_; ++r)
    if (all[r].color == color) members.push_back(r);
  std::ranges::stable_sort(members, [&](int a, int b) { return all[a].key < all[b].key; });
  const bool member = color != HCOMM_SPLIT_NOCOLOR;
  hcomm_unique_id_t id{};
  if (member && members.front() == rank_) bootstrap::Bootstrap::make_unique_id(&id);
  std::vector<hcomm_unique_id_t> ids(size_);
  bootstrap_->allgather(&id, sizeof id, ids.data());
  if (!member) return nullptr;
  const int new_rank = static_cast<int>(std::ranges::find(members, rank_) - members.begin());
  HCOMM_INFO(INIT, "rank %d: split with colour %d and key %d: rank %d of %zu", rank_, color, key, new_rank,
             members.size());
  const Parent parent{*links_, members};
  return std::make_unique<Communicator>(
      bootstrap::Bootstrap::from_unique_id(ids[members.front()], static_cast<int>(members.size()), new_rank), config,
      &parent);
}

std::unique_ptr<Communicator> Communicator::create_group(const std::vector<int>& members, int tag,
                                                         const Config& config) {
  const log::RankScope scope(rank_);
  check_usable();
  const int new_rank = static_cast<int>(std::ranges::find(members, rank_) - members.begin());
  // On the heap: should the exchange fail, its requests may still read or
  // write it, so it is then left allocated.
  auto id = std::make_unique<hcomm_unique_id_t>();
  struct Message {
    int peer;
    void* request = nullptr;
    bool done = false;
  };
  std::vector<Message> messages;
  if (new_rank == 0) {
    bootstrap::Bootstrap::make_unique_id(id.get());
    for (size_t i = 1; i < members.size(); ++i) messages.push_back({members[i]});
  } else {
    messages.push_back({members.front()});
  }
  const uint64_t message_tag = exec::service_tag(links_->context(), static_cast<uint32_t>(tag));
  const auto deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(config_.timeout_s));
  try {
    for (;;) {
      bool all = true;
      for (Message& m : messages) {
        if (m.done) continue;
        if (!m.request)
          m.request = new_rank == 0 ? links_->isend(m.peer, id.get(), sizeof *id, message_tag)
                                    : links_->irecv(m.peer, id.get(), sizeof *id, message_tag);
        size_t bytes = 0;
        m.done = m.request && links_->test(m.peer, m.request, &bytes);
        all = all && m.done;
      }
      if (all) break;
      links_->check_peers();
      if (Clock::now() > deadline)
        HCOMM_THROW(HCOMM_ERR_TIMEOUT,
                    "hcomm_comm_create_group with tag %d: rank %d had no word from rank %d, the group's first, "
                    "within %g s (HCOMM_TIMEOUT); every rank of the group must call it with the same ranks and tag",
                    tag, rank_, members.front(), config_.timeout_s);
      links_->progress();
      links_->wait(1000);
    }
  } catch (const Error& e) {
    (void)id.release();
    if (links_->sharers() > 1)
      links_->poison(format("rank %d: hcomm_comm_create_group failed with its messages in flight (%s)", rank_,
                            e.what()));
    fail(e);
  }
  HCOMM_INFO(INIT, "rank %d: group of %zu ranks with tag %d: rank %d", rank_, members.size(), tag, new_rank);
  const Parent parent{*links_, members};
  return std::make_unique<Communicator>(
      bootstrap::Bootstrap::from_unique_id(*id, static_cast<int>(members.size()), new_rank), config, &parent);
}

void Communicator::force_algorithm(hcomm_coll_t coll, const std::string& algorithm) {
  schedules_->force(coll, algorithm);
}

const hcomm_algorithm_desc_t* Communicator::query_algorithm(const hcomm_coll_args_t& args) const {
  return schedules_->pick(args);
}

// Building a schedule sends nothing: its errors (no algorithm serves the
// call) leave the communicator usable.
exec::Operation* Communicator::start(const hcomm_coll_args_t& args, const void* send, void* recv,
                                     std::shared_ptr<const device::UserOp> user_op) {
  const log::RankScope scope(rank_);
  check_usable();
  // A collective's tags tell calls apart by their number modulo kSeqsInFlight.
  if (running_.size() >= exec::kSeqsInFlight)
    HCOMM_THROW(HCOMM_ERR_INVALID_ARGUMENT,
                "%s: %zu operations are in flight on this communicator, the most it "
                "takes; complete some (hcomm_wait) before starting more",
                coll_name(args.coll), running_.size());
  const auto& schedule = schedules_->collective(args);
  std::vector<uint8_t>* scratch = schedule->scratch_bytes ? scratch_.acquire(schedule->scratch_bytes) : nullptr;
  exec::Buffers buffers{send, recv, scratch ? scratch->data() : nullptr};
  const uint32_t seq = seq_++;
  const uint64_t signature = check_.record(seq, schedule->agreement);
  return launch(schedule, buffers, seq, exec::collective_tag_base(seq, signature, links_->context()), scratch,
                std::nullopt, signature, std::move(user_op));
}

exec::Operation* Communicator::send(const hcomm_coll_args_t& args, const void* buf, int tag) {
  return start_p2p(true, args, {buf, nullptr, nullptr}, tag);
}

exec::Operation* Communicator::recv(const hcomm_coll_args_t& args, void* buf, int tag) {
  return start_p2p(false, args, {buf, buf, nullptr}, tag);  // SEND resolves to RECV where unused
}

exec::Operation* Communicator::start_p2p(bool send, const hcomm_coll_args_t& args, exec::Buffers buffers, int tag) {
  const log::RankScope scope(rank_);
  check_usable();
  const auto& schedule = schedules_->p2p(send, args);
  const uint32_t number = (send ? sent_ : received_)[{args.root, tag}]++;
  const P2P call{.send = send, .peer = args.root, .tag = tag, .number = number, .count = args.count};
  return launch(schedule, buffers, number, exec::p2p_tag_base(tag, number, links_->context()), nullptr, call);
}

p2p::Matching& Communicator::matching() {
  if (!matching_)
    HCOMM_THROW(HCOMM_ERR_INTERNAL, "rank %d: point to point in matching mode on a communicator in exact mode", rank_);
  return *matching_;
}

p2p::Message* Communicator::send_matching(const void* buf, uint64_t bytes, int peer, int tag, bool synchronous) {
  const log::RankScope scope(rank_);
  check_usable();
  try {
    p2p::Message* m = matching().send(buf, bytes, peer, tag, synchronous);
    progress_all();
    return m;
  } catch (const Error& e) {
    fail(e);
  }
}

p2p::Message* Communicator::recv_matching(void* buf, uint64_t room, int source, int tag) {
  const log::RankScope scope(rank_);
  check_usable();
  try {
    progress_all();  // what arrived meanwhile matches first, in order
    return matching().recv(buf, room, source, tag);
  } catch (const Error& e) {
    fail(e);
  }
}

p2p::Message* Communicator::recv_matching(void* buf, uint64_t room, p2p::Arrival* taken) {
  const log::RankScope scope(rank_);
  check_usable();
  try {
    p2p::Message* m = matching().recv(buf, room, taken);
    progress_all();
    return m;
  } catch (const Error& e) {
    fail(e);
  }
}

bool Communicator::probe(int source, int tag, bool blocking, hcomm_status_t* status, p2p::Arrival** taken) {
  const log::RankScope scope(rank_);
  check_usable();
  p2p::Matching& m = matching();
  // Done once a message is there, or none can come any more.
  class Probe final : public Awaited {
   public:
    Probe(Communicator& c, int source, int tag) : c_(c), source_(source), tag_(tag) {}
    bool done() override {
      c_.probing_ = true;
      c_.progress_all();
      c_.probing_ = false;
      return c_.matching_->find(source_, tag_) || !c_.matching_->gone(source_).empty();
    }
    std::string describe() const override {
      return "probe for a message from " + p2p::who(source_) + " with " + p2p::which(tag_);
    }
    void pending_peer_ranks(std::vector<int>& out) const override {
      for (int r = 0; r < c_.size_; ++r)
        if (r != c_.rank_ && (source_ == p2p::kAny || r == source_)) out.push_back(r);
    }

   private:
    Communicator& c_;
    int source_, tag_;
  } probe(*this, source, tag);
  try {
    if (!probe.done()) {
      if (!blocking) return false;
      wait_until(probe);
    }
  } catch (const Error& e) {
    probing_ = false;
    fail(e);
  }
  const p2p::Arrival* a = nullptr;
  if (taken)
    a = *taken = m.take(source, tag);
  else
    a = m.find(source, tag);
  // A probe of a rank whose link closed fails alone, as a receive does.
  if (!a) HCOMM_THROW(HCOMM_ERR_REMOTE, "%s: none can come: %s", probe.describe().c_str(), m.gone(source).c_str());
  if (status) *status = hcomm_status_t{.source = a->source, .tag = a->tag, .bytes = a->bytes, .cancelled = 0};
  return true;
}

void Communicator::finish(p2p::Message* m, hcomm_status_t* status) {
  if (status) *status = m->status;
  const hcomm_result_t code = m->error;
  const std::string text = code ? m->error_text : "";
  matching_->release(m);
  if (code) throw Error(code, text);
}

bool Communicator::test(p2p::Message* m, hcomm_status_t* status) {
  const log::RankScope scope(rank_);
  check_usable();
  try {
    if (!matching_->done(*m)) progress_all();
  } catch (const Error& e) {
    fail(e);
  }
  if (!matching_->done(*m)) return false;
  finish(m, status);
  return true;
}

class Communicator::AwaitedMessage final : public Awaited {
 public:
  AwaitedMessage(const p2p::Matching& matching, const p2p::Message& m) : matching_(matching), m_(m) {}
  bool done() override { return matching_.done(m_); }
  std::string describe() const override { return matching_.describe(m_); }
  void pending_peer_ranks(std::vector<int>& out) const override { matching_.pending_peer_ranks(m_, out); }

 private:
  const p2p::Matching& matching_;
  const p2p::Message& m_;
};

void Communicator::wait(p2p::Message* m, hcomm_status_t* status) {
  const log::RankScope scope(rank_);
  check_usable();
  AwaitedMessage awaited(*matching_, *m);
  try {
    wait_until(awaited);
  } catch (const Error& e) {
    fail(e);
  }
  finish(m, status);
}

void Communicator::cancel(p2p::Message* m) {
  const log::RankScope scope(rank_);
  check_usable();
  matching_->cancel(m);
}

void Communicator::cancel(exec::Operation* op) {
  auto it = find(op);
  if (it == running_.end()) return;  // done already
  if (!it->p2p)
    HCOMM_THROW(HCOMM_ERR_INVALID_ARGUMENT,
                "hcomm_cancel: the request is a collective's (%s), which cannot be "
                "cancelled; wait for it",
                it->op->describe().c_str());
  if (!it->p2p->send)
    HCOMM_THROW(HCOMM_ERR_UNSUPPORTED,
                "hcomm_cancel: %s is posted in the transport, which cannot withdraw it (exact matching mode); a "
                "communicator in matching mode any (HCOMM_P2P_MATCHING=any, or the config's p2p_matching) can "
                "cancel its receives",
                describe(*it).c_str());
}

exec::Operation* Communicator::launch(const std::shared_ptr<const exec::Schedule>& schedule, exec::Buffers buffers,
                                      uint32_t seq, uint64_t tag_base, std::vector<uint8_t>* scratch,
                                      std::optional<P2P> p2p, uint64_t signature,
                                      std::shared_ptr<const device::UserOp> user_op) {
  if (idle_.empty()) idle_.emplace_back();
  Running& entry = idle_.front();
  // An idle entry keeps its last operation, to run again for a call of the same schedule.
  exec::Operation* op = nullptr;
  if (entry.op && entry.op->schedule() == schedule.get()) {
    op = &*entry.op;
    op->restart(buffers, seq, tag_base, signature, std::move(user_op));
  } else {
    op = &entry.op.emplace(schedule, buffers, seq, tag_base, size_, signature, std::move(user_op));
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
  if (matching_) matching_->progress(probing_);
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
    check_.resolve(*links_, peer, r == running_.end() ? seq_ - 1 : r->op->seq(),
                   std::min(config_.timeout_s, kResolveWithin));
  }
  if (!ask) return;
  std::vector<int> peers;
  for (const Running& r : running_)
    if (!r.p2p && !r.op->done()) r.op->pending_peer_ranks(peers);
  check_.probe(*links_, peers);
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

void Communicator::release(exec::Operation* op, hcomm_status_t* status) {
  auto it = find(op);
  if (it == running_.end()) return;
  if (status) {
    const bool received = it->p2p && !it->p2p->send;
    *status = received ? hcomm_status_t{.source = it->p2p->peer,
                                        .tag = it->p2p->tag,
                                        .bytes = it->p2p->count * it->op->schedule()->args.dtype_size,
                                        .cancelled = 0}
                       : hcomm_status_t{.source = HCOMM_ANY_SOURCE, .tag = HCOMM_ANY_TAG, .bytes = 0, .cancelled = 0};
  }
  if (it->scratch) scratch_.release(it->scratch);
  if (!it->op->done()) it->op.reset();  // a mapped call that began holds the communicator's turn
  idle_.splice(idle_.begin(), running_, it);
}

bool Communicator::test(exec::Operation* op, hcomm_status_t* status) {
  const log::RankScope scope(rank_);
  check_usable();
  try {
    if (!op->done()) progress_all();
    if (!op->done()) check_arguments(false);
  } catch (const Error& e) {
    fail(e);
  }
  if (!op->done()) return false;
  release(op, status);
  return true;
}

std::string Communicator::Awaited::pending_peers() const {
  std::vector<int> ranks;
  pending_peer_ranks(ranks);
  return ranks.empty() ? "no peer" : rank_list(ranks);
}

class Communicator::AwaitedOperation final : public Awaited {
 public:
  AwaitedOperation(Communicator& c, exec::Operation* op) : c_(c), op_(op) {}
  bool done() override { return op_->done(); }
  std::string describe() const override { return c_.describe(*c_.find(op_)); }
  void pending_peer_ranks(std::vector<int>& out) const override { op_->pending_peer_ranks(out); }
  std::string pending_peers() const override { return op_->pending_peers(); }
  [[noreturn]] void blame(const Error& e) override { c_.blame_oldest(e); }

 private:
  Communicator& c_;
  exec::Operation* op_;
};

void Communicator::wait(exec::Operation* op, hcomm_status_t* status) {
  const log::RankScope scope(rank_);
  check_usable();
  AwaitedOperation awaited(*this, op);
  try {
    wait_until(awaited);
  } catch (const Error& e) {
    fail(e);
  }
  release(op, status);
}

class Communicator::AwaitedAny final : public Awaited {
 public:
  AwaitedAny(Communicator& c, std::span<exec::Operation* const> ops, const std::function<bool()>& also_done)
      : c_(c), ops_(ops), also_done_(also_done) {}
  bool done() override {
    return also_done_() || std::ranges::any_of(ops_, [](const exec::Operation* op) { return op->done(); });
  }
  std::string describe() const override {
    for (const exec::Operation* op : ops_)
      if (!op->done()) return c_.describe(*c_.find(op));
    return "stream-ordered operations";
  }
  void pending_peer_ranks(std::vector<int>& out) const override {
    for (const exec::Operation* op : ops_)
      if (!op->done()) op->pending_peer_ranks(out);
  }
  [[noreturn]] void blame(const Error& e) override { c_.blame_oldest(e); }

 private:
  Communicator& c_;
  std::span<exec::Operation* const> ops_;
  const std::function<bool()>& also_done_;
};

void Communicator::wait_any(std::span<exec::Operation* const> ops, const std::function<bool()>& also_done) {
  const log::RankScope scope(rank_);
  check_usable();
  AwaitedAny awaited(*this, ops, also_done);
  try {
    wait_until(awaited);
  } catch (const Error& e) {
    fail(e);
  }
}

StreamOrder& Communicator::stream_order(const device::Accelerator& accelerator) {
  if (!stream_order_) stream_order_ = std::make_unique<StreamOrder>(*this, accelerator);
  return *stream_order_;
}

std::unique_lock<std::mutex> Communicator::host_turn() {
  return stream_order_ ? stream_order_->host_turn() : std::unique_lock<std::mutex>();
}

hcomm_result_t Communicator::stream_error(std::string* text) const {
  return stream_order_ ? stream_order_->error(text) : HCOMM_SUCCESS;
}

void Communicator::wait_until(Awaited& awaited) {
  uint64_t events = 0;
  bool stall_reported = false;
  Clock::time_point next_peer_check = Clock::time_point::max();
  const auto timeout = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(config_.timeout_s));
  const auto events_now = [&] {
    uint64_t n = matching_ ? matching_->events() : 0;
    for (const Running& r : running_) n += r.op->events();
    return n;
  };
  const auto progress = [&] {
    try {
      progress_all();
    } catch (const Error& e) {
      if (!running_.empty()) throw;  // the oldest operation took the blame
      awaited.blame(e);
    }
  };
  idle_wait_->start();
  while (!awaited.done()) {
    progress();
    if (awaited.done()) break;
    const uint64_t now_events = events_now();
    if (now_events != events) {
      events = now_events;
      idle_wait_->moved();
      if (stall_reported) {
        bootstrap_->report_stall({}, 0);  // it moves again
        stall_reported = false;
      }
      continue;
    }
    check_arguments(false);
    const std::optional<Clock::time_point> idle_now = idle_wait_->round();
    if (!idle_now) continue;
    const Clock::time_point now = *idle_now, last_event = idle_wait_->idle_since();
    if (next_peer_check == Clock::time_point::max()) next_peer_check = last_event + kPeerCheckInterval;
    if (now >= next_peer_check) {
      // What came while this rank slept may be a peer's last message:
      // that peer may have finished and left, and a question written to
      // it would fail this call. Peers are looked at only while nothing moves.
      progress();
      if (awaited.done() || events_now() != events) continue;
      try {
        links_->check_peers();
      } catch (const Error& e) {
        awaited.blame(e);
      }
      check_arguments(true);
      next_peer_check = now + kPeerCheckInterval;
    }
    if (!stall_reported && now - last_event > timeout / kStallReportParts) {
      std::vector<int> waits_on;
      awaited.pending_peer_ranks(waits_on);
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
              : "waiting on " + awaited.pending_peers();
      HCOMM_THROW(HCOMM_ERR_TIMEOUT, "%s: no progress for %g s (HCOMM_TIMEOUT, or the config's timeout_s); %s",
                  awaited.describe().c_str(), config_.timeout_s, waiting.c_str());
    }
  }
}

}  // namespace hcomm::comm

