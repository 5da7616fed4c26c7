#include "shared_state.hpp"

#include <linux/futex.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>

#include "failure.hpp"

namespace hcomm::tcheck {

namespace {

// Sleeps on a shared (not process-private) futex until woken or timed out.
void futex_wait(std::atomic<uint32_t>* word, uint32_t expected, double seconds) {
  timespec timeout{static_cast<time_t>(seconds), static_cast<long>((seconds - static_cast<time_t>(seconds)) * 1e9)};
  ::syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT, expected, &timeout, nullptr, 0);
}

void futex_wake_all(std::atomic<uint32_t>* word) {
  ::syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE, INT32_MAX, nullptr, nullptr, 0);
}

// Bounds one futex sleep, so that an abort is seen even if its wake-up is lost.
constexpr double kMaxSleepSeconds = 0.05;

}  // namespace

static_assert(std::atomic<uint32_t>::is_always_lock_free, "the barrier needs address-free atomics");
static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t), "futex words are 32 bits");

void SharedBarrier::init(uint32_t parties) {
  arrived_.store(0);
  generation_.store(0);
  aborted_.store(0);
  parties_ = parties;
}

uint32_t SharedBarrier::arrive() {
  uint32_t generation = generation_.load(std::memory_order_acquire);
  if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == parties_) {
    arrived_.store(0, std::memory_order_relaxed);  // reset before release: the next round may start at once
    generation_.fetch_add(1, std::memory_order_acq_rel);
    futex_wake_all(&generation_);
  }
  return generation;
}

void SharedBarrier::throw_if_aborted() const {
  if (aborted_.load(std::memory_order_acquire) != 0) throw CheckFailure("stopped: another rank failed");
}

void SharedBarrier::wait(Deadline deadline) {
  uint32_t generation = arrive();
  while (generation_.load(std::memory_order_acquire) == generation) {
    throw_if_aborted();
    if (deadline.expired()) TCHECK_FAIL("barrier: not every rank arrived before the deadline");
    futex_wait(&generation_, generation, std::min(deadline.remaining(), kMaxSleepSeconds));
  }
}

void SharedBarrier::wait_polling(Deadline deadline, const std::function<void()>& poll) {
  uint32_t generation = arrive();
  while (generation_.load(std::memory_order_acquire) == generation) {
    throw_if_aborted();
    if (deadline.expired()) TCHECK_FAIL("barrier: not every rank arrived before the deadline");
    poll();
    ::sched_yield();
  }
}

void SharedBarrier::abort() {
  aborted_.store(1, std::memory_order_release);
  futex_wake_all(&generation_);
}

void RankSlot::set_phase(const char* text) { std::snprintf(phase, sizeof phase, "%s", text); }

void RankSlot::set_shm_files(const std::set<std::string>& files) {
  std::string lines;
  for (const std::string& file : files) {
    if (lines.size() + file.size() + 1 >= sizeof shm_files) break;  // a full list still names most leaks
    lines += file + "\n";
  }
  std::snprintf(shm_files, sizeof shm_files, "%s", lines.c_str());
}

std::vector<std::string> RankSlot::shm_file_list() const {
  std::vector<std::string> files;
  std::string lines(shm_files, strnlen(shm_files, sizeof shm_files));
  for (size_t begin = 0, end; (end = lines.find('\n', begin)) != std::string::npos; begin = end + 1)
    files.push_back(lines.substr(begin, end - begin));
  return files;
}

void RankSlot::finish(Outcome result, const char* text) {
  std::snprintf(detail, sizeof detail, "%s", text);
  outcome.store(static_cast<int>(result), std::memory_order_release);
}

void SharedState::report_failure(int rank) {
  int none = -1;
  first_failed_rank.compare_exchange_strong(none, rank);
  abort();
}

void SharedState::abort() {
  barrier.abort();
  survivors.abort();
}

SharedRegion::SharedRegion(int nranks, uint64_t seed, Deadline rank_deadline) {
  void* memory = ::mmap(nullptr, sizeof(SharedState), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED)
    TCHECK_FAIL("mmap of %zu shared bytes failed: %s", sizeof(SharedState), std::strerror(errno));
  state_ = new (memory) SharedState();
  state_->barrier.init(static_cast<uint32_t>(nranks));
  state_->survivors.init(static_cast<uint32_t>(nranks - 1));
  state_->nranks = nranks;
  state_->seed = seed;
  state_->deadline_ns = to_ns(rank_deadline.at());
  state_->first_failed_rank.store(-1);
  state_->event_ns.store(0);
  if (::getrandom(state_->comm_keys, sizeof state_->comm_keys, 0) != sizeof state_->comm_keys)
    TCHECK_FAIL("getrandom failed: %s", std::strerror(errno));
}

SharedRegion::~SharedRegion() {
  state_->~SharedState();
  ::munmap(state_, sizeof(SharedState));
}

}  // namespace hcomm::tcheck
