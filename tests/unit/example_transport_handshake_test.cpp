// The example vendor transport's handshake (examples/vendor-transport) as an
// eavesdropper sees it: three nets of one communicator in this process, rank
// 0's connection to rank 1 relayed and recorded on the way, then the recorded
// bytes replayed to rank 2, which rank 0 has not reached yet. The key is
// never in what rank 0 sent, and the replay proves nothing.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/bootstrap/socket.hpp"
#include "examples/vendor-transport/example_net.hpp"
#include "hcomm/plugin/pending.hpp"

namespace example {
namespace {

using hcomm::bootstrap::Deadline;

std::string& logged() {
  static std::string text;
  return text;
}

const hcomm_plugin_services_t kServices = {
    .size = sizeof(hcomm_plugin_services_t),
    .log = [](hcomm_log_level_t, const char*, const char* message) { logged() += std::string(message) + "\n"; },
    .log_enabled = [](hcomm_log_level_t level, const char*) { return level <= HCOMM_LOG_WARN ? 1 : 0; },
    .get_setting = [](const char*) { return ""; },
    .set_error = [](const char*) {},
    .abi_minor = HCOMM_PLUGIN_ABI_MINOR,
};

// Calls `step` until it returns true; false after `seconds`.
bool poll_until(double seconds, const std::function<bool()>& step) {
  const Deadline limit = Deadline::after(seconds);
  while (!limit.expired())
    if (step()) return true;
  return false;
}

// A non-blocking Unix stream socket connected to the abstract name of `to`.
Fd connect_to(const Address& to) {
  Fd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0));
  sockaddr_un sa{.sun_family = AF_UNIX, .sun_path = {}};
  std::memcpy(sa.sun_path, to.name, to.name_len);
  const auto len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + to.name_len);
  EXPECT_EQ(::connect(fd.get(), reinterpret_cast<const sockaddr*>(&sa), len), 0) << std::strerror(errno);
  return fd;
}

// Moves what `from` has to `to`; appends it to `record` if given.
void relay(int from, int to, std::vector<uint8_t>* record) {
  uint8_t buf[4096];
  for (ssize_t n; (n = ::recv(from, buf, sizeof buf, MSG_DONTWAIT)) > 0;) {
    if (record) record->insert(record->end(), buf, buf + n);
    ASSERT_EQ(::send(to, buf, static_cast<size_t>(n), MSG_NOSIGNAL), n);
  }
}

// A relay on an abstract name of its own between one client and `to`,
// recording what the client sends; moved on by step().
class RecordingRelay {
 public:
  explicit RecordingRelay(const Address& to) : to_(to), listener_(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0)) {
    const sa_family_t family = AF_UNIX;
    EXPECT_EQ(::bind(listener_.get(), reinterpret_cast<const sockaddr*>(&family), sizeof family), 0);
    EXPECT_EQ(::listen(listener_.get(), 4), 0);
    sockaddr_un sa{};
    socklen_t len = sizeof sa;
    ::getsockname(listener_.get(), reinterpret_cast<sockaddr*>(&sa), &len);
    address_ = to;
    address_.name_len = static_cast<uint32_t>(len - offsetof(sockaddr_un, sun_path));
    std::memcpy(address_.name, sa.sun_path, address_.name_len);
  }
  const Address& address() const { return address_; }
  void step() {
    if (!client_) {
      client_.reset(::accept4(listener_.get(), nullptr, nullptr, SOCK_NONBLOCK));
      if (client_) server_ = connect_to(to_);
      return;
    }
    relay(client_.get(), server_.get(), &recorded);
    relay(server_.get(), client_.get(), nullptr);
  }
  std::vector<uint8_t> recorded;

 private:
  Address to_;
  Fd listener_;
  Address address_{};
  Fd client_, server_;
};

class ExampleHandshake : public ::testing::Test {
 protected:
  void SetUp() override {
    logged().clear();
    services_.set(&kServices);
    for (int rank = 0; rank < 3; ++rank) {
      hcomm_transport_open_args_t args{.size = sizeof args, .rank = rank, .nranks = 3, .comm_key = {}};
      std::copy(key_.begin(), key_.end(), args.comm_key);
      nets_[rank] = std::make_unique<Net>(services_, 64, args);
    }
  }
  void progress_all() {
    for (auto& net : nets_) net->progress();
  }

  const std::array<uint8_t, 16> key_{3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3};
  Services services_;
  std::array<std::unique_ptr<Net>, 3> nets_;
};

TEST_F(ExampleHandshake, KeyNeverTravelsAndAReplayProvesNothing) {
  RecordingRelay relay(nets_[1]->address());
  Endpoint& ep01 = nets_[0]->connect(1, relay.address());
  Endpoint& ep10 = nets_[1]->connect(0, nets_[0]->address());
  ASSERT_TRUE(poll_until(3, [&] {
    progress_all();
    relay.step();
    return ep01.ready() && ep10.ready();
  })) << logged();
  ASSERT_FALSE(relay.recorded.empty());
  EXPECT_EQ(std::search(relay.recorded.begin(), relay.recorded.end(), key_.begin(), key_.end()), relay.recorded.end())
      << "the communicator's key went over the connection";

  // Rank 2 has not heard from rank 0: the recorded bytes, replayed to it,
  // must not pass for rank 0.
  Fd replay = connect_to(nets_[2]->address());
  ASSERT_EQ(::send(replay.get(), relay.recorded.data(), relay.recorded.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(relay.recorded.size()));
  const bool closed = poll_until(2, [&] {
    progress_all();
    uint8_t sink[256];
    return ::recv(replay.get(), sink, sizeof sink, MSG_DONTWAIT) == 0;
  });
  EXPECT_TRUE(closed) << "rank 2 kept the replayed connection open";
  EXPECT_NE(logged().find("did not prove the communicator's key"), std::string::npos) << logged();
}

// Connections that say nothing, more than the bound on pending ones
// (hcomm/plugin/pending.hpp), must not lock a real rank out: the oldest
// silent ones make room, and rank 0 still connects to rank 1.
TEST_F(ExampleHandshake, SilentConnectionsBeyondTheBoundDoNotLockRanksOut) {
  const size_t silent = hcomm::plugin::kPendingLimits.total + 64;
  std::vector<Fd> strangers;
  for (size_t i = 0; i < silent; ++i) {
    strangers.push_back(connect_to(nets_[1]->address()));
    if (i % 32 == 31) progress_all();  // the listener's backlog is bounded too
  }
  progress_all();
  // The oldest strangers were dropped: their connections read as closed.
  size_t dropped = 0;
  for (const Fd& fd : strangers) {
    uint8_t byte;
    dropped += ::recv(fd.get(), &byte, 1, MSG_DONTWAIT) == 0;
  }
  EXPECT_GE(dropped, silent - hcomm::plugin::kPendingLimits.per_source);
  Endpoint& ep01 = nets_[0]->connect(1, nets_[1]->address());
  Endpoint& ep10 = nets_[1]->connect(0, nets_[0]->address());
  EXPECT_TRUE(poll_until(3, [&] {
    progress_all();
    return ep01.ready() && ep10.ready();
  })) << logged();
  EXPECT_NE(logged().find("too many are waiting for a handshake"), std::string::npos) << logged();
}

}  // namespace
}  // namespace example
