#include "poller.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>

#include "hcomm/plugin/util.hpp"

namespace hcomm::tcp {

namespace {

void control(int epoll, int op, int fd, EventHandler* handler, uint32_t events) {
  epoll_event ev{};
  ev.events = events;
  ev.data.ptr = handler;
  if (::epoll_ctl(epoll, op, fd, &ev) != 0)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_SYSTEM, "tcp: epoll_ctl on descriptor %d failed: %s", fd, std::strerror(errno));
}

// epoll_pwait2 takes a timeout in nanoseconds; kernels before 5.11 lack it,
// and there a millisecond epoll_wait (rounded up) serves.
int wait_for(int epoll, std::span<epoll_event> out, int64_t timeout_us) {
  static std::atomic<bool> have_pwait2{true};
  int max = static_cast<int>(out.size());
  if (timeout_us <= 0) return ::epoll_wait(epoll, out.data(), max, 0);
  if (have_pwait2.load(std::memory_order_relaxed)) {
    timespec ts{.tv_sec = static_cast<time_t>(timeout_us / 1000000),
                .tv_nsec = static_cast<long>(timeout_us % 1000000) * 1000};
    int n = ::epoll_pwait2(epoll, out.data(), max, &ts, nullptr);
    if (n >= 0 || errno != ENOSYS) return n;
    have_pwait2.store(false, std::memory_order_relaxed);
  }
  int64_t ms = (timeout_us + 999) / 1000;
  return ::epoll_wait(epoll, out.data(), max, static_cast<int>(std::min<int64_t>(ms, INT32_MAX)));
}

}  // namespace

Poller::Poller() : epoll_(::epoll_create1(EPOLL_CLOEXEC)) {
  if (!epoll_.valid()) HCOMM_PLUGIN_THROW(HCOMM_ERR_SYSTEM, "tcp: epoll_create1 failed: %s", std::strerror(errno));
}

void Poller::add(int fd, EventHandler* handler, uint32_t events) {
  control(epoll_.get(), EPOLL_CTL_ADD, fd, handler, events);
}

void Poller::modify(int fd, EventHandler* handler, uint32_t events) {
  control(epoll_.get(), EPOLL_CTL_MOD, fd, handler, events);
}

void Poller::remove(int fd) noexcept { ::epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, fd, nullptr); }

std::span<epoll_event> Poller::wait(std::span<epoll_event> out, int64_t timeout_us) {
  int n = wait_for(epoll_.get(), out, timeout_us);
  if (n >= 0) return out.first(static_cast<size_t>(n));
  if (errno == EINTR) return {};  // a signal: the caller simply looks again
  HCOMM_PLUGIN_THROW(HCOMM_ERR_SYSTEM, "tcp: epoll_wait failed: %s", std::strerror(errno));
}

}  // namespace hcomm::tcp
