// epoll, with every registered descriptor pointing at the object that handles
// its events. Registrations are level-triggered.
#pragma once

#include <sys/epoll.h>

#include <chrono>
#include <cstdint>
#include <span>

#include "socket.hpp"

namespace hcomm::tcp {

using Clock = std::chrono::steady_clock;

class EventHandler {
 public:
  virtual ~EventHandler() = default;
  virtual void on_events(uint32_t events) = 0;
};

class Poller {
 public:
  Poller();

  void add(int fd, EventHandler* handler, uint32_t events);
  void modify(int fd, EventHandler* handler, uint32_t events);
  // Before the descriptor closes: a copy inherited by a child process would
  // otherwise keep it registered, pointing at a destroyed handler.
  void remove(int fd) noexcept;

  // Up to out.size() ready descriptors, waiting at most timeout_us (0: just look).
  std::span<epoll_event> wait(std::span<epoll_event> out, int64_t timeout_us);

 private:
  Fd epoll_;
};

}  // namespace hcomm::tcp
