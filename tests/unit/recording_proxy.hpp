// A TCP relay that records what its clients send: an eavesdropper's view of
// a handshake, for the tests that replay one. It accepts connections on
// 127.0.0.1, connects each to `to` and relays both ways on its own thread
// until the proxy is destroyed.
#pragma once

#include <netinet/in.h>
#include <poll.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "core/bootstrap/socket.hpp"

namespace hcomm::test {

class RecordingProxy {
 public:
  explicit RecordingProxy(const bootstrap::Endpoint& to)
      : to_(to),
        listener_(bootstrap::listen_on(bootstrap::Endpoint{htonl(INADDR_LOOPBACK), 0})),
        address_(bootstrap::local_endpoint(listener_.get())),
        thread_([this] { run(); }) {}
  ~RecordingProxy() {
    stop_ = true;
    thread_.join();
  }
  RecordingProxy(const RecordingProxy&) = delete;
  RecordingProxy& operator=(const RecordingProxy&) = delete;

  // Where clients connect instead of `to`.
  const bootstrap::Endpoint& address() const { return address_; }
  // Every byte the first client has sent so far.
  std::vector<uint8_t> recorded() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return pairs_.empty() ? std::vector<uint8_t>{} : pairs_.front().recorded;
  }

 private:
  struct Pair {
    bootstrap::Fd client;
    bootstrap::Fd server;
    std::vector<uint8_t> recorded;
  };

  void run() {
    using namespace bootstrap;
    std::vector<pollfd> fds;
    uint8_t buffer[65536];
    while (!stop_) {
      fds.assign(1, {listener_.get(), POLLIN, 0});
      for (const Pair& p : pairs_) {
        fds.push_back({p.client.get(), POLLIN, 0});
        fds.push_back({p.server.get(), POLLIN, 0});
      }
      if (::poll(fds.data(), fds.size(), 50) <= 0) continue;
      std::lock_guard<std::mutex> lock(mutex_);
      for (size_t i = 0; i < pairs_.size(); ++i) {
        Pair& p = pairs_[i];
        if (fds[1 + 2 * i].revents && p.client) {
          ptrdiff_t n = recv_some(p.client.get(), buffer, sizeof buffer);
          if (n > 0) p.recorded.insert(p.recorded.end(), buffer, buffer + n);
          if (n < 0 || send_all(p.server.get(), buffer, static_cast<size_t>(n), Deadline::after(5)) != IoStatus::kDone)
            p.client.reset(), p.server.reset();
        }
        if (fds[2 + 2 * i].revents && p.server) {
          ptrdiff_t n = recv_some(p.server.get(), buffer, sizeof buffer);
          if (n < 0 || send_all(p.client.get(), buffer, static_cast<size_t>(n), Deadline::after(5)) != IoStatus::kDone)
            p.client.reset(), p.server.reset();
        }
      }
      if (fds[0].revents) {
        Endpoint peer;
        int err = 0;
        Pair p{accept_connection(listener_.get(), &peer), Fd(), {}};
        if (p.client) p.server = connect_with_retry(to_, Deadline::after(5), &err);
        if (p.server) pairs_.push_back(std::move(p));
      }
    }
  }

  const bootstrap::Endpoint to_;
  bootstrap::Fd listener_;
  const bootstrap::Endpoint address_;
  std::atomic<bool> stop_{false};
  mutable std::mutex mutex_;
  std::vector<Pair> pairs_;
  std::thread thread_;
};

}  // namespace hcomm::test
