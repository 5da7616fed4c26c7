#include "bench_link.hpp"

#include <poll.h>
#include <sched.h>
#include <sys/random.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "check_services.hpp"
#include "failure.hpp"

namespace hcomm::tbench {

namespace {

using tcheck::CheckServices;
using tcheck::format;

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

void write_all(int fd, const void* data, size_t len) {
  const auto* p = static_cast<const uint8_t*>(data);
  while (len > 0) {
    ssize_t n = ::write(fd, p, len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw BenchError(format("control channel: write failed: %s", std::strerror(errno)));
    p += n;
    len -= static_cast<size_t>(n);
  }
}

void read_all(int fd, void* data, size_t len) {
  auto* p = static_cast<uint8_t*>(data);
  while (len > 0) {
    ssize_t n = ::read(fd, p, len);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) throw BenchError("control channel: the other process ended");
    if (n < 0) throw BenchError(format("control channel: read failed: %s", std::strerror(errno)));
    p += n;
    len -= static_cast<size_t>(n);
  }
}

}  // namespace

Link::Link(const tcheck::PluginLibrary& plugin, int rank, int control_fd, double timeout_s)
    : api_(plugin.api()), rank_(rank), control_fd_(control_fd), timeout_s_(timeout_s) {
  CheckServices::instance().configure(rank, plugin.header());
  require("init", [&] { return api_.init(CheckServices::instance().table(), &context_); });
  // The communicator's key: rank 0 draws it, rank 1 receives it.
  hcomm_transport_open_args_t args{.size = sizeof args, .rank = rank, .nranks = 2, .comm_key = {}};
  if (rank == 0) {
    if (::getrandom(args.comm_key, sizeof args.comm_key, 0) != sizeof args.comm_key)
      throw BenchError("getrandom failed for the communicator key");
    write_all(control_fd_, args.comm_key, sizeof args.comm_key);
  } else {
    read_all(control_fd_, args.comm_key, sizeof args.comm_key);
  }
  require("open", [&] { return api_.open(context_, &args, &net_); });
  std::vector<uint8_t> peer_address;
  exchange_addresses(&peer_address);
  connect(peer_address);
  barrier();
}

Link::~Link() {
  if (endpoint_) api_.ep_close(endpoint_);
  if (net_) api_.close(net_);
  if (context_) api_.finalize(context_);
}

template <class F>
void Link::require(const char* what, F&& call) {
  CheckServices::instance().clear_error();
  hcomm_result_t rc = call();
  if (rc != HCOMM_SUCCESS)
    throw BenchError(format("rank %d: %s returned %s: %s", rank_, what, tcheck::result_name(rc).c_str(),
                            CheckServices::instance().last_error().c_str()));
}

void Link::exchange_addresses(std::vector<uint8_t>* peer_address) {
  std::vector<uint8_t> mine(HCOMM_TRANSPORT_MAX_ADDRESS);
  size_t len = mine.size();
  require("address", [&] { return api_.address(net_, mine.data(), &len); });
  uint32_t wire_len = static_cast<uint32_t>(len);
  write_all(control_fd_, &wire_len, sizeof wire_len);
  write_all(control_fd_, mine.data(), len);
  read_all(control_fd_, &wire_len, sizeof wire_len);
  if (wire_len > HCOMM_TRANSPORT_MAX_ADDRESS) throw BenchError(format("peer address of %u bytes", wire_len));
  peer_address->resize(wire_len);
  read_all(control_fd_, peer_address->data(), wire_len);
  hcomm_link_score_t score{};
  require("score",
          [&] { return api_.score(net_, mine.data(), len, peer_address->data(), peer_address->size(), &score); });
  if (!score.reachable) throw BenchError(format("rank %d: score says the other process is unreachable", rank_));
}

void Link::connect(const std::vector<uint8_t>& peer_address) {
  require("connect",
          [&] { return api_.connect(net_, 1 - rank_, peer_address.data(), peer_address.size(), &endpoint_); });
  for (double begin = now_s();;) {
    progress();
    int ready = 0;
    require("ep_ready", [&] { return api_.ep_ready(endpoint_, &ready); });
    if (ready) return;
    check_deadline(begin, "connecting");
  }
}

void Link::progress() {
  require("progress", [&] { return api_.progress(net_); });
}

void Link::check_deadline(double since, const char* what) const {
  if (now_s() - since > timeout_s_)
    throw BenchError(format("rank %d: %s took more than %.0f s", rank_, what, timeout_s_));
}

template <class F>
void* Link::post(const char* what, F&& call) {
  for (double begin = now_s();;) {
    void* request = nullptr;
    require(what, [&] { return call(&request); });
    if (request) return request;
    ++retries_;
    progress();
    check_deadline(begin, "retrying a null request");
  }
}

void* Link::isend(const void* buf, size_t len, uint64_t tag) {
  return post("isend", [&](void** request) { return api_.isend(endpoint_, buf, len, tag, request); });
}

void* Link::irecv(void* buf, size_t len, uint64_t tag) {
  return post("irecv", [&](void** request) { return api_.irecv(endpoint_, buf, len, tag, request); });
}

size_t Link::wait(void* request) {
  for (double begin = now_s();;) {
    int done = 0;
    size_t bytes = 0;
    require("test", [&] { return api_.test(request, &done, &bytes); });
    if (done) return bytes;
    progress();
    ::sched_yield();  // costs little when a core is free, and lets the peer run when none is
    check_deadline(begin, "waiting for a message");
  }
}

void Link::wait_all(std::vector<void*>& requests) {
  for (void* request : requests) wait(request);
  requests.clear();
}

void Link::barrier() {
  const char token = 'b';
  write_all(control_fd_, &token, 1);
  for (double begin = now_s();;) {
    progress();
    pollfd control{.fd = control_fd_, .events = POLLIN, .revents = 0};
    if (::poll(&control, 1, 1) > 0) break;
    check_deadline(begin, "the barrier");
  }
  char got = 0;
  read_all(control_fd_, &got, 1);
}

}  // namespace hcomm::tbench
