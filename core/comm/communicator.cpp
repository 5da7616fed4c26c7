#include "core/comm/communicator.hpp"

#include <sched.h>
#include <sys/random.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include "core/common/error.hpp"
#include "core/common/log.hpp"
#include "core/common/settings.hpp"

namespace hcomm::comm {

namespace {

using Clock = std::chrono::steady_clock;

// Wait policy: a blocking wake-up across cores costs 25-50 us, so an idle
// rank spins first, then yields the core (other ranks may need it when they
// outnumber the cores), and only then sleeps in the transports.
// When this host's ranks outnumber its cores, a spinning rank steals the core
// of the rank it waits for, so it sleeps almost at once (a wake-up on a
// shared core is cheap).
constexpr auto kSpinFor = std::chrono::microseconds(50);
constexpr auto kYieldFor = std::chrono::microseconds(2000);
constexpr auto kOversubscribedYieldFor = std::chrono::microseconds(20);
constexpr int64_t kSleepUs = 1000;

bool host_oversubscribed() {
  std::string local = settings::raw("HCOMM_LOCAL_SIZE");
  cpu_set_t cpus;
  if (local.empty() || sched_getaffinity(0, sizeof cpus, &cpus) != 0) return false;
  return settings::get_int("HCOMM_LOCAL_SIZE") > CPU_COUNT(&cpus);
}
constexpr auto kPeerCheckInterval = std::chrono::milliseconds(100);

std::array<uint8_t, 16> random_key() {
  std::array<uint8_t, 16> key{};
  if (getrandom(key.data(), key.size(), 0) != static_cast<ssize_t>(key.size()))
    HCOMM_THROW(HCOMM_ERR_SYSTEM, "getrandom failed: %s", strerror(errno));
  return key;
}

}  // namespace

Communicator::Communicator(std::unique_ptr<bootstrap::Bootstrap> bootstrap)
    : bootstrap_(std::move(bootstrap)),
      rank_(bootstrap_->rank()),
      size_(bootstrap_->size()),
      timeout_s_(settings::get_double("HCOMM_TIMEOUT")),
      oversubscribed_(host_oversubscribed()) {
  log::set_rank(rank_);
  // Rank 0's random key authenticates this communicator's transport connections.
  std::array<uint8_t, 16> key = random_key();
  std::vector<uint8_t> keys(key.size() * size_);
  bootstrap_->allgather(key.data(), key.size(), keys.data());
  std::copy(keys.begin(), keys.begin() + key.size(), key.begin());

  peers_ = std::make_unique<Peers>(*bootstrap_, key);
  hcomm_comm_view_t view{.size = sizeof(hcomm_comm_view_t), .rank = rank_, .nranks = size_, .link = peers_->link_model()};
  selector_ = std::make_unique<algorithm::Selector>(view, algorithm::parse_tune(settings::get_string("HCOMM_TUNE")),
                                                    algorithm::registry(), settings::get_size("HCOMM_CHUNK_BYTES"));
  bootstrap_->barrier();
  HCOMM_INFO(INIT, "communicator ready: rank %d of %d", rank_, size_);
}

Communicator::~Communicator() {
  running_.clear();
  peers_.reset();
  bootstrap_->close();
}

void Communicator::check_usable() const {
  if (!broken_.empty())
    HCOMM_THROW(HCOMM_ERR_REMOTE, "the communicator is unusable after an earlier failure: %s; destroy it",
                broken_.c_str());
}

void Communicator::fail(const Error& e) {
  broken_ = e.what();
  running_.clear();
  throw e;
}

std::shared_ptr<const exec::Schedule> Communicator::schedule_for(const hcomm_coll_args_t& a) {
  Key key{a.coll, a.count, a.dtype, a.op, a.root, a.in_place, a.mem_kind};
  auto it = schedules_.find(key);
  if (it != schedules_.end()) return it->second;
  auto s = selector_->build(a);
  HCOMM_DEBUG(ALGO, "built %s schedule for %s of %zu elements: %zu steps", s->algorithm.c_str(),
              algorithm::coll_name(a.coll), a.count, s->steps.size());
  return schedules_.emplace(key, std::move(s)).first->second;
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

exec::Operation* Communicator::start(const hcomm_coll_args_t& args, const void* send, void* recv) {
  check_usable();
  try {
    auto schedule = schedule_for(args);
    std::vector<uint8_t>* scratch = schedule->scratch_bytes ? acquire_scratch(schedule->scratch_bytes) : nullptr;
    exec::Buffers buffers{args.in_place ? recv : send, recv, scratch ? scratch->data() : nullptr};
    running_.push_back(
        {std::make_unique<exec::Operation>(schedule, buffers, seq_, exec::collective_tag_base(seq_), size_), scratch});
    ++seq_;
    exec::Operation* op = running_.back().op.get();
    progress_all();
    return op;
  } catch (const Error& e) {
    fail(e);
  }
}

void Communicator::progress_all() {
  try {
    peers_->progress();
  } catch (const Error& e) {
    blame_oldest(e);
  }
  for (Running& r : running_) r.op->advance(*peers_);
}

// Errors found outside any one step (a lost link, a peer gone) fail the
// oldest collective in flight, which is the one waiting on it.
void Communicator::blame_oldest(const Error& e) {
  if (running_.empty()) throw e;
  throw Error(e.code(), running_.front().op->describe() + " failed: " + e.what());
}

void Communicator::release(exec::Operation* op) {
  auto it = std::find_if(running_.begin(), running_.end(), [&](const Running& r) { return r.op.get() == op; });
  if (it == running_.end()) return;
  if (it->scratch) free_scratch_.push_back(it->scratch);
  running_.erase(it);
}

bool Communicator::test(exec::Operation* op) {
  check_usable();
  try {
    if (!op->done()) progress_all();
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
    uint64_t events = 0;
    auto last_event = Clock::now(), next_peer_check = last_event + kPeerCheckInterval;
    const auto timeout = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s_));
    for (;;) {
      progress_all();
      if (op->done()) break;
      uint64_t now_events = 0;
      for (const Running& r : running_) now_events += r.op->events();
      auto now = Clock::now();
      if (now_events != events) {
        events = now_events;
        last_event = now;
        continue;
      }
      auto idle = now - last_event;
      if (idle < (oversubscribed_ ? Clock::duration::zero() : Clock::duration(kSpinFor))) continue;
      if (idle < (oversubscribed_ ? Clock::duration(kOversubscribedYieldFor) : Clock::duration(kYieldFor))) {
        sched_yield();
      } else {
        peers_->wait(kSleepUs);
        now = Clock::now();
      }
      if (now >= next_peer_check) {
        try {
          peers_->check_peers();
        } catch (const Error& e) {
          blame_oldest(e);
        }
        next_peer_check = now + kPeerCheckInterval;
      }
      if (now - last_event > timeout)
        HCOMM_THROW(HCOMM_ERR_TIMEOUT, "%s: no progress for HCOMM_TIMEOUT=%g s; waiting on %s",
                    op->describe().c_str(), timeout_s_, op->pending_peers().c_str());
    }
  } catch (const Error& e) {
    fail(e);
  }
  release(op);
}

}  // namespace hcomm::comm
